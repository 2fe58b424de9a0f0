package engine

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner"
)

// createFunctionCommand is CREATE [OR REPLACE] FUNCTION. Its command
// carries the module (inlineFunctionModule turned PATH into MODULE where
// the statement was issued), so every instance and every replay has it.
type createFunctionCommand struct{}

func (createFunctionCommand) check(ctx context.Context, e *Engine, st *parser.CreateFunction, c call) (*Result, bool, error) {
	_, err := planner.CreateFunction(ctx, e.cat, st)
	return nil, false, err
}

func (createFunctionCommand) apply(ctx context.Context, e *Engine, st *parser.CreateFunction, c call) (*Result, error) {
	f, err := planner.CreateFunction(ctx, e.cat, st)
	if err != nil {
		return nil, err
	}
	e.cat.RegisterFunction(f)
	verb := "Created"
	if f.Version > 1 {
		verb = fmt.Sprintf("Replaced (version %d)", f.Version)
	}
	what := "function"
	if f.IsAggregate() {
		what = "aggregate function"
	}
	return &Result{Statement: c.text, Message: fmt.Sprintf("%s %s %s RETURNS %s", verb, what, f.Signature(), f.Result)}, nil
}

func (createFunctionCommand) statusID(st *parser.CreateFunction) string {
	return "function/" + st.Name + "/create"
}

// dropFunctionCommand is DROP FUNCTION: every overload of the name goes.
// It is refused while a persistent query calls the function, as DROP
// STREAM is while a query reads the stream: such a query keeps the
// version it bound, but a restart would plan it against a catalog
// without the function.
type dropFunctionCommand struct{}

func (dropFunctionCommand) check(_ context.Context, e *Engine, st *parser.DropFunction, c call) (*Result, bool, error) {
	if err := e.checkDropFunction(st); err != nil {
		return nil, false, err
	}
	if len(e.cat.Functions(st.Name)) == 0 {
		return &Result{Statement: c.text, Message: noSuchFunction(st.Name)}, true, nil
	}
	return nil, false, nil
}

func (dropFunctionCommand) apply(_ context.Context, e *Engine, st *parser.DropFunction, c call) (*Result, error) {
	if err := e.checkDropFunction(st); err != nil {
		return nil, err
	}
	if !e.cat.DropFunction(st.Name) {
		return &Result{Statement: c.text, Message: noSuchFunction(st.Name)}, nil
	}
	return &Result{Statement: c.text, Message: fmt.Sprintf("Dropped function %s", st.Name)}, nil
}

func (dropFunctionCommand) statusID(st *parser.DropFunction) string {
	return "function/" + st.Name + "/drop"
}

func (e *Engine) checkDropFunction(st *parser.DropFunction) error {
	if len(e.cat.Functions(st.Name)) == 0 {
		if st.IfExists {
			return nil
		}
		return fmt.Errorf("%w: %s", planner.ErrNotFound, noSuchFunction(st.Name))
	}
	for _, f := range e.cat.Functions(st.Name) {
		if f.Dir != "" {
			return fmt.Errorf("%w: cannot drop function %s: it comes from this instance's --udf-dir (%s)", planner.ErrInvalid, st.Name, f.Dir)
		}
	}
	var users []string
	for _, q := range e.Queries() {
		if q.Plan != nil && slices.Contains(q.Plan.UserFunctions, st.Name) {
			users = append(users, q.ID)
		}
	}
	if len(users) > 0 {
		slices.Sort(users)
		return fmt.Errorf("%w: cannot drop function %s: the following queries use it: [%s]; terminate them first",
			planner.ErrInvalid, st.Name, strings.Join(users, ", "))
	}
	return nil
}

func noSuchFunction(name string) string { return fmt.Sprintf("Function '%s' does not exist", name) }

// inlineFunctionModule turns CREATE FUNCTION … WITH (PATH='file') into
// WITH (MODULE='<base64 of the gzipped file>'): the file is read here,
// where the statement is issued, and the command carries its bytes.
func inlineFunctionModule(p parser.Parsed) (parser.Parsed, error) {
	st, ok := p.Stmt.(*parser.CreateFunction)
	if !ok {
		return p, nil
	}
	i := slices.IndexFunc(st.With, func(pr parser.Property) bool { return pr.Name == planner.FunctionPathProperty })
	if i < 0 {
		return p, nil
	}
	path := st.With[i].Value.Str
	if slices.ContainsFunc(st.With, func(pr parser.Property) bool { return pr.Name == planner.FunctionModuleProperty }) {
		return p, &planner.PosError{Pos: st.With[i].Pos, Err: fmt.Errorf("%w: give PATH or MODULE, not both", planner.ErrInvalid)}
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return p, &planner.PosError{Pos: st.With[i].Pos, Err: fmt.Errorf("%w: PATH: %v", planner.ErrInvalid, err)}
	}
	var z bytes.Buffer
	w, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
	if _, err := w.Write(raw); err != nil {
		return p, fmt.Errorf("compress %s: %w", path, err)
	}
	if err := w.Close(); err != nil {
		return p, fmt.Errorf("compress %s: %w", path, err)
	}
	inlined := *st
	inlined.With = slices.Clone(st.With)
	lit := *st.With[i].Value
	lit.Str = base64.StdEncoding.EncodeToString(z.Bytes())
	inlined.With[i] = parser.Property{Pos: st.With[i].Pos, Name: planner.FunctionModuleProperty, Value: &lit}
	return parser.Parsed{Stmt: &inlined, Text: inlined.String()}, nil
}
