package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner"
)

// UDFManifest is the file of a --udf-dir that lists its functions: CREATE
// [OR REPLACE] [TABLE] FUNCTION statements, whose PATHs are relative to
// the directory.
const UDFManifest = "functions.sql"

// ErrUDFDir is wrapped by errors about a --udf-dir: its manifest does not
// read, parse or plan.
var ErrUDFDir = errors.New("udf-dir")

// loadUDFDir defines the functions of dir's manifest in the catalog, as
// ksqlDB's extension directory loads its jars at start: they exist on this
// instance only (nothing enters the command topic), before any command is
// replayed, and a statement cannot redefine or drop them. An error names
// the manifest and the line, with the line and a caret under the place.
func (e *Engine) loadUDFDir(ctx context.Context, dir string) error {
	manifest := filepath.Join(dir, UDFManifest)
	src, err := os.ReadFile(manifest)
	if err != nil {
		return fmt.Errorf("%w: %v (a --udf-dir holds a %s of CREATE FUNCTION statements)", ErrUDFDir, err, UDFManifest)
	}
	fail := func(err error) error {
		return fmt.Errorf("%w: %s: %s", ErrUDFDir, manifest, FormatError(string(src), err))
	}
	stmts, err := parser.ParseScript(string(src))
	if err != nil {
		return fail(err)
	}
	for _, p := range stmts {
		st, ok := p.Stmt.(*parser.CreateFunction)
		if !ok {
			return fail(&planner.PosError{Pos: p.Stmt.Position(), Err: fmt.Errorf("%w: %s holds CREATE FUNCTION statements only", planner.ErrInvalid, UDFManifest)})
		}
		p, err = inlineFunctionModule(parser.Parsed{Stmt: relativeTo(dir, st), Text: p.Text})
		if err != nil {
			return fail(err)
		}
		f, err := planner.CreateDirFunction(ctx, e.cat, p.Stmt.(*parser.CreateFunction), fmt.Sprintf("%s:%d", manifest, st.Pos.Line))
		if err != nil {
			return fail(err)
		}
		e.cat.RegisterFunction(f)
	}
	return nil
}

// relativeTo is st with a relative PATH taken from dir.
func relativeTo(dir string, st *parser.CreateFunction) *parser.CreateFunction {
	i := slices.IndexFunc(st.With, func(pr parser.Property) bool { return pr.Name == planner.FunctionPathProperty })
	if i < 0 || filepath.IsAbs(st.With[i].Value.Str) {
		return st
	}
	out := *st
	out.With = slices.Clone(st.With)
	lit := *st.With[i].Value
	lit.Str = filepath.Join(dir, lit.Str)
	out.With[i].Value = &lit
	return &out
}
