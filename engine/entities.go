package engine

import (
	"context"
	"fmt"
	"github.com/sluice-sql/sluice/expr"
	"sort"
	"strings"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner"
	"github.com/sluice-sql/sluice/types"
)

// Entity is the structured result of an informational statement (SHOW,
// DESCRIBE, EXPLAIN, ASSERT), set on Result.Entity. The engine writes no
// text for it: callers lay it out (the shell and `sluice run` with
// shell.WriteEntity, the server in ksqlDB's shape with WireEntity).
// It is one of *SourceList, *SourceDescription, *QueryList,
// *QueryDescription, *TopicList, *PropertyList, *FunctionList,
// *FunctionDescription and *TypeList.
type Entity interface{ entity() }

// SourceList answers SHOW STREAMS and SHOW TABLES.
type SourceList struct {
	Kind    parser.SourceKind
	Sources []SourceSummary
}

// SourceSummary is one stream or table in a list.
type SourceSummary struct {
	Name        string
	Kind        parser.SourceKind
	Topic       string
	KeyFormat   string
	ValueFormat string
	Windowed    bool
}

// SourceDescription answers DESCRIBE name [EXTENDED].
type SourceDescription struct {
	SourceSummary
	Partitions int32
	// WindowType is "TUMBLING", "HOPPING", "SESSION" or "" for sources
	// whose keys carry no window.
	WindowType      string
	TimestampColumn string
	Fields          []Field
	Statement       string
	// ReadQueries and WriteQueries are the persistent queries reading and
	// writing the source.
	ReadQueries  []QuerySummary
	WriteQueries []QuerySummary
	Extended     bool
	// Statistics and ErrorStats summarize the writing query's counters
	// (EXTENDED only).
	Statistics string
	ErrorStats string
	// Warnings say why adding instances would not speed up the writing
	// query (EXTENDED only): a hot key, too few partitions.
	Warnings []string
	// Runtime is, with EXTENDED, what this instance knows of the source
	// and its writing query as it runs (lateness, windows, counters,
	// stalls, tasks, owners, state stores), as text: ksqlDB's REST
	// entity has no place for it, so only local callers print it.
	Runtime string
}

// Field is a column of a source or of a query's output.
type Field struct {
	Name string
	Type types.Type
	Key  bool
	// Header marks a HEADERS column (HeaderKey "") or a HEADER('k') one.
	Header    bool
	HeaderKey string
}

// QueryList answers SHOW QUERIES.
type QueryList struct{ Queries []QuerySummary }

// QuerySummary is one persistent query.
type QuerySummary struct {
	ID        string
	Statement string
	// State is RUNNING, STALLED (a partition has input but made no
	// committed progress for sluice.stall.timeout; see Stalls) or ERROR.
	State string
	Error string
	// Stalls are this instance's stalled partitions, with what each
	// waits on.
	Stalls     []exec.Stall
	Sources    []string
	Sinks      []string
	SinkTopics []string
	// Owners are the instances of the service holding the query's
	// partitions (with Config.Owners; none for a lone engine).
	Owners []Owner
}

// QueryDescription answers EXPLAIN.
type QueryDescription struct {
	QuerySummary
	Fields   []Field
	Topology string
	// Warning is the grace warning EXPLAIN adds for a windowed query whose
	// grace would have dropped many records.
	Warning string
	// Warnings say why adding instances would not speed up a running
	// query: a hot key, too few partitions.
	Warnings []string
}

// TopicList answers SHOW TOPICS.
type TopicList struct{ Topics []TopicSummary }

// TopicSummary is one Kafka topic.
type TopicSummary struct {
	Name string
	// Replicas has the replica count of each partition.
	Replicas []int
}

// PropertyList answers SHOW PROPERTIES.
type PropertyList struct{ Properties []Property }

// Property is one property in force.
type Property struct {
	Name  string
	Value string
	// Overridden says the value comes from the request, not the engine.
	Overridden bool
}

// TypeList answers SHOW TYPES: the custom types, sorted by name.
type TypeList struct{ Types []planner.CustomType }

// FunctionList answers SHOW FUNCTIONS, and FunctionDescription
// DESCRIBE FUNCTION.
type FunctionList struct{ Functions []expr.FunctionInfo }

// FunctionDescription is one function.
// A user-defined function's has its overloads.
type FunctionDescription struct {
	expr.FunctionInfo
	Overloads []*expr.UserFunction
}

func (*FunctionList) entity()        {}
func (*TypeList) entity()            {}
func (*FunctionDescription) entity() {}
func (*SourceList) entity()          {}
func (*SourceDescription) entity()   {}
func (*QueryList) entity()           {}
func (*QueryDescription) entity()    {}
func (*TopicList) entity()           {}
func (*PropertyList) entity()        {}

