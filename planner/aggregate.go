package planner

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner/logical"
	"github.com/sluice-sql/sluice/types"
)

// Internal column names of the aggregation stages.
const (
	groupColPrefix = "KSQL_INTERNAL_GROUP_"
	aggColPrefix   = "KSQL_INTERNAL_AGG_"
)

// planAggregate plans GROUP BY queries:
//
//	[source → filter → prepare(group keys, aggregate inputs) → repartition]
//	source → (prepare) → aggregate → [having] → project → sink
//
// The repartition step is skipped when the rows are already keyed by the
// grouping columns.
func (p *planning) planAggregate() error {
	if err := p.validateAggregate(); err != nil {
		return err
	}
	sel := p.sel
	fromTable := p.src.Kind == parser.KindTable
	groupText, groupCols, groupEvals, err := p.resolveGrouping()
	if err != nil {
		return err
	}
	calls, rewritten, having, argCols, err := p.resolveAggregateCalls(groupText, groupCols)
	if err != nil {
		return err
	}

	// The prepared row: [group keys…, argument columns…].
	prep := types.Schema{Columns: append([]types.Column{}, groupCols...)}
	prepEvals := append([]expr.Eval{}, groupEvals...)
	for _, i := range argCols {
		c := p.sc.schema.Columns[i]
		c.Key = false
		prep.Columns = append(prep.Columns, c)
		idx := i
		prepEvals = append(prepEvals, func(row []any) any { return row[idx] })
	}
	prepNames := prep.Names()
	var pre []exec.Node
	var changes *exec.TableChanges
	if fromTable {
		// A table's rows change: each change takes the old row's values
		// out of its group before the new row's go in.
		node, ch, err := p.tableChanges(&prep, groupEvals, prepEvals[len(groupEvals):])
		if err != nil {
			return err
		}
		pre, changes = append(pre, node), ch
	} else {
		where, err := p.whereNode(p.sc)
		if err != nil {
			return err
		}
		if where != nil {
			pre = append(pre, where)
		}
		pre = append(pre, &exec.ProjectNode{Exprs: prepEvals, Names: prepNames})
	}

	aggScope := expr.SchemaScope(prep)
	aggSpec := p.spec
	partitions := p.src.Partitions
	var chain []exec.Node
	if aggregateRekeyed(p.q.Logical) {
		repart := p.prefix + "-Aggregate-GroupBy-repartition"
		keyFormat := "JSON"
		if len(groupCols) == 1 && isPrimitive(groupCols[0].Type) {
			keyFormat = "KAFKA"
		}
		values := prep.Columns[len(groupCols):]
		repartKey := p.repartitionKeyCols(groupCols)
		pre = append(pre, &exec.SinkNode{
			Topic: repart, KeyFormat: keyFormat, ValueFormat: format.Rows,
			KeyCols: repartKey, ValueCols: values, KeyIdx: seq(0, len(groupCols)), ValueIdx: seq(len(groupCols), len(prep.Columns)),
			Internal: true,
		})
		p.addSub(p.spec, pre)
		p.q.Topology.Internal = append(p.q.Topology.Internal, exec.TopicSpec{Name: repart, Partitions: partitions, Configs: map[string]string{"cleanup.policy": "delete"}})
		aggSpec = &exec.SourceSpec{Topic: repart, KeyFormat: keyFormat, ValueFormat: format.Rows, KeyCols: repartKey, ValueCols: values, TimestampCol: -1, Dedupe: true}
		p.finalSpec = aggSpec
	} else {
		chain = pre
	}

	// The aggregate itself.
	aggNode := &exec.AggregateNode{Store: p.q.ID + "-Aggregate-Materialize", KeyCols: seq(0, len(groupCols)), EmitFinal: sel.Emit == parser.EmitFinal, Changes: changes, CacheBytes: p.opts.StateCacheBytes}
	for _, g := range p.cl.GroupBy {
		aggNode.KeyNames = append(aggNode.KeyNames, g.String())
	}
	post := types.Schema{Columns: append([]types.Column{}, groupCols...)}
	var noUndo []string
	for i, f := range calls {
		argTypes := make([]types.Type, len(f.Args))
		var evals []expr.Eval
		for j, a := range f.Args {
			c, err := expr.Compile(p.prepRefs(a), p.withFunctions(aggScope))
			if err != nil {
				return err
			}
			argTypes[j] = c.Type
			evals = append(evals, c.Eval)
		}
		agg, err := p.bindAggregate(f, argTypes)
		if err == nil {
			if err := literalInitArgs(f); err != nil {
				return err
			}
			err = checkStateType(p.src, agg)
		}
		if err != nil {
			return posErr(f.Pos, err)
		}
		aggNode.Aggs = append(aggNode.Aggs, exec.AggCall{Agg: agg, Args: evals, Text: f.String()})
		if fromTable && agg.Undo == nil {
			noUndo = append(noUndo, strings.ToUpper(f.Name))
		}
		post.Columns = append(post.Columns, types.Column{Name: fmt.Sprintf("%s%d", aggColPrefix, i), Type: agg.ResultType})
	}
	if len(noUndo) > 0 {
		list := strings.Join(noUndo, ", ")
		if len(noUndo) > 1 {
			list = strings.Join(noUndo[:len(noUndo)-1], ", ") + " and " + noUndo[len(noUndo)-1]
		}
		return posErr(sel.Pos, fmt.Errorf("%w: The aggregation function%s %s cannot be applied to a table source, only to a stream source.", ErrInvalid, plural(len(noUndo)), list))
	}
	win := exec.NotWindowed
	var winSize int64
	if ws := p.cl.Window; ws != nil {
		w, err := windowSpec(ws, sel.Emit == parser.EmitFinal)
		if err != nil {
			return err
		}
		if d, ok, err := p.withRetention(); err != nil {
			return err
		} else if ok {
			if ws.HasRetention {
				return posErr(ws.Pos, fmt.Errorf("%w: RETENTION is given both in the WINDOW clause and in WITH; give it once", ErrInvalid))
			}
			w.Retention = d.Milliseconds()
		}
		aggNode.Window = w
		win, winSize = exec.TimeWindowed, w.Size
		if err := refuseFallibleSliding(w, aggNode.Aggs, calls); err != nil {
			return err
		}
		if w.Kind == exec.Session {
			win, winSize = exec.SessionWindowed, 0
			for i, call := range aggNode.Aggs {
				if call.Agg.Merge == nil {
					return posErr(calls[i].Pos, fmt.Errorf("%w: %s cannot be used with SESSION windows: sessions that merge need to merge its results", ErrUnsupported, call.Agg.Name))
				}
			}
		}
		aggNode.LateTopic, _ = p.target.withProp("LATE_TOPIC")
		p.q.Topology.LateTopic = aggNode.LateTopic
		aggNode.KsqlDBFinal = p.opts.Compat == CompatKsqlDB
		post.Columns = append(post.Columns,
			types.Column{Name: exec.ColWindowStart, Type: types.BigIntType},
			types.Column{Name: exec.ColWindowEnd, Type: types.BigIntType})
	}
	if aggNode.Window == nil {
		d, err := p.tableRetention()
		if err != nil {
			return err
		}
		aggNode.Retention = d.Milliseconds()
	}
	aggNode.Sliced = p.slicedWindows(aggNode)
	// A sink of change events writes each result with the one before.
	aggNode.WithOld = p.target.changesOut()
	chain = append(chain, aggNode)
	// The aggregate's store is the table pull queries read.
	p.q.Topology.Table = aggNode
	store := exec.StoreSpec{Name: aggNode.Store, Changelog: p.prefix + "-Aggregate-Materialize-changelog", Partitions: partitions}
	if aggNode.Window != nil {
		store.Windowed = true
		store.RetentionMs = aggNode.Window.EffectiveRetention()
	}
	p.q.Topology.Stores = append(p.q.Topology.Stores, store)
	p.post = &post
	postScope := &postScope{schema: post, groupCount: len(groupCols)}

	if having != nil {
		c, err := expr.Compile(having, p.withFunctions(postScope))
		if errors.Is(err, errNotGrouped) {
			var loose []string
			walkExpr(having, func(e parser.Expr) {
				if ref, ok := e.(*parser.ColumnRef); ok && postScope.schema.Find(ref.Name) < 0 {
					loose = append(loose, strings.ToUpper(ref.String()))
				}
			})
			return posErr(p.cl.Having.Position(), fmt.Errorf("%w: Non-aggregate HAVING expression not part of GROUP BY: %s", ErrInvalid, strings.Join(loose, ", ")))
		}
		if err != nil {
			err = expr.InClause(err, "HAVING")
			quoted := calls
			if p.join != nil {
				// Over a join ksqlDB quotes the calls with the join's
				// column names: SUM(I1_BAR).
				quoted = make([]*parser.FuncCall, len(calls))
				for i, f := range calls {
					quoted[i] = p.join.layout.joinNames(f).(*parser.FuncCall)
				}
			}
			var pe *expr.PosError
			if errors.As(err, &pe) {
				return &expr.PosError{Pos: pe.Pos, Err: aggregateText{pe.Err, quoted}}
			}
			return aggregateText{err, quoted}
		}
		if err := mustBeBoolean(p.cl.Having, c, "HAVING"); err != nil {
			return err
		}
		chain = append(chain, &exec.FilterNode{Pred: c.Eval, Text: p.cl.Having.String(), TombstoneOnReject: p.target != nil})
		aggNode.WithOld = aggNode.WithOld || p.target != nil
	}
	compiled := make([]expr.Compiled, len(rewritten))
	var loose []string // items neither grouped nor aggregated
	var loosePos parser.Pos
	for i, e := range rewritten {
		var err error
		if compiled[i], err = expr.Compile(e, p.withFunctions(postScope)); err != nil {
			if !errors.Is(err, errNotGrouped) {
				return err
			}
			if len(loose) == 0 {
				loosePos = p.items[i].expr.Position()
			}
			loose = append(loose, parser.KsqlText(p.items[i].expr))
		}
	}
	if len(loose) > 0 {
		return posErr(loosePos, fmt.Errorf("%w: Non-aggregate SELECT expression(s) not part of GROUP BY: %s\nEither add the column(s) to the GROUP BY or remove them from the SELECT.", ErrInvalid, strings.Join(loose, ", ")))
	}
	if p.target == nil {
		p.finalSpec = aggSpec
		return p.transientAgg(chain, compiled)
	}
	// Key columns: the items that are exactly a grouping expression.
	var keyItems []int
	for g := range groupCols {
		found := -1
		for i, e := range rewritten {
			if ref, ok := e.(*parser.ColumnRef); ok && ref.Name == groupCols[g].Name {
				if found >= 0 {
					return posErr(p.items[i].pos, fmt.Errorf("%w: The projection contains a key column more than once: `%s` and `%s`.", ErrInvalid, p.items[found].name, p.items[i].name))
				}
				found = i
			}
		}
		if found < 0 {
			return p.groupingMissing(groupCols, rewritten)
		}
		keyItems = append(keyItems, found)
	}
	p.finalSpec = aggSpec
	p.rewritten = rewritten
	return p.finish(chain, compiled, keyItems, win, winSize, windowInputs(post), partitions)
}

