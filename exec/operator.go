package exec

import (
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/sluice-sql/sluice/state"
)

// Operator is one step of a task's chain. Its lifecycle is explicit:
// Open once before the first record (stores are available then), Process
// for each row, AdvanceTime after stream time moves, Close at the end.
// Operators forward results by calling the next operator's Process.
type Operator interface {
	Open(tc *TaskContext) error
	Process(tc *TaskContext, row *Row) error
	AdvanceTime(tc *TaskContext) error
	Close() error
}

// Node is the plan-time description of an operator: it is shared by all
// tasks of a sub-topology and creates one Operator per task.
type Node interface {
	// New creates the operator for one task, forwarding to next (nil for
	// the last node of a chain).
	New(next Operator) (Operator, error)
	// Describe is one line for EXPLAIN.
	Describe() string
	// Stateful reports whether the operator keeps state.
	Stateful() bool
	// StoreNames lists the state stores the operator needs.
	StoreNames() []string
}

// TaskContext is what an operator sees of its task.
type TaskContext struct {
	QueryID    string
	Partition  int32
	StreamTime int64
	Out        Output
	Metrics    *Metrics
	Log        *slog.Logger
	stores     map[string]*state.Store
	// input is the record being processed, so repartition sinks can stamp
	// what they write with where it came from.
	input *Record
	// inputIdx is the number of the task input input was read from.
	inputIdx int32
	// outSeq numbers the repartition records written for input, so that
	// each can be told apart when deduplicating.
	outSeq int64
	// arena holds the keys and values of the records the task produces,
	// and out is the Record each is handed to Out in (Out keeps neither
	// the Record nor, beyond the bytes, anything of it).
	arena outArena
	out   Record
}

// record returns the task's Record for the next output, emptied.
func (tc *TaskContext) record() *Record {
	tc.out = Record{}
	return &tc.out
}

// Store returns the named state store of this task's partition.
func (tc *TaskContext) Store(name string) (*state.Store, error) {
	s, ok := tc.stores[name]
	if !ok {
		return nil, fmt.Errorf("query %s: state store %s is not open for partition %d", tc.QueryID, name, tc.Partition)
	}
	return s, nil
}

// forward is embedded by operators that pass rows and time on unchanged
// by default.
type forward struct{ next Operator }

// rowBorrower is an operator that keeps nothing of a row it is handed
// once Process returns: not the Row, nor its Cols or Old slices (values
// in them may be kept: they are never written to). An operator whose
// next borrows rows may hand it the same Row and slices for every row it
// emits, filled anew, instead of allocating them per row.
type rowBorrower interface {
	borrowsRows() bool
}

// borrowsRows reports whether op keeps nothing of the rows it is handed
// (rowBorrower); an operator that does not say keeps them.
func borrowsRows(op Operator) bool {
	b, ok := op.(rowBorrower)
	return ok && b.borrowsRows()
}

// countedOp counts the rows into an operator of a task's main chain, for
// the per-operator rates of the web console (Metrics.OperatorRows).
type countedOp struct {
	Operator
	rows *atomic.Int64
}

func (c *countedOp) Process(tc *TaskContext, row *Row) error {
	c.rows.Add(1)
	return c.Operator.Process(tc, row)
}

func (c *countedOp) borrowsRows() bool { return borrowsRows(c.Operator) }

func (f *forward) Open(*TaskContext) error { return nil }

func (f *forward) emit(tc *TaskContext, row *Row) error {
	if f.next == nil {
		return nil
	}
	return f.next.Process(tc, row)
}

func (f *forward) AdvanceTime(tc *TaskContext) error {
	if f.next == nil {
		return nil
	}
	return f.next.AdvanceTime(tc)
}

func (f *forward) Close() error { return nil }