func summarize(s *planner.Source) SourceSummary {
	return SourceSummary{Name: s.Name, Kind: s.Kind, Topic: s.Topic, KeyFormat: s.KeyFormat, ValueFormat: s.ValueFormat,
		Windowed: s.Window != exec.NotWindowed}
}

func fieldsOf(schema types.Schema) []Field {
	out := make([]Field, len(schema.Columns))
	for i, c := range schema.Columns {
		out[i] = Field{Name: c.Name, Type: c.Type, Key: c.Key, Header: c.Header, HeaderKey: c.HeaderKey}
	}
	return out
}

func (e *Engine) querySummary(q *Query) QuerySummary {
	s := QuerySummary{ID: q.ID, Statement: q.Statement, State: "RUNNING", Sources: q.Plan.Sources}
	if err := q.Err(); err != nil {
		s.State, s.Error = "ERROR", err.Error()
	} else if q.isPaused() {
		s.State = QueryPaused
	} else if stalls := q.Stalls(); len(stalls) > 0 {
		s.State = QueryStalled
		s.Stalls = stalls
	}
	if q.Plan.Sink != nil {
		s.Sinks, s.SinkTopics = []string{q.Plan.Sink.Name}, []string{q.Plan.Sink.Topic}
	}
	if e.cfg.Owners != nil {
		s.Owners = e.cfg.Owners(q.ID)
	}
	return s
}

// queriesOf returns the persistent queries reading and writing a source.
func (e *Engine) queriesOf(name string) (readers, writers []QuerySummary) {
	for _, q := range e.Queries() {
		for _, s := range q.Plan.Sources {
			if strings.EqualFold(s, name) {
				readers = append(readers, e.querySummary(q))
				break
			}
		}
		if q.Plan.Sink != nil && strings.EqualFold(q.Plan.Sink.Name, name) {
			writers = append(writers, e.querySummary(q))
		}
	}
	return readers, writers
}

func (e *Engine) sourceList(kind parser.SourceKind) *SourceList {
	l := &SourceList{Kind: kind, Sources: []SourceSummary{}}
	for _, s := range e.cat.Sources(kind) {
		l.Sources = append(l.Sources, summarize(s))
	}
	return l
}

func (e *Engine) queryList() *QueryList {
	l := &QueryList{Queries: []QuerySummary{}}
	for _, q := range e.Queries() {
		l.Queries = append(l.Queries, e.querySummary(q))
	}
	return l
}

func (e *Engine) sourceDescription(src *planner.Source, extended bool) *SourceDescription {
	d := &SourceDescription{SourceSummary: summarize(src), Partitions: src.Partitions, TimestampColumn: src.TimestampColumn,
		Fields: fieldsOf(src.Schema), Statement: src.Statement, Extended: extended}
	d.WindowType = e.windowType(src)
	d.ReadQueries, d.WriteQueries = e.queriesOf(src.Name)
	if q := e.query(src.QueryID); q != nil && extended {
		m := q.Metrics
		d.Statistics = fmt.Sprintf("records-in: %d, records-out: %d, late-dropped: %d", m.RecordsIn.Load(), m.RecordsOut.Load(), m.LateDropped.Load())
		var errs []string
		for _, kind := range m.ErrorKinds() {
			errs = append(errs, fmt.Sprintf("%s-errors: %d", kind, m.Errors()[kind]))
		}
		d.ErrorStats = strings.Join(errs, ", ")
	}
	return d
}

// topicList lists the Kafka topics users made, leaving out internal ones
// (names starting with '_': Sluice's repartition and changelog topics,
// Kafka's own), as ksqlDB's SHOW TOPICS does.
func (e *Engine) topicList(ctx context.Context) (*TopicList, error) {
	l := &TopicList{Topics: []TopicSummary{}}
	topics, err := e.clu.userTopics(ctx)
	if err != nil {
		return nil, err
	}
	l.Topics = append(l.Topics, topics...)
	sort.Slice(l.Topics, func(i, j int) bool { return l.Topics[i].Name < l.Topics[j].Name })
	return l, nil
}

// windowType names the window kind of a windowed source the way ksqlDB
// does; the kind of a time window is known from the query writing it.
func (e *Engine) windowType(src *planner.Source) string {
	switch src.Window {
	case exec.NotWindowed:
		return ""
	case exec.SessionWindowed:
		return "SESSION"
	}
	if q := e.query(src.QueryID); q != nil {
		if w := windowOf(q.Plan.Topology); w != nil {
			return strings.ToUpper(w.Kind.String())
		}
	}
	return "TUMBLING"
}

func windowOf(topo *exec.Topology) *exec.WindowSpec {
	for _, sub := range topo.Subs {
		for _, n := range sub.Nodes {
			if agg, ok := n.(*exec.AggregateNode); ok && agg.Window != nil {
				return agg.Window
			}
		}
	}
	return nil
}

func replicas(partitions, n int) []int {
	out := make([]int, partitions)
	for i := range out {
		out[i] = n
	}
	return out
}
