package logical

import "fmt"

// Sink writes the result to a stream or table's topic: a persistent
// query.
type Sink struct {
	Name  string
	Table bool
	Topic string
	Input Node
}

var _ Node = (*Sink)(nil)

func (s *Sink) Describe() string {
	kind := "stream"
	if s.Table {
		kind = "table"
	}
	return fmt.Sprintf("sink %s (%s, topic %s)", s.Name, kind, s.Topic)
}
func (s *Sink) Inputs() []Node { return one(s.Input) }
func (s *Sink) WithInputs(ins ...Node) Node {
	n := *s
	n.Input = ins[0]
	return &n
}
