package planner

import (
	"fmt"
	"strings"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner/logical"
	"github.com/sluice-sql/sluice/types"
)

// planPartitionBy plans `CREATE STREAM … AS SELECT … PARTITION BY e1, …`:
// each record is re-keyed by the PARTITION BY expressions, evaluated on
// the input row. No repartition topic is needed: the query is stateless,
// so the sink itself, which partitions by the encoded key, puts each
// record where its new key belongs.
//
// The key columns are the SELECT items that are exactly a PARTITION BY
// expression, in PARTITION BY order, named as those items are. A SELECT *
// may leave an expression unselected: it then becomes a key column of its
// own (named after the column or struct field, else KSQL_COL_n), and the
// old key columns move into the value after the source's value columns,
// as ksqlDB lays them out. PARTITION BY NULL gives records without a key.
func (p *planning) planPartitionBy() error {
	sel := p.sel
	if p.src.Kind != parser.KindStream {
		return posErr(p.cl.PartitionBy[0].Position(), fmt.Errorf("%w: PARTITION BY is only supported on streams; %s is a table", ErrUnsupported, p.src.Name))
	}
	if len(sel.GroupBy) > 0 || p.hasAggregates() {
		return posErr(p.cl.PartitionBy[0].Position(), fmt.Errorf("%w: PARTITION BY with GROUP BY or aggregate functions", ErrUnsupported))
	}
	if sel.Window != nil {
		return posErr(sel.Window.Pos, fmt.Errorf("%w: WINDOW clause requires a GROUP BY clause.", ErrInvalid))
	}
	if sel.Having != nil {
		return posErr(sel.Having.Position(), fmt.Errorf("%w: HAVING requires a GROUP BY", ErrInvalid))
	}
	if err := p.checkTargetKind(parser.KindStream); err != nil {
		return err
	}
	if _, ok := p.target.withProp("RETENTION"); ok {
		return posErr(sel.Pos, fmt.Errorf("%w: RETENTION bounds the state of an aggregation (GROUP BY); this query keeps no state", ErrInvalid))
	}
	exprs, err := p.partitionExprs()
	if err != nil {
		return err
	}
	if p.target == nil {
		return p.transientPartitionBy(exprs)
	}
	var nodes []exec.Node
	filter, err := p.whereNode(p.sc)
	if err != nil {
		return err
	}
	if filter != nil {
		nodes = append(nodes, filter)
	}
	keyItems, err := p.partitionKeyItems(exprs)
	if err != nil {
		return err
	}
	compiled := make([]expr.Compiled, len(p.items))
	for i, it := range p.items {
		if compiled[i], err = expr.Compile(it.expr, p.withFunctions(p.sc)); err != nil {
			return err
		}
	}
	for _, k := range keyItems {
		if containsMap(compiled[k].Type) {
			return posErr(p.items[k].pos, fmt.Errorf("%w: Map keys, including types that contain maps, are not supported as they may lead to unexpected behavior due to inconsistent serialization. Key column name: `%s`. Column type: %s. See https://github.com/confluentinc/ksql/issues/6621 for more.", ErrInvalid, p.items[k].name, compiled[k].Type))
		}
	}
	// As for a plain projection, a null-value record goes on as one
	// (re-keyed) unless a WHERE drops it.
	p.spec.KeepNullValues = filter == nil
	// The sink re-keys the records where the plan says so (the
	// repartition rule).
	p.partitionBy = partitionRekeyed(p.q.Logical)
	return p.finish(nodes, compiled, keyItems, exec.NotWindowed, 0, [2]int{-1, -1}, p.src.Partitions)
}

// transientPartitionBy plans a push query with PARTITION BY. Its rows go
// to the client, not to partitions, so only the layout matters: under
// SELECT * the row is laid out as a persistent query's would be (new key
// columns first, the old key after the values); an explicit SELECT list
// keeps its order and need not name the PARTITION BY expressions.
func (p *planning) transientPartitionBy(exprs []parser.Expr) error {
	for _, it := range p.items {
		if it.star {
			if _, err := p.partitionKeyItems(exprs); err != nil {
				return err
			}
			break
		}
	}
	return p.planStateless()
}