func (p *planning) transientAgg(chain []exec.Node, compiled []expr.Compiled) error {
	saved := p.spec
	p.spec = p.finalSpec
	err := p.transient(chain, compiled, nil)
	p.spec = saved
	return err
}

// postScope resolves names after aggregation and explains what went
// wrong when a SELECT names a column that is neither grouped nor
// aggregated.
type postScope struct {
	schema     types.Schema
	groupCount int
}

func (s *postScope) Resolve(ref *parser.ColumnRef) (int, types.Type, error) {
	if i := s.schema.Find(ref.Name); i >= 0 {
		return i, s.schema.Columns[i].Type, nil
	}
	return 0, types.Type{}, fmt.Errorf("%w: %w: %s", ErrInvalid, errNotGrouped, ref.String())
}

// errNotGrouped marks a column that is neither grouped nor aggregated;
// planAggregate reports the SELECT items that use one, as ksqlDB does.
var errNotGrouped = errors.New("non-aggregate SELECT expression(s) not part of GROUP BY")

// repartitionKeyCols are the key columns a GROUP BY's repartition topic
// writes: the grouping columns (internally KSQL_INTERNAL_GROUP_n, so that
// they never meet a source column's name) named as ksqlDB names them, a
// grouped column by its name and any other expression by a generated
// alias unique against the source's columns (KSQL_COL_n, a struct
// field's name). A JSON key holds these names, and its bytes decide the
// partition: named so, a key lands in the partition ksqlDB's would, and
// a scan of the table's partitions in order meets the rows ksqlDB's does.
// A query whose command predates plan version 2 keeps the internal names
// and with them its state's partitioning.
func (p *planning) repartitionKeyCols(groupCols []types.Column) []types.Column {
	if p.opts.PlanVersion == 1 {
		return groupCols
	}
	gen := newAliasGenerator(p.src.Schema.Columns)
	out := make([]types.Column, len(groupCols))
	for i, c := range groupCols {
		switch g := p.cl.GroupBy[i].(type) {
		case *parser.ColumnRef:
			c.Name = g.Name
		case *parser.Dereference:
			c.Name = gen.field(g.Field)
		default:
			c.Name = gen.expression()
		}
		out[i] = c
	}
	return out
}

