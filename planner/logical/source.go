package logical

import (
	"fmt"
	"strings"
)

// Source reads a stream or a table from its topic.
type Source struct {
	Name  string
	Table bool
	Topic string
	// Reads, when set, lists the only value columns the query reads (the
	// column-pruning rule); nil: all of them.
	Reads []string
	// Keying is how the source's topic is keyed (not printed).
	Keying Keying
}

var _ Node = (*Source)(nil)

func (s *Source) Describe() string {
	kind := "stream"
	if s.Table {
		kind = "table"
	}
	out := fmt.Sprintf("source %s (%s, topic %s", s.Name, kind, s.Topic)
	switch {
	case s.Reads == nil:
	case len(s.Reads) == 0:
		out += ", reads no value columns"
	default:
		out += ", reads " + strings.Join(s.Reads, ", ")
	}
	return out + ")"
}
func (s *Source) Inputs() []Node          { return nil }
func (s *Source) WithInputs(...Node) Node { return s }
