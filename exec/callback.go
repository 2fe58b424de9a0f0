package exec

import (
	"strings"
	"sync"
)

// CallbackNode ends the chain of a transient query: rows go to Fn instead
// of a topic. Fn is set by the engine before the query starts and may be
// called from several tasks at once; it serialises itself with mu.
type CallbackNode struct {
	Names []string
	Fn    func(row *Row)
	mu    sync.Mutex
}

var _ Node = (*CallbackNode)(nil)

func (n *CallbackNode) New(Operator) (Operator, error) { return &callback{n}, nil }
func (n *CallbackNode) Describe() string               { return "emit to client " + strings.Join(n.Names, ", ") }
func (n *CallbackNode) Stateful() bool                 { return false }
func (n *CallbackNode) StoreNames() []string           { return nil }

type callback struct{ node *CallbackNode }

func (c *callback) Open(*TaskContext) error        { return nil }
func (c *callback) AdvanceTime(*TaskContext) error { return nil }
func (c *callback) Close() error                   { return nil }

func (c *callback) Process(tc *TaskContext, row *Row) error {
	tc.Metrics.RecordsOut.Add(1)
	c.node.mu.Lock()
	defer c.node.mu.Unlock()
	if c.node.Fn != nil {
		c.node.Fn(row)
	}
	return nil
}
