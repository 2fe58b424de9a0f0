package engine

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/sluice-sql/sluice/parser"
)

// session holds the properties statements run with: the engine's own,
// or those of one ExecuteWith call.
type session struct {
	mu    sync.Mutex
	props map[string]string
	// vars are the variables DEFINE set, by lower-cased name.
	vars map[string]string
}

func (s *session) define(name, value string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.vars == nil {
		s.vars = map[string]string{}
	}
	s.vars[strings.ToLower(name)] = value
}

func (s *session) undefine(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.vars, strings.ToLower(name))
}

// variables returns a copy of the variables.
func (s *session) variables() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]string, len(s.vars))
	for k, v := range s.vars {
		out[k] = v
	}
	return out
}

// variableRef is a variable's use: ${name}.
var variableRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// substitute replaces each ${name} of a defined variable with its value,
// as ksqlDB does before parsing; an undefined one stays as it is.
func (s *session) substitute(text string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.vars) == 0 {
		return text
	}
	return variableRef.ReplaceAllStringFunc(text, func(m string) string {
		if v, ok := s.vars[strings.ToLower(m[2:len(m)-1])]; ok {
			return v
		}
		return m
	})
}

// snapshot returns a copy of the properties.
func (s *session) snapshot() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]string, len(s.props))
	for k, v := range s.props {
		out[k] = v
	}
	return out
}

func (s *session) set(name, value string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.props[strings.ToLower(name)] = value
}

func (s *session) unset(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.props, strings.ToLower(name))
}

// setStatement is SET 'name'='value': a session property.
type setStatement struct{}

func (setStatement) execute(_ context.Context, e *Engine, st *parser.SetProperty, c call, sess *session) (*Result, error) {
	if err := e.setProperty(sess, st.Name, st.Value); err != nil {
		return nil, err
	}
	return &Result{Statement: c.text, Message: fmt.Sprintf("Successfully changed local property '%s' to '%s'.", st.Name, st.Value)}, nil
}

// setRequest is SET in a request of ksqlDB's /ksql endpoint: it sets
// the property for the request's later statements only.
func (setStatement) setRequest(st *parser.SetProperty, props map[string]string) error {
	if err := CheckSet(st.Name, st.Value); err != nil {
		return err
	}
	props[st.Name] = st.Value
	return nil
}

// unsetStatement is UNSET 'name'.
type unsetStatement struct{}

// setRequest is UNSET in a request of /ksql: the property, under any of
// its names, no longer holds for the request's later statements.
func (unsetStatement) setRequest(st *parser.UnsetProperty, props map[string]string) error {
	names := UnsetNames(st.Name)
	for k := range props {
		if slices.Contains(names, strings.ToLower(k)) {
			delete(props, k)
		}
	}
	return nil
}

func (unsetStatement) execute(_ context.Context, _ *Engine, st *parser.UnsetProperty, c call, sess *session) (*Result, error) {
	for _, name := range UnsetNames(st.Name) {
		sess.unset(name)
	}
	return &Result{Statement: c.text, Message: fmt.Sprintf("Successfully unset local property '%s'.", st.Name)}, nil
}

// defineStatement is DEFINE name = 'value': a session variable.
type defineStatement struct{}

func (defineStatement) execute(_ context.Context, _ *Engine, st *parser.Define, c call, sess *session) (*Result, error) {
	sess.define(st.Name, st.Value)
	return &Result{Statement: c.text, Message: fmt.Sprintf("Defined variable %s.", strings.ToUpper(st.Name))}, nil
}

// undefineStatement is UNDEFINE name.
type undefineStatement struct{}

func (undefineStatement) execute(_ context.Context, _ *Engine, st *parser.Undefine, c call, sess *session) (*Result, error) {
	sess.undefine(st.Name)
	return &Result{Statement: c.text, Message: fmt.Sprintf("Undefined variable %s.", strings.ToUpper(st.Name))}, nil
}
