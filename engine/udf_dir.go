package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/sluice-sql/sluice/expr"
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
	fns, err := udfDirs.load(ctx, dir)
	if err != nil {
		return err
	}
	for _, f := range fns {
		e.cat.RegisterFunction(f)
	}
	return nil
}

// udfDirs remembers the directories this process loaded, so that engines
// opened one after another with the same directory (the test runner opens
// one per case) read, hash and check its modules once. An entry is used
// while the manifest and the files it names are unchanged.
var udfDirs = &udfDirCache{m: map[string]udfDirEntry{}}

type udfDirCache struct {
	mu sync.Mutex
	m  map[string]udfDirEntry
}

type udfDirEntry struct {
	stamp string
	fns   []*expr.UserFunction
}

func (c *udfDirCache) load(ctx context.Context, dir string) ([]*expr.UserFunction, error) {
	manifest := filepath.Join(dir, UDFManifest)
	src, err := os.ReadFile(manifest)
	if err != nil {
		return nil, fmt.Errorf("%w: %v (a --udf-dir holds a %s of CREATE FUNCTION statements)", ErrUDFDir, err, UDFManifest)
	}
	fail := func(err error) error {
		return fmt.Errorf("%w: %s: %s", ErrUDFDir, manifest, FormatError(string(src), err))
	}
	stmts, err := parser.ParseScript(string(src))
	if err != nil {
		return nil, fail(err)
	}
	var creates []*parser.CreateFunction
	stamp := string(src)
	for _, p := range stmts {
		st, ok := p.Stmt.(*parser.CreateFunction)
		if !ok {
			return nil, fail(&planner.PosError{Pos: p.Stmt.Position(), Err: fmt.Errorf("%w: %s holds CREATE FUNCTION statements only", planner.ErrInvalid, UDFManifest)})
		}
		creates = append(creates, st)
		if path, _ := modulePath(dir, st); path != "" {
			if fi, err := os.Stat(path); err == nil {
				stamp += fmt.Sprintf("\x00%s %d %d", path, fi.Size(), fi.ModTime().UnixNano())
			}
		}
	}
	key, _ := filepath.Abs(dir)
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[key]; ok && e.stamp == stamp {
		return e.fns, nil
	}
	// The functions are checked in a catalog of their own: only each
	// other's names can clash with them yet.
	cat := planner.NewCatalog()
	defer cat.CloseFunctions()
	modules := map[string][]byte{}
	var fns []*expr.UserFunction
	for _, st := range creates {
		path, pos := modulePath(dir, st)
		var module []byte
		if path != "" {
			if module = modules[path]; module == nil {
				if module, err = os.ReadFile(path); err != nil {
					return nil, fail(&planner.PosError{Pos: pos, Err: fmt.Errorf("%w: PATH: %v", planner.ErrInvalid, err)})
				}
				modules[path] = module
			}
		}
		f, err := planner.CreateDirFunction(ctx, cat, st, fmt.Sprintf("%s:%d", manifest, st.Pos.Line), module)
		if err != nil {
			return nil, fail(err)
		}
		cat.RegisterFunction(f)
		fns = append(fns, f)
	}
	c.m[key] = udfDirEntry{stamp: stamp, fns: fns}
	return fns, nil
}

// modulePath is the file st's PATH names, relative to dir unless
// absolute, and where PATH stands ("": st has none).
func modulePath(dir string, st *parser.CreateFunction) (string, parser.Pos) {
	i := slices.IndexFunc(st.With, func(pr parser.Property) bool { return pr.Name == planner.FunctionPathProperty })
	if i < 0 {
		return "", parser.Pos{}
	}
	path := st.With[i].Value.Str
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	return filepath.Clean(strings.TrimSpace(path)), st.With[i].Pos
}
