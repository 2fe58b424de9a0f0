package server

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/parser"
)

// consoleFiles are the web console's hand-written HTML, CSS and JS; no
// build step makes them, so the binary serves them as they are.
//
//go:embed console
var consoleFiles embed.FS

// consolePush is how often the console's event stream sends a snapshot.
const consolePush = time.Second

// registerConsole adds the web console at / and its data endpoints under
// /console/api/. They sit behind the server's authentication like every
// other endpoint (Handler wraps the whole mux).
func (s *Server) registerConsole() {
	static, err := fs.Sub(consoleFiles, "console")
	if err != nil {
		s.log.Error("console: no embedded files; / is not served", "err", fmt.Errorf("console files: %w", err))
		return
	}
	files := http.FileServerFS(static)
	s.mux.Handle("GET /{$}", files)
	s.mux.Handle("GET /console/", http.StripPrefix("/console/", files))
	s.mux.HandleFunc("GET /console/api/queries", s.handleConsoleQueries)
	s.mux.HandleFunc("GET /console/api/catalog", s.handleConsoleCatalog)
	s.mux.HandleFunc("GET /console/api/events", s.handleConsoleEvents)
	s.mux.HandleFunc("GET /console/api/query/{id}", s.handleConsoleQuery)
}

// consoleQuery is one persistent query as the console's queries page
// shows it.
type consoleQuery struct {
	ID          string           `json:"id"`
	Statement   string           `json:"statement"`
	State       string           `json:"state"`
	Error       string           `json:"error,omitempty"`
	Sources     []string         `json:"sources"`
	Sinks       []string         `json:"sinks"`
	RecordsIn   int64            `json:"recordsIn"`
	RecordsOut  int64            `json:"recordsOut"`
	Lag         int64            `json:"lag"`
	LateDropped int64            `json:"lateDropped"`
	Errors      map[string]int64 `json:"errors"`
	// InputRate is records/s over about the last rateSpan, from the
	// snapshots any console request took; 0 in the first.
	InputRate float64          `json:"inputRate"`
	Restores  []consoleRestore `json:"restores"`
	// Stores are the query's state stores on this instance: approximate
	// committed bytes, and keys (or windows, for a windowed store) held.
	Stores []consoleStore `json:"stores"`
	Owners []consoleOwner `json:"owners"`
}

type consoleStore struct {
	Name     string `json:"name"`
	Windowed bool   `json:"windowed"`
	Bytes    int64  `json:"bytes"`
	Entries  int64  `json:"entries"`
}

type consoleRestore struct {
	Store     string `json:"store"`
	Partition int32  `json:"partition"`
	Done      int64  `json:"done"`
	Total     int64  `json:"total"`
}

type consoleOwner struct {
	Instance string `json:"instance"`
	// URL is the instance's advertised URL, what a person recognises it
	// by (host:port); Instance is its generated id.
	URL        string   `json:"url"`
	Self       bool     `json:"self"`
	Alive      bool     `json:"alive"`
	Partitions []string `json:"partitions"`
}

// consoleQueries snapshots every persistent query, sorted by id.
func (s *Server) consoleQueries() []consoleQuery {
	now := time.Now()
	metrics := map[string]*exec.Metrics{}
	tasks := map[string][]exec.TaskInfo{}
	for _, q := range s.eng.Queries() {
		metrics[q.ID] = q.Metrics
		tasks[q.ID] = q.Tasks()
	}
	out := []consoleQuery{}
	for _, sum := range s.eng.QuerySummaries() {
		cq := consoleQuery{ID: sum.ID, Statement: sum.Statement, State: sum.State, Error: sum.Error,
			Sources: nonNil(sum.Sources), Sinks: nonNil(sum.Sinks), Errors: map[string]int64{},
			Restores: []consoleRestore{}, Owners: []consoleOwner{}}
		if m := metrics[sum.ID]; m != nil {
			cq.RecordsIn, cq.RecordsOut = m.RecordsIn.Load(), m.RecordsOut.Load()
			cq.Lag, cq.LateDropped = m.Lag.Load(), m.LateDropped.Load()
			cq.InputRate = s.rates.rate(sum.ID+"/in", now, cq.RecordsIn)
			for k, v := range m.Errors() {
				cq.Errors[k] = v
			}
		}
		cq.Stores = []consoleStore{}
		if stores, err := s.eng.QueryState(sum.ID); err == nil {
			for _, st := range stores {
				cq.Stores = append(cq.Stores, consoleStore{Name: st.Name, Windowed: st.Windowed, Bytes: st.Bytes, Entries: st.Entries})
			}
		}
		for _, ti := range tasks[sum.ID] {
			if r := ti.Restore; r != nil {
				cq.Restores = append(cq.Restores, consoleRestore{Store: r.Store, Partition: r.Partition, Done: r.Done, Total: r.Total})
			}
		}
		for _, o := range sum.Owners {
			cq.Owners = append(cq.Owners, consoleOwner{Instance: o.Instance, URL: o.URL, Self: o.Self, Alive: o.Alive, Partitions: nonNil(o.Partitions)})
		}
		out = append(out, cq)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	running := map[string]bool{}
	for _, q := range out {
		running[q.ID] = true
	}
	s.rates.keep(func(key string) bool { return running[key[:strings.IndexByte(key, '/')]] })
	return out
}

func (s *Server) handleConsoleQueries(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.consoleQueries())
}

// consoleSource is one stream or table of the catalog with its columns.
type consoleSource struct {
	Name    string          `json:"name"`
	Kind    string          `json:"kind"`
	Topic   string          `json:"topic"`
	Columns []consoleColumn `json:"columns"`
}

type consoleColumn struct {
	Name string `json:"name"`
	Type string `json:"type"`
	Key  bool   `json:"key,omitempty"`
}

func (s *Server) consoleCatalog() []consoleSource {
	out := []consoleSource{}
	for _, kind := range []parser.SourceKind{parser.KindStream, parser.KindTable} {
		for _, src := range s.eng.Catalog().Sources(kind) {
			cs := consoleSource{Name: src.Name, Kind: "STREAM", Topic: src.Topic, Columns: []consoleColumn{}}
			if kind == parser.KindTable {
				cs.Kind = "TABLE"
			}
			for _, c := range src.Schema.Columns {
				cs.Columns = append(cs.Columns, consoleColumn{Name: c.Name, Type: c.Type.String(), Key: c.Key})
			}
			out = append(out, cs)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (s *Server) handleConsoleCatalog(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.consoleCatalog())
}

// handleConsoleEvents is an event stream for scripts (curl -N): a
// "queries" event with every query's snapshot each consolePush. The
// console page itself polls /console/api/queries: a response that never
// ends keeps a page loading, and headless chromium's virtual time (what
// --virtual-time-budget screenshots wait on) never runs out while one is
// open.
func (s *Server) handleConsoleEvents(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		genericError(w, http.StatusInternalServerError, codeServerError, "streaming unsupported")
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	tick := time.NewTicker(consolePush)
	defer tick.Stop()
	for {
		b, err := json.Marshal(s.consoleQueries())
		if err != nil {
			s.log.Warn("console events: encode", "err", err)
			return
		}
		if _, err := fmt.Fprintf(w, "event: queries\ndata: %s\n\n", b); err != nil {
			return
		}
		flusher.Flush()
		select {
		case <-r.Context().Done():
			return
		case <-s.closing:
			return
		case <-tick.C:
		}
	}
}

// nonNil is s, or an empty list for nil, which JSON writes as [].
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
