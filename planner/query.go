package planner

import (
	"errors"
	"fmt"
	"strings"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner/logical"
	"github.com/sluice-sql/sluice/types"
)

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
	ID string
	// UserFunctions names the user-defined functions the query calls,
	// sorted (DROP FUNCTION refuses while a persistent query does).
	UserFunctions []string
	Topology      *exec.Topology
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
	// ScalablePush says the push query may be served from the output of
	// the persistent query writing its source (the scalable-push rule).
	ScalablePush bool
}

// InternalPrefix is the name prefix of a query's internal topics.
func InternalPrefix(serviceID, queryID string) string {
	if serviceID == "" {
		serviceID = "default"
	}
	return "_sluice-" + serviceID + "-query-" + queryID
}

// PlanQuery plans a SELECT. With a target it is a persistent query
// writing a topic; without, a transient query delivering rows to the
// client through Query.Collect.
func PlanQuery(cat *Catalog, sel *parser.Select, target *Target, queryID string, opts Options) (*Query, error) {
	p := &planning{cat: cat, sel: sel, target: target, opts: opts, q: &Query{ID: queryID, Limit: sel.Limit}}
	if err := p.validatePull(); err != nil {
		return nil, err
	}
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
	if err := p.bind(); err != nil {
		return nil, err
	}
	if err := p.runRules(onLogical); err != nil {
		return nil, err
	}
	cl := lower(sel, p.q.Logical)
	p.cl = cl
	if len(cl.Joins) > 0 {
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
		if p.items, err = joinItems(cl.Items, p.join.layout, sc, len(cl.PartitionBy) > 0, target != nil); err != nil {
			return nil, err
		}
		if err := p.checkSinkTimestampNamed(); err != nil {
			return nil, err
		}
		// PARTITION BY and GROUP BY choose the key themselves.
		if len(cl.PartitionBy) == 0 && !cl.Aggregate {
			if err := p.joinKey(); err != nil {
				return nil, err
			}
		}
	} else {
		p.items = cl.Columns
		p.q.Sources = []string{p.src.Name}
		if err := p.checkSinkTimestampNamed(); err != nil {
			return nil, err
		}
	}
	p.implicitDecimalCasts()
	var err error
	if target != nil {
		p.q.Topology.ErrorTopic = target.With["ERROR_TOPIC"]
	}
	// These refuse what was written (a WINDOW with PARTITION BY or
	// without an aggregate is not in the plan and is refused below).
	if _, ok := target.withProp("LATE_TOPIC"); ok && sel.Window == nil && !p.streamJoin() {
		return nil, posErr(sel.Pos, fmt.Errorf("%w: LATE_TOPIC needs a windowed aggregation: only windows close and turn records away", ErrInvalid))
	}
	if p.q.Topology.IdleTimeout, err = idleTimeout(target, opts); err != nil {
		return nil, posErr(sel.Pos, err)
	}
	if sel.Emit == parser.EmitFinal && sel.Window == nil {
		return nil, posErr(sel.Pos, fmt.Errorf("%w: EMIT FINAL is only supported for windowed aggregations.", ErrInvalid))
	}
	switch {
	case len(cl.PartitionBy) > 0:
		err = p.planPartitionBy()
	case cl.Aggregate:
		if p.hasTableFunctions() {
			return nil, posErr(sel.Pos, fmt.Errorf("%w: Table functions cannot be used with aggregations.", ErrInvalid))
		}
		err = p.planAggregate()
	default:
		// Without an aggregate the plan has no window and no HAVING:
		// the statement says which was written.
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
	if p.pull() && p.join == nil && p.src.Kind == parser.KindTable {
		readStore(p.q.Topology, p.spec, p.src.Name, p.store)
	}
	p.nameLogical()
	if err := p.runRules(onPlan); err != nil {
		return nil, err
	}
	p.q.UserFunctions = p.usedFunctions.names()
	return p.q, nil
}

type planning struct {
	cat *Catalog
	// sel is the SELECT as written (after the onStatement rules): what
	// is not plan (positions for errors, EMIT, LIMIT, FROM). cl are the
	// clauses the builder compiles, read from the logical plan.
	sel    *parser.Select
	cl     *clauses
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
	// nullKeysOnFailure counts the PARTITION BY keys the projection
	// computes first: a function failing in one gives a NULL key, not a
	// bad record (exec.ProjectNode.NullKeysOnFailure).
	nullKeysOnFailure int
	// bound holds what binding found of each join, for the rules.
	bound []*boundJoin
	// whereAll is a join query's WHERE as written when the
	// predicate-pushdown rule moved parts of it onto the join's inputs
	// (cl.Where is what stays above); pushFailed says the join builder
	// could not compile a moved part on its input, so the whole WHERE
	// runs above the join after all.
	whereAll   parser.Expr
	pushFailed bool
	// final is the final chain as built, for the rules.
	final builtChain
	// store is the state store keeping the table a pull query reads
	// (Options.TableStore; "" when not asked).
	store string
	// usedFunctions collects the user-defined functions the expressions
	// bind.
	usedFunctions functionSet
}

func (p *planning) hasAggregates() bool {
	found := false
	for _, it := range p.items {
		walkExpr(it.expr, func(e parser.Expr) {
			if f, ok := e.(*parser.FuncCall); ok && p.isAggregate(f.Name) {
				found = true
			}
		})
	}
	return found
}

func (p *planning) whereNode(sc expr.Scope) (*exec.FilterNode, error) {
	where := p.cl.Where
	if p.whereAll != nil {
		// Checked whole, as written, whatever the predicate-pushdown rule
		// moved below the join: its errors are the same either way.
		where = p.whereAll
	}
	if where == nil {
		return nil, nil
	}
	f, err := p.filterNode(where, sc)
	if err != nil || where == p.cl.Where || p.pushFailed {
		return f, err
	}
	if p.cl.Where == nil {
		return nil, nil
	}
	return p.filterNode(p.cl.Where, sc)
}

// filterNode compiles a WHERE over scope sc.
func (p *planning) filterNode(where parser.Expr, sc expr.Scope) (*exec.FilterNode, error) {
	var unknown *parser.ColumnRef
	walkExpr(where, func(x parser.Expr) {
		if ref, ok := x.(*parser.ColumnRef); ok && unknown == nil && isWindowBound(ref.Name) {
			if _, _, err := sc.Resolve(ref); err != nil {
				unknown = ref
			}
		}
	})
	if unknown != nil {
		return nil, posErr(unknown.Pos, fmt.Errorf("%w: Error in WHERE expression: Unknown column %s.", ErrInvalid, strings.ToUpper(unknown.Name)))
	}
	c, err := expr.Compile(where, p.withFunctions(sc))
	if err != nil && errors.Is(err, expr.ErrType) && p.join != nil {
		// Over a join ksqlDB checks the WHERE with the join's column
		// names, and its type errors quote them (I1_BAR).
		where := p.join.layout.joinNames(where)
		if _, named := expr.Compile(where, p.withFunctions(sc)); errors.Is(named, expr.ErrType) {
			return nil, expr.InClauseOf(named, "WHERE", where)
		}
	}
	if err != nil {
		return nil, expr.InClauseOf(err, "WHERE", where)
	}
	if err := mustBeBoolean(where, c, "WHERE"); err != nil {
		return nil, err
	}
	// A change-data-capture table's row that stops passing leaves the
	// result table: the database changed it, the result must follow.
	deletes := p.target != nil && p.spec != nil && p.spec.Table && p.spec.Enveloped()
	return &exec.FilterNode{Pred: c.Eval, Text: where.String(), RejectDeletes: deletes}, nil
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
