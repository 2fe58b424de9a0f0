package logical

// Subscribe delivers the result's rows to a client as they come: a push
// query (EMIT CHANGES).
type Subscribe struct {
	Input Node
}

var _ Node = (*Subscribe)(nil)

func (s *Subscribe) Describe() string { return "subscribe (rows to the client as they come)" }
func (s *Subscribe) Inputs() []Node   { return one(s.Input) }
