package engine

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner"
)

// commandProps returns the session properties a command carries: all
// but the ones that configure this instance rather than a query, so a
// replay elsewhere plans and runs the query the same way.
func commandProps(props map[string]string) map[string]string {
	delete(props, MinFreeBytesProperty)
	return props
}

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

// prop returns a property (lower-cased name) of props or def.
func prop(props map[string]string, name, def string) string {
	if v, ok := props[name]; ok {
		return v
	}
	return def
}

func (e *Engine) planOptions(props map[string]string) planner.Options {
	return planner.Options{
		ServiceID:               e.cfg.ServiceID,
		TableRetention:          prop(props, planner.TableRetentionProperty, ""),
		TimestampThrowOnInvalid: strings.EqualFold(prop(props, planner.TimestampThrowOnInvalidProperty, "false"), "true"),
		Compat:                  strings.ToLower(prop(props, planner.CompatProperty, "")),
		IdleTimeout:             prop(props, planner.IdleTimeoutProperty, ""),
		DefaultKeyFormat:        strings.ToUpper(prop(props, planner.DefaultKeyFormatProperty, "")),
		DefaultValueFormat:      strings.ToUpper(prop(props, planner.DefaultValueFormatProperty, "")),
		NewQueryPlanner:         strings.EqualFold(prop(props, planner.NewQueryPlannerProperty, "false"), "true"),
	}
}

// setStatement is SET 'name'='value': a session property.
type setStatement struct{}

func (setStatement) execute(_ context.Context, e *Engine, st *parser.SetProperty, c call, sess *session) (*Result, error) {
	if strings.EqualFold(st.Name, MinFreeBytesProperty) {
		n, err := parseMinFree(st.Value)
		if err != nil {
			return nil, err
		}
		e.db.SetMinFreeBytes(n)
	}
	if strings.EqualFold(st.Name, StallTimeoutProperty) {
		if _, err := stallTimeout(map[string]string{StallTimeoutProperty: st.Value}); err != nil {
			return nil, err
		}
	}
	sess.set(st.Name, st.Value)
	return &Result{Statement: c.text, Message: fmt.Sprintf("Successfully changed local property '%s' to '%s'.", st.Name, st.Value)}, nil
}

// unsetStatement is UNSET 'name'.
type unsetStatement struct{}

func (unsetStatement) execute(_ context.Context, _ *Engine, st *parser.UnsetProperty, c call, sess *session) (*Result, error) {
	sess.unset(st.Name)
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