// partitionExprs checks the PARTITION BY expressions against the input
// and returns them, or none for PARTITION BY NULL.
func (p *planning) partitionExprs() ([]parser.Expr, error) {
	pb := p.cl.PartitionBy
	for _, e := range pb {
		if isNullLiteral(e) {
			if len(pb) > 1 {
				return nil, posErr(e.Position(), fmt.Errorf("%w: Cannot PARTITION BY multiple columns including NULL", ErrInvalid))
			}
			return nil, nil
		}
		var unresolved *parser.ColumnRef
		walkExpr(e, func(x parser.Expr) {
			if ref, ok := x.(*parser.ColumnRef); ok && unresolved == nil {
				if _, _, err := p.sc.Resolve(ref); err != nil {
					unresolved = ref
				}
			}
		})
		if unresolved != nil {
			// The usual mistake is naming an output alias: say why it
			// cannot work.
			return nil, posErr(unresolved.Pos, fmt.Errorf("%w: PARTITION BY column '%s' cannot be resolved. '%s' must be a column in the source schema since PARTITION BY is applied on the input.", ErrInvalid, unresolved.Name, unresolved.Name))
		}
		if containsAggregate(e) {
			return nil, posErr(e.Position(), fmt.Errorf("%w: PARTITION BY does not allow aggregate functions: %s", ErrInvalid, e))
		}
	}
	return pb, nil
}

// partitionKeyItems finds (or, under SELECT *, adds) the item holding
// each PARTITION BY expression, and reorders the items of a * so the old
// key columns follow the value columns. It returns the key items'
// positions in p.items.
func (p *planning) partitionKeyItems(exprs []parser.Expr) ([]int, error) {
	star := false
	for _, it := range p.items {
		star = star || it.star
	}
	keyOf := make([]int, len(exprs))
	missing := false
	for k, e := range exprs {
		want := p.canonical(e)
		keyOf[k] = -1
		for i, it := range p.items {
			if p.canonical(it.expr) != want {
				continue
			}
			if keyOf[k] >= 0 {
				first := p.items[keyOf[k]]
				return nil, posErr(it.pos, fmt.Errorf("%w: The projection contains a key column (`%s`) more than once, aliased as: %s and %s.", ErrInvalid, e, first.name, it.name))
			}
			keyOf[k] = i
		}
		if keyOf[k] < 0 && !star {
			missing = true
		}
	}
	if missing {
		return nil, p.partitionKeyMissing(exprs)
	}
	isKey := map[int]bool{}
	for _, i := range keyOf {
		if i >= 0 {
			isKey[i] = true
		}
	}
	// Rebuild the items: under *, the source's value columns come before
	// its old key columns, and a * column that is a new key leaves the
	// value (it is a key column now).
	var keys, values []item
	keyNames := make([]string, len(exprs))
	var pendingOldKeys []item
	flushOldKeys := func() {
		values = append(values, pendingOldKeys...)
		pendingOldKeys = nil
	}
	for i, it := range p.items {
		if !it.star {
			flushOldKeys()
		}
		switch {
		case isKey[i]:
			for k, j := range keyOf {
				if j == i {
					keyNames[k] = it.name
				}
			}
		case it.star && it.oldKey:
			pendingOldKeys = append(pendingOldKeys, it)
		default:
			values = append(values, it)
		}
	}
	flushOldKeys()
	taken := map[string]bool{}
	for _, it := range p.items {
		taken[strings.ToUpper(it.name)] = true
	}
	generated := 0
	for k, e := range exprs {
		name := keyNames[k]
		if keyOf[k] < 0 {
			name = partitionKeyName(e, taken, &generated)
		}
		keys = append(keys, item{expr: e, name: name, pos: e.Position()})
	}
	p.items = append(keys, values...)
	return seq(0, len(keys)), nil
}

// partitionKeyName names a key column for a PARTITION BY expression no
// SELECT item holds: a column keeps its name, a struct field takes the
// field's, anything else the next free KSQL_COL_n.
func partitionKeyName(e parser.Expr, taken map[string]bool, generated *int) string {
	switch x := e.(type) {
	case *parser.ColumnRef:
		return x.Name
	case *parser.Dereference:
		return x.Field
	}
	for {
		name := fmt.Sprintf("KSQL_COL_%d", *generated)
		*generated++
		if !taken[name] {
			taken[name] = true
			return name
		}
	}
}

