package planner

import (
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

// Options are the service-wide settings planning needs.
type Options struct {
	// ServiceID prefixes internal topic names. Default "default".
	ServiceID string
	// TableRetention is the session property sluice.table.retention
	// (TableRetentionProperty): the retention of persistent non-windowed
	// aggregations whose statement sets no WITH (RETENTION=…). Same
	// syntax as RETENTION. Default "": keys are kept forever.
	TableRetention string
	// Compat is the session property sluice.compat (CompatProperty):
	// "ksqldb" reproduces ksqlDB behaviour where Sluice deliberately
	// differs; "" or "sluice" is Sluice's own.
	Compat string
	// TimestampThrowOnInvalid is ksqlDB's session property
	// ksql.timestamp.throw.on.invalid (TimestampThrowOnInvalidProperty):
	// a record whose event time cannot be read fails the query instead of
	// being counted and skipped. Default false.
	TimestampThrowOnInvalid bool
	// IdleTimeout is the session property sluice.idle.timeout
	// (IdleTimeoutProperty): the idle timeout of queries whose statement
	// sets no WITH (IDLE_TIMEOUT=…). Same syntax. Default "": stream
	// time moves only with records.
	IdleTimeout string
	// DefaultKeyFormat and DefaultValueFormat are ksqlDB's session
	// properties ksql.persistence.default.format.key and .value
	// (DefaultKeyFormatProperty, DefaultValueFormatProperty): the formats
	// of a CREATE with columns whose WITH clause names none. Defaults
	// KAFKA and "" (the statement must name a value format).
	DefaultKeyFormat   string
	DefaultValueFormat string
	// NewQueryPlanner is ksqlDB's session property
	// ksql.new.query.planner.enabled (NewQueryPlannerProperty). With it a
	// stream's CREATE STREAM AS SELECT of a plain projection may leave the
	// source's key columns out: the result then has no key. Default
	// false: each key column must be selected.
	NewQueryPlanner bool
}

// DefaultKeyFormatProperty and DefaultValueFormatProperty name the
// session properties behind Options.DefaultKeyFormat and
// Options.DefaultValueFormat.
const (
	DefaultKeyFormatProperty   = "ksql.persistence.default.format.key"
	DefaultValueFormatProperty = "ksql.persistence.default.format.value"
)

// NewQueryPlannerProperty names the session property behind
// Options.NewQueryPlanner.
const NewQueryPlannerProperty = "ksql.new.query.planner.enabled"

// TableRetentionProperty names the session property behind
// Options.TableRetention.
const TableRetentionProperty = "sluice.table.retention"

// CompatProperty names the session property behind Options.Compat, and
// CompatKsqlDB its value that follows ksqlDB. The one difference today:
// with EMIT FINAL, ksqlDB drops a closed time window whose start is more
// than the retention behind the newest window start (its window store
// expired it before the result was emitted); Sluice emits every window.
const (
	CompatProperty = "sluice.compat"
	CompatKsqlDB   = "ksqldb"
)

// TimestampThrowOnInvalidProperty names the session property behind
// Options.TimestampThrowOnInvalid.
const TimestampThrowOnInvalidProperty = "ksql.timestamp.throw.on.invalid"

// DefaultGrace bounds the grace period of an EMIT CHANGES window that
// states none: ksqlDB's 24 hours, less the window's size.
const DefaultGrace = 24 * time.Hour

// Target is where a persistent query writes: a new stream or table
// (CREATE … AS SELECT) or an existing one (INSERT INTO).
type Target struct {
	Name string
	Kind parser.SourceKind
	With Props
	// WithClause is the WITH clause as written, where errors about a
	// property's value point.
	WithClause []parser.Property
	Existing   *Source
	Text       string
	// Replaces is the sink a CREATE OR REPLACE … AS SELECT upgrades: the
	// new sink keeps its topic, formats and partitions unless WITH names
	// others.
	Replaces *Source
}

// TargetOf is the new stream or table a CREATE … AS SELECT writes, its
// WITH clause checked (PropsOf) and kept for error positions.
func TargetOf(st *parser.CreateSource, text string) (*Target, error) {
	with, err := PropsOf(st.With)
	if err != nil {
		return nil, err
	}
	return &Target{Name: st.Name, Kind: st.Kind, With: with, WithClause: st.With, Text: text}, nil
}

// Query is a planned query.
type Query struct {
	ID       string
	Topology *exec.Topology
	// Sink is the stream or table the query writes (nil when transient).
	Sink *Source
	// Output names the columns of rows a transient query delivers, in
	// SELECT order; Collect is the node that delivers them.
	Output  types.Schema
	Collect *exec.CallbackNode
	// Sources are the names of the streams and tables read.
	Sources []string
	// Limit is the LIMIT of a transient query (0: none).
	Limit int
	// Logical is the query's logical plan and Rules name the planner
	// rules that changed it, in the order they ran (see rules.go).
	Logical logical.Node
	Rules   []string
}

// InternalPrefix is the name prefix of a query's internal topics.
func InternalPrefix(serviceID, queryID string) string {
	if serviceID == "" {
		serviceID = "default"
	}
	return "_sluice-" + serviceID + "-query-" + queryID
}

// scope resolves column references against one source's row.
type scope struct {
	src    *Source
	alias  string
	schema types.Schema
	// join, when set, names the columns of a joined row instead.
	join *joinLayout
	// used records the row positions expressions read, so the source
	// decodes only those value columns.
	used map[int]bool
}

func (s *scope) Resolve(ref *parser.ColumnRef) (int, types.Type, error) {
	if s.join != nil {
		return s.join.resolve(ref)
	}
	if ref.Source != "" && !strings.EqualFold(ref.Source, s.src.Name) && !strings.EqualFold(ref.Source, s.alias) {
		return 0, types.Type{}, fmt.Errorf("%w %s.%s: no source named %s in FROM", expr.ErrUnknownColumn, ref.Source, ref.Name, ref.Source)
	}
	if i := s.schema.Find(ref.Name); i >= 0 {
		if s.used == nil {
			s.used = map[int]bool{}
		}
		s.used[i] = true
		return i, s.schema.Columns[i].Type, nil
	}
	names := visibleNames(s.schema)
	if near := parser.Closest(ref.Name, names); near != "" {
		return 0, types.Type{}, fmt.Errorf("%w %s: did you mean %s? %s has columns %s", expr.ErrUnknownColumn, ref.Name, near, s.src.Name, strings.Join(names, ", "))
	}
	return 0, types.Type{}, fmt.Errorf("%w %s: %s has columns %s", expr.ErrUnknownColumn, ref.Name, s.src.Name, strings.Join(names, ", "))
}

// unknownDetail is what a scope said about an unknown column, without
// the kind prefix ("unknown column X: "), as a hint after ksqlDB's words.
func unknownDetail(err error) string {
	msg := err.Error()
	if _, after, ok := strings.Cut(msg, ": "); ok && strings.HasPrefix(msg, expr.ErrUnknownColumn.Error()) {
		return after
	}
	return msg
}

// visibleNames lists the columns a user can name, without internal ones.
func visibleNames(s types.Schema) []string {
	var out []string
	for _, n := range s.Names() {
		if !strings.HasPrefix(n, "KSQL_INTERNAL_") {
			out = append(out, n)
		}
	}
	return out
}

// itemList collects a SELECT's output columns, refusing a name twice.
type itemList struct {
	items []item
	seen  map[string]bool
}

func (l *itemList) add(it item) error {
	key := strings.ToUpper(it.name)
	if l.seen[key] {
		return posErr(it.pos, fmt.Errorf("%w: duplicate output column name %s; use an alias", ErrInvalid, it.name))
	}
	if l.seen == nil {
		l.seen = map[string]bool{}
	}
	l.seen[key] = true
	l.items = append(l.items, it)
	return nil
}

// item is one output column of a SELECT before planning.
type item struct {
	expr parser.Expr
	name string
	pos  parser.Pos
	// star marks items a * expanded to, and oldKey those of them that
	// are key columns of the source: PARTITION BY moves them to the value.
	star, oldKey bool
}

// expandItems lists the SELECT's output columns, expanding *. A windowed
// source's window bounds are part of * only in transient queries, as in
// ksqlDB: a persistent query writes them in the windowed key of its sink,
// not again in the value.
func expandItems(sel *parser.Select, sc *scope, persistent bool) ([]item, error) {
	var l itemList
	add := l.add
	generated := 0
	for _, si := range sel.Items {
		if si.Star {
			if si.StarSource != "" && !strings.EqualFold(si.StarSource, sc.src.Name) && !strings.EqualFold(si.StarSource, sc.alias) {
				return nil, posErr(si.Pos, fmt.Errorf("%w: %s.* names no source in FROM", ErrInvalid, si.StarSource))
			}
			cols := sc.src.Schema.Keys()
			nkeys := len(cols)
			if sc.src.Window != exec.NotWindowed && !persistent {
				cols = append(cols, types.Column{Name: exec.ColWindowStart}, types.Column{Name: exec.ColWindowEnd})
			}
			cols = append(append(cols, sc.src.Schema.Values()...), sc.src.Schema.Headers()...)
			for i, c := range cols {
				if err := add(item{expr: &parser.ColumnRef{Pos: si.Pos, Name: c.Name}, name: c.Name, pos: si.Pos, star: true, oldKey: i < nkeys}); err != nil {
					return nil, err
				}
			}
			continue
		}
		if si.AllFields {
			if err := addStructFields(si, sc, add); err != nil {
				return nil, err
			}
			continue
		}
		name := si.Alias
		if name == "" {
			switch x := si.Expr.(type) {
			case *parser.ColumnRef:
				name = x.Name
			case *parser.Dereference:
				name = x.Field
			default:
				name = fmt.Sprintf("KSQL_COL_%d", generated)
				generated++
			}
		}
		if err := checkOutputName(si, name, persistent); err != nil {
			return nil, err
		}
		if err := add(item{expr: si.Expr, name: name, pos: si.Pos}); err != nil {
			return nil, err
		}
	}
	return l.items, nil
}

// addStructFields adds the items a `s->*` select item expands to.
func addStructFields(si parser.SelectItem, sc expr.Scope, add func(item) error) error {
	fields, err := structFieldItems(si, sc)
	if err != nil {
		return err
	}
	for _, it := range fields {
		if err := add(it); err != nil {
			return err
		}
	}
	return nil
}

// structFieldItems expands x->*: an item per field of the struct x, in
// the struct's order, named after the field as declared.
func structFieldItems(si parser.SelectItem, sc expr.Scope) ([]item, error) {
	c, err := expr.Compile(si.Expr, sc)
	if err != nil {
		return nil, err
	}
	if c.Type.Kind != types.Struct {
		return nil, posErr(si.Pos, fmt.Errorf("%w: %s->* needs a STRUCT, and %s is %s", ErrInvalid, si.Expr, si.Expr, c.Type))
	}
	items := make([]item, len(c.Type.Fields))
	for i, f := range c.Type.Fields {
		items[i] = item{expr: &parser.Dereference{Pos: si.Pos, X: si.Expr, Field: f.Name}, name: f.Name, pos: si.Pos}
	}
	return items, nil
}

// PlanQuery plans a SELECT. With a target it is a persistent query
// writing a topic; without, a transient query delivering rows to the
// client through Query.Collect.
func PlanQuery(cat *Catalog, sel *parser.Select, target *Target, queryID string, opts Options) (*Query, error) {
	p := &planning{cat: cat, sel: sel, target: target, opts: opts, q: &Query{ID: queryID, Limit: sel.Limit}}
	if err := p.runRules(onStatement); err != nil {
		return nil, err
	}
	sel = p.sel
	p.prefix = InternalPrefix(opts.ServiceID, queryID)
	p.q.Topology = &exec.Topology{QueryID: queryID}
	if target != nil && target.Existing != nil {
		if err := CheckWritable(target.Existing, false); err != nil {
			return nil, posErr(sel.Pos, err)
		}
	}
	if len(sel.Joins) > 0 {
		src, sc, err := p.planJoin()
		if err != nil {
			return nil, err
		}
		p.src, p.sc, p.spec = src, sc, p.join.spec
		p.q.Sources = []string{src.Name}
		for _, j := range sel.Joins {
			if r, err := cat.Lookup(j.Right.Name); err == nil {
				p.q.Sources = append(p.q.Sources, r.Name)
			}
		}
		if p.items, err = joinItems(sel, p.join.layout, sc); err != nil {
			return nil, err
		}
		// PARTITION BY and GROUP BY choose the key themselves.
		if len(sel.PartitionBy) == 0 && len(sel.GroupBy) == 0 && !p.hasAggregates() {
			if err := p.joinKey(); err != nil {
				return nil, err
			}
		}
	} else {
		src, err := cat.Lookup(sel.From.Name)
		if err != nil {
			return nil, posErr(sel.From.Pos, err)
		}
		spec := src.sourceSpec()
		spec.Table = src.Kind == parser.KindTable
		spec.FailOnBadTimestamp = opts.TimestampThrowOnInvalid
		sc := &scope{src: src, alias: sel.From.Alias, schema: spec.RowSchema()}
		items, err := expandItems(sel, sc, target != nil)
		if err != nil {
			return nil, err
		}
		p.src, p.spec, p.sc, p.items = src, spec, sc, items
		p.q.Sources = []string{src.Name}
	}
	var err error
	if target != nil {
		p.q.Topology.ErrorTopic = target.With["ERROR_TOPIC"]
	}
	if _, ok := target.withProp("LATE_TOPIC"); ok && sel.Window == nil && !p.streamJoin() {
		return nil, posErr(sel.Pos, fmt.Errorf("%w: LATE_TOPIC needs a windowed aggregation: only windows close and turn records away", ErrInvalid))
	}
	if p.q.Topology.IdleTimeout, err = idleTimeout(target, opts); err != nil {
		return nil, posErr(sel.Pos, err)
	}
	if sel.Emit == parser.EmitFinal && sel.Window == nil {
		return nil, posErr(sel.Pos, fmt.Errorf("%w: EMIT FINAL is only supported for windowed aggregations.", ErrInvalid))
	}
	if len(sel.PartitionBy) > 0 {
		err = p.planPartitionBy()
	} else if len(sel.GroupBy) > 0 || p.hasAggregates() {
		if p.hasTableFunctions() {
			return nil, posErr(sel.Pos, fmt.Errorf("%w: Table functions cannot be used with aggregations.", ErrInvalid))
		}
		err = p.planAggregate()
	} else {
		if sel.Window != nil {
			return nil, posErr(sel.Window.Pos, fmt.Errorf("%w: WINDOW clause requires a GROUP BY clause.", ErrInvalid))
		}
		if sel.Having != nil {
			return nil, posErr(sel.Having.Position(), fmt.Errorf("%w: HAVING requires a GROUP BY", ErrInvalid))
		}
		err = p.planStateless()
	}
	if err != nil {
		return nil, err
	}
	p.q.Logical = p.logicalPlan()
	if err := p.runRules(onPlan); err != nil {
		return nil, err
	}
	return p.q, nil
}

type planning struct {
	cat    *Catalog
	sel    *parser.Select
	target *Target
	opts   Options
	src    *Source
	spec   *exec.SourceSpec
	sc     *scope
	items  []item
	prefix string
	q      *Query
	// join is the plan of the FROM clause's joins (nil without).
	join *joinPlan
	// post is the schema after aggregation and finalSpec the source of
	// the sub-topology the final projection runs in (set when a
	// repartition splits the query).
	post      *types.Schema
	finalSpec *exec.SourceSpec
	// rewritten are the SELECT items over the post-aggregation schema.
	rewritten []parser.Expr
	// partitionBy marks a PARTITION BY query: its key columns are
	// computed, also for null-value records, and its key format follows
	// ksqlDB's PARTITION BY rules (sinkSource).
	partitionBy bool
	// aggRepartition says the aggregate reads its input through a
	// repartition topic, and rekeyed holds the key expression of each
	// join input re-keyed through one: the builder's decisions, which the
	// logical plan shows.
	aggRepartition bool
	rekeyed        map[rekey]string
	// final is the final chain as built, for the rules.
	final builtChain
}

func (p *planning) hasAggregates() bool {
	found := false
	for _, it := range p.items {
		walkExpr(it.expr, func(e parser.Expr) {
			if f, ok := e.(*parser.FuncCall); ok && expr.IsAggregate(f.Name) {
				found = true
			}
		})
	}
	return found
}

func (p *planning) whereNode(sc expr.Scope) (*exec.FilterNode, error) {
	if p.sel.Where == nil {
		return nil, nil
	}
	var unknown *parser.ColumnRef
	walkExpr(p.sel.Where, func(x parser.Expr) {
		if ref, ok := x.(*parser.ColumnRef); ok && unknown == nil && isWindowBound(ref.Name) {
			if _, _, err := sc.Resolve(ref); err != nil {
				unknown = ref
			}
		}
	})
	if unknown != nil {
		return nil, posErr(unknown.Pos, fmt.Errorf("%w: Error in WHERE expression: Unknown column %s.", ErrInvalid, strings.ToUpper(unknown.Name)))
	}
	c, err := expr.Compile(p.sel.Where, sc)
	if err != nil {
		return nil, expr.InClauseOf(err, "WHERE", p.sel.Where)
	}
	if err := mustBeBoolean(p.sel.Where, c, "WHERE"); err != nil {
		return nil, err
	}
	return &exec.FilterNode{Pred: c.Eval, Text: p.sel.Where.String()}, nil
}

// outputKind is the kind of result the query produces: a table when it
// aggregates or reads a table, else a stream.
func (p *planning) checkTargetKind(produces parser.SourceKind) error {
	if p.target == nil {
		return nil
	}
	want := p.target.Kind
	if p.target.Existing != nil {
		want = p.target.Existing.Kind
	}
	if want == produces {
		return nil
	}
	if p.target.Existing != nil {
		return posErr(p.sel.Pos, fmt.Errorf("%w: incompatible data sink and query result. Data sink (%s) type is %s but select query result is %s", ErrInvalid, p.target.Existing.Name, want, produces))
	}
	return posErr(p.sel.Pos, fmt.Errorf("%w: invalid result type. Your SELECT query produces a %s. Please use CREATE %s AS SELECT statement instead", ErrInvalid, produces, produces))
}

func (p *planning) planStateless() error {
	produces := p.src.Kind
	if err := p.checkTargetKind(produces); err != nil {
		return err
	}
	if _, ok := p.target.withProp("RETENTION"); ok {
		return posErr(p.sel.Pos, fmt.Errorf("%w: RETENTION bounds the state of an aggregation (GROUP BY); this query keeps no state", ErrInvalid))
	}
	var nodes []exec.Node
	// The filter and the computed items compile through evaluated, which
	// records the columns they read (a JSON copy converts only those).
	evaluated := &readsScope{Scope: p.sc, reads: map[int]bool{}}
	filter, err := p.whereNode(evaluated)
	if err != nil {
		return err
	}
	if filter != nil {
		nodes = append(nodes, filter)
		p.final.filter = filter
	}
	keyPositions := map[int]bool{}
	for i, c := range p.sc.schema.Columns {
		if c.Key {
			keyPositions[i] = true
		}
	}
	// ksqlDB checks the SELECT list's column references before anything
	// else about the items, and names the reference as written.
	for _, it := range p.items {
		if ref, err := unresolvedColumn(it.expr, p.sc); ref != nil {
			return posErr(ref.Pos, fmt.Errorf("%w: SELECT column '%s' cannot be resolved. (%s)", expr.ErrUnknownColumn, strings.ToUpper(ref.String()), unknownDetail(err)))
		}
	}
	var itemScope expr.Scope = p.sc
	if p.hasTableFunctions() {
		fm, sc, err := p.flatMap()
		if err != nil {
			return err
		}
		nodes, itemScope = append(nodes, fm), sc
	}
	if itemScope == p.sc {
		itemScope = evaluated
	}
	compiled := make([]expr.Compiled, len(p.items))
	for i, it := range p.items {
		e := it.expr
		if p.rewritten != nil {
			e = p.rewritten[i]
		}
		sc := itemScope
		if _, plain := e.(*parser.ColumnRef); plain && sc == evaluated {
			sc = p.sc // selected, not evaluated
		}
		if compiled[i], err = expr.Compile(e, sc); err != nil {
			return err
		}
	}
	if p.target == nil {
		return p.transient(nodes, compiled, itemScope)
	}
	p.final.evaluated = evaluated.reads
	// The result keeps the source's key: each key column must be
	// selected, and becomes a key column under its output name.
	keyItem := make([]int, 0)
	for _, kc := range p.src.Schema.Keys() {
		found := -1
		for i, it := range p.items {
			if ref, ok := it.expr.(*parser.ColumnRef); ok && strings.EqualFold(ref.Name, kc.Name) {
				found = i
				break
			}
		}
		if found < 0 {
			if p.opts.NewQueryPlanner && produces == parser.KindStream && p.join == nil {
				keyItem = keyItem[:0]
				break // the result is keyless
			}
			return p.keyMissing(p.src.Schema.Keys())
		}
		// The key column selected again (under another name) would be a
		// value column holding the key: ksqlDB refuses the projection.
		var aliases []string
		for _, it := range p.items {
			if ref, ok := it.expr.(*parser.ColumnRef); ok && strings.EqualFold(ref.Name, kc.Name) {
				aliases = append(aliases, it.name)
			}
		}
		if len(aliases) > 1 && p.target != nil && p.join == nil && !p.partitionBy {
			return posErr(p.sel.Pos, fmt.Errorf("%w: The projection contains a key column (`%s`) more than once, aliased as: %s.", ErrInvalid, kc.Name, strings.Join(aliases, " and ")))
		}
		keyItem = append(keyItem, found)
	}
	// A null-value record of a stream passes a plain projection as a
	// null-value record (ksqlDB's behaviour); a WHERE drops it.
	p.spec.KeepNullValues = produces == parser.KindStream && filter == nil && p.join == nil
	return p.finish(nodes, compiled, keyItem, p.src.Window, p.src.WindowSize, windowInputs(p.sc.schema), p.src.Partitions)
}

// keyMissing refuses a projection that leaves out a key column; like
// ksqlDB it names every key column, not only the missing ones.
func (p *planning) keyMissing(keys []types.Column) error {
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k.Name
	}
	noun := "key column"
	if len(names) > 1 {
		noun = "key columns"
	}
	return posErr(p.sel.Pos, fmt.Errorf("%w (ie, SELECT). The query used to build `%s` must include the %s %s in its projection (eg, SELECT %s...).", ErrKeyProjection, p.target.Name, noun, andJoined(names), strings.Join(names, ", ")))
}