// aggregateRekeyed reports whether the plan re-keys the aggregate's
// input by the GROUP BY (the repartition rule's decision).
func aggregateRekeyed(plan logical.Node) bool {
	var agg *logical.Aggregate
	var walk func(n logical.Node)
	walk = func(n logical.Node) {
		if a, ok := n.(*logical.Aggregate); ok {
			agg = a
		}
		for _, in := range n.Inputs() {
			walk(in)
		}
	}
	walk(plan)
	if agg == nil {
		return false
	}
	in := agg.Input
	if w, ok := in.(*logical.Window); ok {
		in = w.Input
	}
	return rekeyed(in)
}

// withRetention is the RETENTION of the statement's WITH clause, if any.
func (p *planning) withRetention() (time.Duration, bool, error) {
	text, ok := p.target.withProp("RETENTION")
	if !ok {
		return 0, false, nil
	}
	d, err := parseDuration("RETENTION", text)
	if err != nil {
		return 0, false, posErr(p.sel.Pos, err)
	}
	return d, true, nil
}

// tableRetention is how long a key of a non-windowed aggregation lives
// after its last update, in event time: WITH (RETENTION=…), else, for
// persistent queries, the session's sluice.table.retention; 0 keeps keys
// forever.
func (p *planning) tableRetention() (time.Duration, error) {
	d, ok, err := p.withRetention()
	if err != nil || ok {
		return d, err
	}
	if p.target == nil || p.opts.TableRetention == "" {
		return 0, nil
	}
	d, err = parseDuration("'"+TableRetentionProperty+"'", p.opts.TableRetention)
	if err != nil {
		return 0, posErr(p.sel.Pos, err)
	}
	return d, nil
}

