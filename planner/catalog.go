package planner

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/types"
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
	// Window says whether the topic's keys carry a window (results of
	// windowed aggregations).
	Window     exec.WindowType
	WindowSize int64
	// Statement is the SQL that created the source.
	Statement string
	// QueryID is the persistent query writing the source, if any.
	QueryID string
}

// Catalog holds the streams and tables of a session or service.
type Catalog struct {
	mu      sync.RWMutex
	sources map[string]*Source
}

// NewCatalog returns an empty catalog.
func NewCatalog() *Catalog { return &Catalog{sources: map[string]*Source{}} }

// Lookup finds a source by name, ignoring case.
func (c *Catalog) Lookup(name string) (*Source, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if s, ok := c.sources[strings.ToUpper(name)]; ok {
		return s, nil
	}
	return nil, fmt.Errorf("%s %w", name, ErrNotFound)
}

// Add registers a source; replace allows CREATE OR REPLACE.
func (c *Catalog) Add(s *Source, replace bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := strings.ToUpper(s.Name)
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
	delete(c.sources, strings.ToUpper(name))
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