func (p *planning) partitionKeyMissing(exprs []parser.Expr) error {
	texts := make([]string, len(exprs))
	for i, e := range exprs {
		texts[i] = qualified(e, p.src.Name).String()
	}
	noun, list := "expression", texts[0]
	if len(texts) > 1 {
		noun = "expressions"
		list = strings.Join(texts[:len(texts)-1], ", ") + " and " + texts[len(texts)-1]
	}
	return posErr(p.sel.Pos, fmt.Errorf("%w: The query used to build `%s` must include the partitioning %s %s in its projection (eg, SELECT %s...).", ErrKeyProjection, p.target.Name, noun, list, strings.Join(texts, ", ")))
}

// canonical is an expression's text with column references unqualified,
// so that `INPUT.ID` in PARTITION BY matches `ID` in SELECT.
func canonical(e parser.Expr) string {
	return qualified(e, "").String()
}

// canonical is e's text with each column reference naming the column it
// resolves to: over a join, L.K and R.K are different columns, and L.K
// is the * column L_K.
func (p *planning) canonical(e parser.Expr) string {
	if p.sc == nil || p.sc.join == nil {
		return canonical(e)
	}
	l := p.sc.join
	return parser.Rewrite(e, func(x parser.Expr) parser.Expr {
		ref, ok := x.(*parser.ColumnRef)
		if !ok {
			return nil
		}
		c := *ref
		c.Source = ""
		if i, _, err := l.resolve(ref); err == nil {
			c.Name = l.names[i]
		}
		return &c
	}).String()
}

// qualified rewrites every column reference to name the source given.
func qualified(e parser.Expr, source string) parser.Expr {
	return parser.Rewrite(e, func(x parser.Expr) parser.Expr {
		if ref, ok := x.(*parser.ColumnRef); ok {
			c := *ref
			c.Source = source
			return &c
		}
		return nil
	})
}

func isNullLiteral(e parser.Expr) bool {
	l, ok := e.(*parser.Literal)
	return ok && l.Kind == parser.LitNull
}

// containsMap reports whether t is or holds a MAP: such keys serialise
// with no fixed entry order, so equal keys could land in different
// partitions.
func containsMap(t types.Type) bool {
	switch t.Kind {
	case types.Map:
		return true
	case types.Array:
		return containsMap(*t.Elem)
	case types.Struct:
		for _, f := range t.Fields {
			if containsMap(f.Type) {
				return true
			}
		}
	}
	return false
}

// partitionKeyFormat is the key format of a PARTITION BY result, given the
// one inherited or stated (explicit) in WITH. Records without a key
// column have no key to format (NONE), and stating a format for them is
// a mistake; a keyless source's NONE gives way to KAFKA once there is a
// key. Unlike GROUP BY, several key columns never switch KAFKA to JSON on
// their own: ksqlDB refuses, and asks for a KEY_FORMAT.
func partitionKeyFormat(keyFormat string, explicit bool, keyCols []types.Column) (string, error) {
	switch {
	case len(keyCols) == 0:
		if explicit && keyFormat != "NONE" {
			return "", fmt.Errorf("%w: Key format specified for stream without key columns.", ErrInvalid)
		}
		return "NONE", nil
	case keyFormat == "NONE" && !explicit:
		keyFormat = "KAFKA"
	}
	if keyFormat == "KAFKA" && len(keyCols) > 1 {
		list := format.ColumnList(keyCols)
		return "", fmt.Errorf("%w: Key format does not support schema.\nformat: KAFKA\nschema: Persistence{columns=%s, features=[]}\nreason: The 'KAFKA' format only supports a single field. Got: %s", ErrInvalid, list, list)
	}
	return keyFormat, nil
}

// partitionRekeyed reports whether the plan re-keys the rows before the
// final projection (a persistent PARTITION BY).
func partitionRekeyed(n logical.Node) bool {
	for {
		if proj, ok := n.(*logical.Project); ok {
			return rekeyed(proj.Input)
		}
		ins := n.Inputs()
		if len(ins) != 1 {
			return false
		}
		n = ins[0]
	}
}