// changesOut reports whether the target's sink writes change events
// (VALUE_ENVELOPE other than NONE).
func (t *Target) changesOut() bool {
	e, _ := t.withProp("VALUE_ENVELOPE")
	e = strings.ToUpper(strings.TrimSpace(e))
	return e != "" && e != format.EnvelopeNone
}

// withProp reads a WITH property of the target; a transient query or an
// INSERT INTO has none.
func (t *Target) withProp(name string) (string, bool) {
	if t == nil {
		return "", false
	}
	v, ok := t.With[name]
	return v, ok
}

// windowSpec resolves a WINDOW clause. A window without GRACE gets
// ksqlDB's default: none with EMIT FINAL (results wait for the window's
// end, no longer), and 24 hours minus the size with EMIT CHANGES.
func windowSpec(w *parser.WindowSpec, emitFinal bool) (*exec.WindowSpec, error) {
	ms := func(d time.Duration) int64 { return d.Milliseconds() }
	spec := &exec.WindowSpec{Size: ms(w.Size)}
	if !emitFinal {
		spec.Grace = max(ms(DefaultGrace)-spec.Size, 0)
	}
	if w.HasGrace {
		spec.Grace = ms(w.Grace)
	}
	if w.HasRetention {
		spec.Retention = ms(w.Retention)
	}
	switch w.Kind {
	case parser.WindowTumbling:
		spec.Kind = exec.Tumbling
	case parser.WindowHopping:
		spec.Kind = exec.Hopping
		spec.Advance = ms(w.Advance)
		if spec.Advance <= 0 || spec.Advance > spec.Size {
			return nil, posErr(w.Pos, fmt.Errorf("%w: HOPPING window ADVANCE must be positive and at most SIZE", ErrInvalid))
		}
	case parser.WindowSession:
		spec.Kind = exec.Session
	case parser.WindowSliding:
		spec.Kind = exec.Sliding
	default:
		return nil, posErr(w.Pos, fmt.Errorf("%w: %s windows are not supported yet", ErrUnsupported, w.Kind))
	}
	if spec.Size <= 0 {
		return nil, posErr(w.Pos, fmt.Errorf("%w: window SIZE must be positive", ErrInvalid))
	}
	return spec, nil
}

func isWindowBound(name string) bool {
	return strings.EqualFold(name, exec.ColWindowStart) || strings.EqualFold(name, exec.ColWindowEnd)
}

func (p *planning) containsAggregate(e parser.Expr) bool {
	found := false
	walkExpr(e, func(x parser.Expr) {
		if f, ok := x.(*parser.FuncCall); ok && p.isAggregate(f.Name) {
			found = true
		}
	})
	return found
}

func isPrimitive(t types.Type) bool {
	switch t.Kind {
	case types.Integer, types.BigInt, types.Double, types.String:
		return true
	}
	return false
}

