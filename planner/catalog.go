package planner

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/types"
	"github.com/sluice-sql/sluice/udf"
)

// Error kinds the planner returns; tests and callers match them with
// errors.Is.
var (
	ErrNotFound      = errors.New("does not exist")
	ErrExists        = errors.New("already exists")
	ErrInvalid       = errors.New("invalid statement")
	ErrUnsupported   = errors.New("not supported")
	ErrKeyProjection = errors.New("key missing from projection")
)

// Source is a stream or table known to the catalog.
type Source struct {
	Name        string
	Kind        parser.SourceKind
	Topic       string
	KeyFormat   string
	ValueFormat string
	KeyProps    format.Props
	ValueProps  format.Props
	// Schema lists key columns first, then value columns.
	Schema          types.Schema
	TimestampColumn string
	TimestampFormat string
	Partitions      int32
	// Replicas is the replication factor of the topic Sluice creates for
	// the source (REPLICAS in WITH); 0 means the broker's default.
	Replicas int16
	// Window says whether the topic's keys carry a window (results of
	// windowed aggregations).
	Window     exec.WindowType
	WindowSize int64
	// Statement is the SQL that created the source.
	Statement string
	// QueryID is the persistent query writing the source, if any.
	QueryID string
	// ReadOnly marks CREATE SOURCE STREAM|TABLE: no statement writes,
	// replaces or deletes the topic (queries may still read it).
	ReadOnly bool
}

// Catalog holds the streams and tables of a session or service.
type Catalog struct {
	mu      sync.RWMutex
	sources map[string]*Source
	// customTypes are CREATE TYPE's types by name (see custom_types.go).
	customTypes map[string]types.Type
	// registry serves the Schema Registry formats (SetRegistry).
	registry SchemaRegistry
	// functions are CREATE FUNCTION's overloads by name (functions.go);
	// udfRuntime runs them.
	functions  map[string][]*expr.UserFunction
	udfRuntime *udf.Runtime
}

// NewCatalog returns an empty catalog.
func NewCatalog() *Catalog { return &Catalog{sources: map[string]*Source{}} }

// Lookup finds a source by name. Names are case-sensitive, as in ksqlDB:
// the parser upper-cases unquoted names and keeps quoted ones as
// written, so `people` and `"people"` are different sources. When the
// name differs from a source's only in case, the error says how to quote.
func (c *Catalog) Lookup(name string) (*Source, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if s, ok := c.sources[name]; ok {
		return s, nil
	}
	for key, s := range c.sources {
		if strings.EqualFold(key, name) {
			hint := fmt.Sprintf("Did you mean %q? Hint: wrap the source name in double quotes to make it case-sensitive.", s.Name)
			if s.Name == strings.ToUpper(s.Name) {
				hint = fmt.Sprintf("Did you mean %s? Hint: try removing double quotes from the source name.", s.Name)
			}
			return nil, fmt.Errorf("%s %w\n%s", name, ErrNotFound, hint)
		}
	}
	names := make([]string, 0, len(c.sources))
	for key := range c.sources {
		names = append(names, key)
	}
	if near := parser.Closest(name, names); near != "" {
		return nil, fmt.Errorf("%s %w: did you mean %s?", name, ErrNotFound, near)
	}
	return nil, fmt.Errorf("%s %w", name, ErrNotFound)
}

// LookupAt is Lookup for a source named at pos in a statement: a name
// that resolves to nothing is reported as ksqlDB reports it, at its
// position ("Line: 2, Col: 13: Source `UNKNOWN` does not exist."),
// followed by Lookup's hint when there is one.
func (c *Catalog) LookupAt(name string, pos parser.Pos) (*Source, error) {
	s, err := c.Lookup(name)
	if err == nil || !errors.Is(err, ErrNotFound) {
		return s, err
	}
	msg := fmt.Sprintf("Source `%s` does not exist.", name)
	if _, hint, ok := strings.Cut(err.Error(), ErrNotFound.Error()); ok {
		if hint = strings.TrimLeft(hint, ":\n "); hint != "" {
			msg += " " + strings.ToUpper(hint[:1]) + hint[1:]
		}
	}
	return nil, &PosError{Pos: pos, Err: &expr.LocatedError{Preface: expr.Preparing, Kind: ErrNotFound, Msg: msg}}
}

// LookupFold finds a source by name ignoring case, for callers that name
// sources outside SQL (the REST API's inserts-stream target), as ksqlDB
// does; an exact match wins.
func (c *Catalog) LookupFold(name string) (*Source, error) {
	if s, err := c.Lookup(name); err == nil {
		return s, nil
	}
	return c.Lookup(strings.ToUpper(name))
}

// Add registers a source; replace allows CREATE OR REPLACE.
func (c *Catalog) Add(s *Source, replace bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := s.Name
	if old, ok := c.sources[key]; ok && !replace {
		return fmt.Errorf("cannot add %s '%s': a %s with the same name %w", strings.ToLower(s.Kind.String()), s.Name, strings.ToLower(old.Kind.String()), ErrExists)
	}
	c.sources[key] = s
	return nil
}

// Remove drops a source.
func (c *Catalog) Remove(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.sources, name)
}

// Sources lists sources of one kind sorted by name.
func (c *Catalog) Sources(kind parser.SourceKind) []*Source {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []*Source
	for _, s := range c.sources {
		if s.Kind == kind {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// sourceSpec describes how exec reads this source.
func (s *Source) sourceSpec() *exec.SourceSpec {
	spec := &exec.SourceSpec{
		Topic:           s.Topic,
		KeyFormat:       s.KeyFormat,
		ValueFormat:     s.ValueFormat,
		KeyCols:         s.Schema.Keys(),
		ValueCols:       s.Schema.Values(),
		HeaderCols:      s.Schema.Headers(),
		KeyProps:        s.KeyProps,
		ValueProps:      s.ValueProps,
		Window:          s.Window,
		WindowSize:      s.WindowSize,
		TimestampCol:    -1,
		TimestampFormat: s.TimestampFormat,
	}
	if s.TimestampColumn != "" {
		spec.TimestampCol = spec.RowSchema().Find(s.TimestampColumn)
	}
	return spec
}
