package engine

import (
	"context"
	"fmt"

	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner"
	"github.com/sluice-sql/sluice/types"
)

// createTypeCommand is CREATE TYPE.
type createTypeCommand struct{}

func (createTypeCommand) check(_ context.Context, e *Engine, st *parser.CreateType, c call) (*Result, bool, error) {
	t, exists, err := planner.CreateType(e.cat, st)
	if err == nil && exists {
		return &Result{Statement: c.text, Message: typeExists(st.Name, t)}, true, nil
	}
	return nil, false, err
}

func (createTypeCommand) apply(_ context.Context, e *Engine, st *parser.CreateType, c call) (*Result, error) {
	t, exists, err := planner.CreateType(e.cat, st)
	if err != nil {
		return nil, err
	}
	if exists {
		return &Result{Statement: c.text, Message: typeExists(st.Name, t)}, nil
	}
	e.cat.RegisterType(st.Name, t)
	return &Result{Statement: c.text, Message: fmt.Sprintf("Registered custom type with name '%s' and SQL type %s", st.Name, t)}, nil
}

func (createTypeCommand) statusID(st *parser.CreateType) string { return "type/" + st.Name + "/create" }

// dropTypeCommand is DROP TYPE.
type dropTypeCommand struct{}

func (dropTypeCommand) check(_ context.Context, e *Engine, st *parser.DropType, c call) (*Result, bool, error) {
	exists, err := planner.CheckDropType(e.cat, st)
	if err == nil && !exists {
		return &Result{Statement: c.text, Message: noSuchType(st.Name)}, true, nil
	}
	return nil, false, err
}

func (dropTypeCommand) apply(_ context.Context, e *Engine, st *parser.DropType, c call) (*Result, error) {
	if _, err := planner.CheckDropType(e.cat, st); err != nil {
		return nil, err
	}
	if e.cat.DropType(st.Name) {
		return &Result{Statement: c.text, Message: fmt.Sprintf("Dropped type '%s'", st.Name)}, nil
	}
	return &Result{Statement: c.text, Message: noSuchType(st.Name)}, nil
}

func (dropTypeCommand) statusID(st *parser.DropType) string { return "type/" + st.Name + "/drop" }

// typeExists and noSuchType are ksqlDB's messages for CREATE TYPE IF
// NOT EXISTS and DROP TYPE IF EXISTS that change nothing.
func typeExists(name string, t types.Type) string {
	return fmt.Sprintf("%s is already registered with type %s", name, t)
}

func noSuchType(name string) string { return fmt.Sprintf("Type '%s' does not exist", name) }