func seq(from, to int) []int {
	out := make([]int, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

func plural(n int) string {
	if n > 1 {
		return "s"
	}
	return ""
}

// prepRefs names the columns an aggregate argument reads as the
// prepared row does: by the source row's column names, so that a
// qualified or unqualified reference into a join (T1.TOTAL, TOTAL)
// reads its T1_TOTAL column.
func (p *planning) prepRefs(e parser.Expr) parser.Expr {
	return parser.Rewrite(e, func(x parser.Expr) parser.Expr {
		ref, ok := x.(*parser.ColumnRef)
		if !ok {
			return nil
		}
		i, _, err := p.sc.Resolve(ref)
		if err != nil {
			return ref
		}
		c := *ref
		c.Source, c.Name = "", p.sc.schema.Columns[i].Name
		return &c
	})
}

// tableChanges plans the first step of aggregating a table: a store of
// the table's current rows (its own topic is the changelog) and the node
// that turns each record into the change of its group. prep, the row the
// aggregation reads ([group keys…, arguments…]), gains the old row's
// arguments and the change's mode.
func (p *planning) tableChanges(prep *types.Schema, group, args []expr.Eval) (exec.Node, *exec.TableChanges, error) {
	node := &exec.TableChangeNode{Store: p.q.ID + "-Aggregate-Source", NKeys: len(p.src.Schema.Keys()), Group: group, Args: args}
	if p.spec.Enveloped() {
		// A change-data-capture connector re-sends events after a
		// restart: one repeating the row's key and values is no change.
		node.SameRow = len(p.spec.KeyCols) + len(p.spec.ValueCols)
	}
	var texts []string
	for _, g := range p.cl.GroupBy {
		texts = append(texts, g.String())
	}
	node.Text = strings.Join(texts, ", ")
	if p.cl.Where != nil {
		where, err := p.whereNode(p.sc)
		if err != nil {
			return nil, nil, err
		}
		node.Where = where.Pred
	}
	ng, na := len(group), len(args)
	for i := 0; i < na; i++ {
		c := prep.Columns[ng+i]
		c.Name = "KSQL_INTERNAL_OLD_" + c.Name
		prep.Columns = append(prep.Columns, c)
	}
	prep.Columns = append(prep.Columns, types.Column{Name: "KSQL_INTERNAL_CHANGE", Type: types.IntegerType})
	p.q.Topology.Stores = append(p.q.Topology.Stores, exec.StoreSpec{Name: node.Store, Changelog: p.spec.Topic, FromSource: p.spec, Partitions: p.src.Partitions})
	return node, &exec.TableChanges{ArgsAt: ng, OldArgsAt: ng + na, NArgs: na, ModeCol: ng + 2*na}, nil
}

// aggregateText shows an error from the rewritten HAVING clause with the
// aggregate calls the user wrote in place of the internal columns that
// hold their results (SUM(VALUE), not KSQL_INTERNAL_AGG_0).
type aggregateText struct {
	err   error
	calls []*parser.FuncCall
}

func (a aggregateText) Error() string {
	msg := a.err.Error()
	for i := len(a.calls) - 1; i >= 0; i-- { // AGG_10 before AGG_1
		msg = strings.ReplaceAll(msg, fmt.Sprintf("%s%d", aggColPrefix, i), parser.KsqlText(a.calls[i]))
	}
	return msg
}

func (a aggregateText) Unwrap() error { return a.err }

// slicedWindows says whether a HOPPING aggregation keeps its state per
// slice of the advance rather than per window (exec.AggregateNode.Sliced):
// each record then folds into one slice instead of size/advance windows.
// It takes EMIT FINAL (a window's result is merged from its slices once,
// when it closes: EMIT CHANGES would merge them on every record), a size
// that is a multiple of the advance, and aggregates whose merge of slices
// is exact whatever the rows' order (expr.Aggregate.Sliceable). Not under
// sluice.compat=ksqldb, whose EMIT FINAL drops windows by the newest
// window start, nor for a query planned before plan version 4, whose
// store holds windows.
func (p *planning) slicedWindows(n *exec.AggregateNode) bool {
	w := n.Window
	if w == nil || w.Kind != exec.Hopping || !n.EmitFinal || n.KsqlDBFinal || n.Changes != nil ||
		w.Advance <= 0 || w.Size <= w.Advance || w.Size%w.Advance != 0 ||
		(p.opts.PlanVersion > 0 && p.opts.PlanVersion < 4) {
		return false
	}
	for _, call := range n.Aggs {
		if !call.Agg.Sliceable || call.Agg.Fallible {
			return false
		}
	}
	return true
}
