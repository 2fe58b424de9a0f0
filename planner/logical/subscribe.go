package logical

// Subscribe delivers the result's rows to a client as they come: a push
// query (EMIT CHANGES).
type Subscribe struct {
	// ScalableFrom, when set, names the source whose writing query's
	// output may serve the rows (a scalable push query, the scalable-push
	// rule) instead of a consumer of the query's own.
	ScalableFrom string
	Input        Node
}

var _ Node = (*Subscribe)(nil)

func (s *Subscribe) Describe() string {
	if s.ScalableFrom != "" {
		return "subscribe (rows to the client as they come; scalable: servable from the output of the query writing " + s.ScalableFrom + ")"
	}
	return "subscribe (rows to the client as they come)"
}
func (s *Subscribe) Inputs() []Node { return one(s.Input) }
func (s *Subscribe) WithInputs(ins ...Node) Node {
	n := *s
	n.Input = ins[0]
	return &n
}