// andJoined lists names as prose: "A", "A and B", "A, B and C".
func andJoined(names []string) string {
	if len(names) <= 1 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// readsValue reports whether e reads a column past the first keys input
// columns (the key columns): a value column or a pseudo column such as
// ROWTIME, none of which a null-value record has.
func (p *planning) readsValue(e parser.Expr, keys int) bool {
	found := false
	walkColumns(e, func(ref *parser.ColumnRef) {
		if i, _, err := p.sc.Resolve(ref); err == nil && i >= keys {
			found = true
		}
	})
	return found
}

// windowInputs finds WINDOWSTART/WINDOWEND in a row schema (-1 if absent).
func windowInputs(s types.Schema) [2]int {
	return [2]int{s.Find(exec.ColWindowStart), s.Find(exec.ColWindowEnd)}
}

// transient ends the chain with a callback delivering items in order.
func (p *planning) transient(nodes []exec.Node, compiled []expr.Compiled, sc expr.Scope) error {
	exprs := make([]expr.Eval, len(compiled))
	names := make([]string, len(compiled))
	var cols []types.Column
	for i, c := range compiled {
		exprs[i], names[i] = c.Eval, p.items[i].name
		cols = append(cols, types.Column{Name: p.items[i].name, Type: c.Type})
	}
	collect := &exec.CallbackNode{Names: names}
	nodes = append(nodes, &exec.ProjectNode{Exprs: exprs, Names: names, KeyInputs: p.tombstoneKeys(sc)}, collect)
	p.q.Output = types.Schema{Columns: cols}
	p.q.Collect = collect
	p.addSub(p.spec, nodes)
	return nil
}

// tombstoneKeys maps the items of a push query on a table that copy a
// key column or a window bound to that input column: a row the table
// deletes reaches the client with them set and its other columns NULL,
// as ksqlDB sends it.
func (p *planning) tombstoneKeys(sc expr.Scope) map[int]int {
	if sc == nil || p.join != nil || p.src.Kind != parser.KindTable {
		return nil
	}
	nkeys := len(p.src.Schema.Keys())
	out := map[int]int{}
	for i, it := range p.items {
		ref, ok := it.expr.(*parser.ColumnRef)
		if !ok {
			continue
		}
		in, _, err := sc.Resolve(ref)
		if err == nil && (in < nkeys || isWindowBound(ref.Name)) {
			out[i] = in
		}
	}
	return out
}

func (p *planning) addSub(spec *exec.SourceSpec, nodes []exec.Node) {
	t := p.q.Topology
	sub := &exec.SubTopology{ID: len(t.Subs), Source: spec, Nodes: nodes}
	if p.join != nil && spec == p.join.spec {
		// The chain reading the join's main input starts with the join,
		// which its other inputs feed.
		sub.Nodes = append(append([]exec.Node{}, p.join.nodes...), nodes...)
		sub.Sides = p.join.sides
	}
	t.Subs = append(t.Subs, sub)
}

// streamJoin reports whether the query joins two streams (whose windows
// close, so that LATE_TOPIC applies).
func (p *planning) streamJoin() bool {
	if p.join == nil {
		return false
	}
	n := p.join.nodes[0].(*exec.JoinNode)
	return !n.Left.Table && !n.Right.Table
}

// finish projects the items (key items first), builds the sink source and
// the sink node. window carries the positions of window bounds in the
// projection's input when the result is windowed.
func (p *planning) finish(nodes []exec.Node, compiled []expr.Compiled, keyItems []int, win exec.WindowType, winSize int64, winIn [2]int, partitions int32) error {
	isKey := map[int]bool{}
	for _, k := range keyItems {
		isKey[k] = true
	}
	order := append([]int{}, keyItems...)
	for i := range p.items {
		if !isKey[i] {
			order = append(order, i)
		}
	}
	var exprs []expr.Eval
	var names []string
	var keyCols, valCols []types.Column
	keyInputs := map[int]int{}
	inputs := make([]int, len(order))
	for pos, i := range order {
		c := compiled[i]
		exprs = append(exprs, c.Eval)
		names = append(names, p.items[i].name)
		col := types.Column{Name: p.items[i].name, Type: c.Type}
		inputs[pos] = -1
		e := p.items[i].expr
		if p.rewritten != nil {
			e = p.rewritten[i]
		}
		if ref, ok := e.(*parser.ColumnRef); ok {
			if in, _, err := p.projectionScope().Resolve(ref); err == nil {
				inputs[pos] = in
			}
		}
		if isKey[i] {
			col.Key = true
			keyCols = append(keyCols, col)
			if in := inputs[pos]; in >= 0 {
				keyInputs[pos] = in
			}
		} else {
			if c.Type.Kind == types.Unknown {
				return posErr(p.items[i].pos, fmt.Errorf("%w: %s (column %s is a bare NULL)", expr.ErrType, expr.NullTypeMessage, p.items[i].name))
			}
			valCols = append(valCols, col)
		}
	}
	if len(valCols) == 0 && p.target != nil && p.target.Existing == nil {
		// A record needs a value: with only key columns every result
		// would be a tombstone.
		return posErr(p.sel.Pos, fmt.Errorf("%w: The projection contains no value columns.", ErrInvalid))
	}
	// The key passes through when every key column copies an input
	// column unchanged and PARTITION BY does not compute a new one.
	keepsKey := !p.partitionBy && len(keyInputs) == len(keyCols)
	winStart, winEnd := -1, -1
	if win != exec.NotWindowed {
		winStart, winEnd = len(exprs), len(exprs)+1
		s, e := winIn[0], winIn[1]
		exprs = append(exprs, func(row []any) any { return row[s] }, func(row []any) any { return row[e] })
		keyInputs[winStart], keyInputs[winEnd] = s, e
		inputs = append(inputs, s, e)
	}
	project := &exec.ProjectNode{Exprs: exprs, Names: names, KeyInputs: keyInputs, Inputs: inputs, KeepsKey: keepsKey}
	if p.partitionBy {
		project.TombstoneKeys, project.InputKeys = len(keyCols), len(p.src.Schema.Keys())
		for _, i := range keyItems {
			project.TombstoneNull = append(project.TombstoneNull, p.readsValue(p.items[i].expr, project.InputKeys))
		}
	}
	nodes = append(nodes, project)

	sink, err := p.sinkSource(keyCols, valCols, win, winSize, partitions)
	if err != nil {
		return err
	}
	keyIdx := make([]int, len(keyCols))
	for i := range keyIdx {
		keyIdx[i] = i
	}
	valIdx := make([]int, len(valCols))
	for i := range valIdx {
		valIdx[i] = len(keyCols) + i
	}
	if p.materializes(sink, nodes) {
		nodes = append(nodes, p.materialize(sink, keyIdx, valIdx, keyInputs, partitions))
	}
	sinkNode := &exec.SinkNode{
		Topic: sink.Topic, KeyFormat: sink.KeyFormat, ValueFormat: sink.ValueFormat,
		KeyCols: sink.Schema.Keys(), ValueCols: sink.Schema.Values(), KeyProps: sink.KeyProps, ValueProps: sink.ValueProps,
		KeyIdx: keyIdx, ValueIdx: valIdx, Window: win, WindowStartIdx: winStart, WindowEndIdx: winEnd,
		Timestamp: sinkTimestamp(sink),
	}
	nodes = append(nodes, sinkNode)
	p.addSub(p.lastSpec(), nodes)
	p.final.sub, p.final.project, p.final.sink = p.q.Topology.Subs[len(p.q.Topology.Subs)-1], project, sinkNode
	p.q.Sink = sink
	p.q.Topology.SinkTopic = sink.Topic
	return nil
}

// sinkTimestamp says where the sink takes record timestamps from: the
// sink's TIMESTAMP column, at its schema position in the projected row
// (key columns, then value columns, as finish lays them out), or nil for
// the row's event time.
func sinkTimestamp(sink *Source) *exec.SinkTimestamp {
	if sink.TimestampColumn == "" {
		return nil
	}
	return &exec.SinkTimestamp{Col: sink.Schema.Find(sink.TimestampColumn), Name: sink.TimestampColumn, Format: sink.TimestampFormat}
}

// projectionScope is the scope the final projection reads; set by the
// aggregate planner to the post-aggregation schema.
func (p *planning) projectionScope() expr.Scope {
	if p.post != nil {
		return expr.SchemaScope(*p.post)
	}
	return p.sc
}

// lastSpec is the source of the sub-topology the final chain belongs to.
func (p *planning) lastSpec() *exec.SourceSpec {
	if p.finalSpec != nil {
		return p.finalSpec
	}
	return p.spec
}

// sinkSource builds (or, for INSERT INTO, checks) the source the query
// writes.
func (p *planning) sinkSource(keyCols, valCols []types.Column, win exec.WindowType, winSize int64, partitions int32) (*Source, error) {
	for _, c := range keyCols {
		// A GROUP BY or PARTITION BY on a map makes a map key: refused
		// as in a declared schema, whatever the key format.
		if containsMap(c.Type) {
			return nil, posErr(p.sel.Pos, fmt.Errorf("%w: %s", ErrInvalid, mapKeyMessage(c.Name, c.Type)))
		}
	}
	if ex := p.target.Existing; ex != nil {
		if len(ex.Schema.Headers()) > 0 {
			return nil, posErr(p.sel.Pos, fmt.Errorf("%w: Cannot insert into %s because it has header columns", ErrInvalid, ex.Name))
		}
		if err := compatible(ex, keyCols, valCols); err != nil {
			return nil, posErr(p.sel.Pos, err)
		}
		writable := (!format.UsesRegistry(ex.KeyFormat) || len(ex.Schema.Keys()) == 0 || ex.KeyProps.Schema != "") &&
			(!format.UsesRegistry(ex.ValueFormat) || ex.ValueProps.Schema != "")
		if writable {
			return ex, nil
		}
		// Writing to a source declared for reading: its schemas are
		// registered (or found) for this query's writes.
		w := *ex
		if err := p.registerSinkSchemas(&w); err != nil {
			return nil, err
		}
		return &w, nil
	}
	with := p.target.With
	topic := with["KAFKA_TOPIC"]
	defKey, defValue := p.src.KeyFormat, p.src.ValueFormat
	if old := p.target.Replaces; old != nil {
		defKey, defValue = old.KeyFormat, old.ValueFormat
		if topic == "" {
			topic = old.Topic
		}
		if _, ok := with["PARTITIONS"]; !ok && old.Partitions > 0 {
			partitions = old.Partitions
		}
	}
	if topic == "" {
		topic = strings.ToUpper(p.target.Name)
	}
	if err := with.checkFormatNames(); err != nil {
		return nil, withErr(p.sel.Pos, p.target.WithClause, err)
	}
	keyFormat, valueFormat := with.formats(defKey, defValue)
	_, explicit := with["KEY_FORMAT"]
	if p.partitionBy {
		_, anyFormat := with["FORMAT"]
		var err error
		if keyFormat, err = partitionKeyFormat(keyFormat, explicit || anyFormat, keyCols); err != nil {
			return nil, posErr(p.sel.Pos, err)
		}
	} else if !explicit && keyFormat == "KAFKA" && len(keyCols) > 1 {
		keyFormat = "JSON" // KAFKA holds one column; several need a structured format
	} else if !explicit && strings.EqualFold(keyFormat, "NONE") && len(keyCols) > 0 {
		// A join of keyless sources has a key: the join expression.
		keyFormat = "KAFKA"
		if len(keyCols) > 1 || !isPrimitive(keyCols[0].Type) {
			keyFormat = "JSON"
		}
	}
	parts, err := with.partitions()
	if err != nil {
		return nil, withErr(p.sel.Pos, p.target.WithClause, err)
	}
	if parts == 0 {
		parts = partitions
	}
	replicas, err := with.replicas()
	if err != nil {
		return nil, withErr(p.sel.Pos, p.target.WithClause, err)
	}
	s := &Source{
		Name: p.target.Name, Kind: p.target.Kind, Topic: topic, KeyFormat: keyFormat, ValueFormat: valueFormat,
		Schema: types.Schema{Columns: append(append([]types.Column{}, keyCols...), valCols...)}, Partitions: parts,
		Window: win, WindowSize: winSize, Statement: p.target.Text, QueryID: p.q.ID, Replicas: replicas,
	}
	// WRAP_SINGLE_VALUE is not inherited from the source: as in ksqlDB,
	// a result's single value column is wrapped unless the statement
	// says otherwise (the source's setting described its own topic).
	s.KeyProps, s.ValueProps = with.formatProps()
	if err := with.checkSchemaNames(keyFormat, valueFormat); err != nil {
		return nil, posErr(p.sel.Pos, err)
	}
	if err := with.checkDelimiters(keyFormat, valueFormat); err != nil {
		return nil, withErr(p.sel.Pos, p.target.WithClause, err)
	}
	with.inheritDelimiters(p.src, s)
	if err := p.registerSinkSchemas(s); err != nil {
		return nil, err
	}
	// TIMESTAMP names the output column that becomes each record's
	// timestamp; readers of the result take event time from it too.
	s.TimestampColumn, s.TimestampFormat = strings.ToUpper(with["TIMESTAMP"]), with["TIMESTAMP_FORMAT"]
	if err := resolveTimestampColumn(s); err != nil {
		return nil, withErr(p.sel.Pos, p.target.WithClause, err)
	}
	if err := validateFormats(s); err != nil {
		return nil, withErr(p.sel.Pos, p.target.WithClause, err)
	}
	return s, nil
}

// registerSinkSchemas registers the schemas a sink in a Schema Registry
// format writes with (KEY_SCHEMA_FULL_NAME / VALUE_SCHEMA_FULL_NAME, in
// the props, name their records).
func (p *planning) registerSinkSchemas(s *Source) error {
	if err := p.cat.registerSink(s.Topic, true, s.KeyFormat, s.Schema.Keys(), &s.KeyProps); err != nil {
		return posErr(p.sel.Pos, err)
	}
	if err := p.cat.registerSink(s.Topic, false, s.ValueFormat, s.Schema.Values(), &s.ValueProps); err != nil {
		return posErr(p.sel.Pos, err)
	}
	return nil
}

func compatible(ex *Source, keyCols, valCols []types.Column) error {
	exKeys, exVals := ex.Schema.Keys(), ex.Schema.Values()
	same := len(exKeys) == len(keyCols) && len(exVals) == len(valCols)
	for i := 0; same && i < len(keyCols); i++ {
		same = exKeys[i].Type.Equal(keyCols[i].Type) && strings.EqualFold(exKeys[i].Name, keyCols[i].Name)
	}
	for i := 0; same && i < len(valCols); i++ {
		same = exVals[i].Type.Equal(valCols[i].Type) && strings.EqualFold(exVals[i].Name, valCols[i].Name)
	}
	if !same {
		got := types.Schema{Columns: append(append([]types.Column{}, keyCols...), valCols...)}
		return fmt.Errorf("%w: Incompatible schema between results and sink.\nResult schema is %s\nSink schema is %s", ErrInvalid, schemaText(got), schemaText(ex.Schema))
	}
	return nil
}

// mustBeBoolean rejects a WHERE or HAVING condition of another type, in
// ksqlDB's words.
func mustBeBoolean(e parser.Expr, c expr.Compiled, clause string) error {
	if c.Type.Kind == types.Boolean || c.Type.Kind == types.Unknown {
		return nil
	}
	return posErr(e.Position(), fmt.Errorf("%w: Type error in %s expression: Should evaluate to boolean but is %s (%s) instead.",
		expr.ErrType, clause, parser.KsqlText(e), c.Type))
}
