package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"

	"github.com/sluice-sql/sluice/format"
)

// Embedded is a Schema Registry served in this process: franz-go's srfake
// registry (the Confluent REST API) on a listener, its registrations kept
// in a file.
type Embedded struct {
	reg  *srfake.Registry
	ln   net.Listener
	srv  *http.Server
	file string
	mu   sync.Mutex // serialises snapshots
}

// savedSchema is one registration as the file keeps it.
type savedSchema struct {
	Subject string        `json:"subject"`
	Version int           `json:"version"`
	ID      int           `json:"id"`
	Type    sr.SchemaType `json:"schemaType,omitempty"`
	Schema  string        `json:"schema"`
	// References are a PROTOBUF schema's imports, by subject and version.
	References []sr.SchemaReference `json:"references,omitempty"`
}

// Serve starts a registry on addr ("127.0.0.1:0" picks a port). With file
// set it first loads the registrations kept there and saves every change.
func Serve(addr, file string) (*Embedded, error) {
	e := &Embedded{reg: srfake.NewRegistry(), file: file}
	if file != "" {
		if err := e.load(); err != nil {
			return nil, fmt.Errorf("schema registry: load %s: %w", file, err)
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("schema registry: listen on %s: %w", addr, err)
	}
	e.ln = ln
	e.srv = &http.Server{Handler: http.HandlerFunc(e.serve)}
	go func() { _ = e.srv.Serve(ln) }()
	return e, nil
}

// URL is where the registry answers.
func (e *Embedded) URL() string { return "http://" + e.ln.Addr().String() }

// SetGlobalCompatibility sets the compatibility level of subjects that
// have none of their own, as PUT /config does. It is not kept in the
// file: a registry starts at BACKWARD.
func (e *Embedded) SetGlobalCompatibility(level sr.CompatibilityLevel) error {
	body, err := json.Marshal(map[string]sr.CompatibilityLevel{"compatibility": level})
	if err != nil {
		return err
	}
	rec := httptest.NewRecorder()
	e.reg.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodPut, "/config", bytes.NewReader(body)))
	if rec.Code != http.StatusOK {
		return fmt.Errorf("schema registry: set compatibility %s: %d %s", level, rec.Code, rec.Body.String())
	}
	return nil
}

// Close stops serving.
func (e *Embedded) Close() error { return e.srv.Close() }

// serve answers a request and, after a change, saves the registrations.
func (e *Embedded) serve(w http.ResponseWriter, r *http.Request) {
	if subject, ok := registration(r); ok {
		body, err := io.ReadAll(io.LimitReader(r.Body, 16<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if msg := e.incompatible(subject, body); msg != "" {
			w.Header().Set("Content-Type", "application/vnd.schemaregistry.v1+json")
			w.WriteHeader(http.StatusConflict)
			_ = json.NewEncoder(w).Encode(map[string]any{"error_code": 409, "message": msg})
			return
		}
	}
	if object, raw, ok := schemaPath(r); ok {
		e.serveSchema(w, r, object, raw)
		return
	}
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	e.reg.Handler().ServeHTTP(rec, r)
	if r.Method != http.MethodGet && r.Method != http.MethodHead && rec.status < 300 && e.file != "" {
		if err := e.save(); err != nil {
			// The answer is given: the change is served from memory
			// but would not survive a restart.
			fmt.Fprintf(os.Stderr, "schema registry: save %s: %v\n", e.file, err)
		}
	}
}

// registration reports whether r registers a schema, and under which
// subject: POST /subjects/{subject}/versions.
func registration(r *http.Request) (string, bool) {
	if r.Method != http.MethodPost {
		return "", false
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/subjects/")
	if !ok {
		return "", false
	}
	subject, ok := strings.CutSuffix(rest, "/versions")
	return subject, ok && subject != "" && !strings.Contains(subject, "/")
}

// incompatible checks an Avro registration against the subject's
// earlier versions at the subject's compatibility level (GET /config,
// BACKWARD unless set: the new schema must read what the latest one
// wrote) and says why it fails, or "". srfake registers anything; a real
// registry refuses these. NONE checks nothing; FORWARD has the earlier
// versions read the new one; FULL both; a _TRANSITIVE level every
// version, the others the latest.
func (e *Embedded) incompatible(subject string, body []byte) string {
	var req sr.Schema
	if json.Unmarshal(body, &req) != nil || req.Type != sr.TypeAvro {
		return ""
	}
	var cfg struct {
		Level sr.CompatibilityLevel `json:"compatibilityLevel"`
	}
	if e.get("/config/"+url.PathEscape(subject), &cfg) != nil {
		cfg.Level = sr.CompatBackward
	}
	var backward, forward bool
	switch cfg.Level {
	case sr.CompatNone:
		return ""
	case sr.CompatForward, sr.CompatForwardTransitive:
		forward = true
	case sr.CompatFull, sr.CompatFullTransitive:
		backward, forward = true, true
	default:
		backward = true
	}
	transitive := cfg.Level == sr.CompatBackwardTransitive || cfg.Level == sr.CompatForwardTransitive || cfg.Level == sr.CompatFullTransitive
	versions := []string{"latest"}
	if transitive {
		var all []int
		if e.get("/subjects/"+url.PathEscape(subject)+"/versions", &all) != nil {
			return "" // no version yet
		}
		versions = versions[:0]
		for _, v := range all {
			versions = append(versions, fmt.Sprint(v))
		}
	}
	next, err := avro.Parse(req.Schema)
	if err != nil {
		return "" // the registry's own validation answers
	}
	compat := avro.NewSchemaCompatibility()
	for _, v := range versions {
		var earlier sr.SubjectSchema
		if e.get("/subjects/"+url.PathEscape(subject)+"/versions/"+v, &earlier) != nil {
			return "" // no version yet
		}
		if earlier.Type != sr.TypeAvro {
			continue
		}
		old, err := avro.Parse(earlier.Schema.Schema)
		if err != nil {
			continue
		}
		if backward {
			err = compat.Compatible(next, old)
		}
		if err == nil && forward {
			err = compat.Compatible(old, next)
		}
		if err != nil {
			return fmt.Sprintf("Schema being registered is incompatible with an earlier schema for subject %q (%s): %v", subject, cfg.Level, err)
		}
	}
	return ""
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// schemaPath reports whether r asks for one schema: GET
// /schemas/ids/{id} or /subjects/{subject}/versions/{version}, which answer
// its JSON object, or either with /schema appended, which answer the
// schema alone. object is the escaped path of the JSON object form.
func schemaPath(r *http.Request) (object string, raw, ok bool) {
	if r.Method != http.MethodGet {
		return "", false, false
	}
	object, raw = strings.CutSuffix(r.URL.EscapedPath(), "/schema")
	parts := strings.Split(strings.TrimPrefix(object, "/"), "/")
	switch {
	case len(parts) == 3 && parts[0] == "schemas" && parts[1] == "ids":
	case len(parts) == 4 && parts[0] == "subjects" && parts[2] == "versions":
	default:
		return "", false, false
	}
	return object, raw, true
}

// serveSchema answers a lookup of one schema as Confluent's registry does
// for Protobuf, which srfake does not: srfake keeps a schema as it was
// registered, and Confluent's clients register Protobuf serialized (a
// base64 FileDescriptorProto), while Confluent's registry answers the
// .proto text unless asked for ?format=serialized, and then base64 however
// it was registered. Other schemas get srfake's own answer.
func (e *Embedded) serveSchema(w http.ResponseWriter, r *http.Request, object string, raw bool) {
	query := r.URL.Query()
	wantSerialized := query.Get("format") == "serialized"
	query.Del("format")
	rec := httptest.NewRecorder()
	e.reg.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, object+"?"+query.Encode(), nil))
	var body map[string]any
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &body) != nil || body["schemaType"] != format.SchemaProtobuf {
		e.reg.Handler().ServeHTTP(w, r)
		return
	}
	text, _ := body["schema"].(string)
	var refs []sr.SchemaReference
	if b, err := json.Marshal(body["references"]); err == nil {
		_ = json.Unmarshal(b, &refs)
	}
	sch := format.Schema{Type: format.SchemaProtobuf, Text: text, References: map[string]string{}}
	for len(refs) > 0 {
		ref := refs[0]
		refs = refs[1:]
		if _, seen := sch.References[ref.Name]; seen {
			continue
		}
		var ss sr.SubjectSchema
		if err := e.get(fmt.Sprintf("/subjects/%s/versions/%d", url.PathEscape(ref.Subject), ref.Version), &ss); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		sch.References[ref.Name] = ss.Schema.Schema
		refs = append(refs, ss.References...)
	}
	if wantSerialized {
		serialized, err := format.SerializeProtobuf(sch)
		if err != nil {
			w.Header().Set("Content-Type", "application/vnd.schemaregistry.v1+json")
			w.WriteHeader(http.StatusUnprocessableEntity)
			_ = json.NewEncoder(w).Encode(map[string]any{"error_code": 42201, "message": err.Error()})
			return
		}
		text = serialized
	} else {
		text = protobufText(sch)
	}
	w.Header().Set("Content-Type", "application/vnd.schemaregistry.v1+json")
	if raw {
		// The schema alone, unquoted, as Confluent's registry answers.
		_, _ = io.WriteString(w, text)
		return
	}
	body["schema"] = text
	_ = json.NewEncoder(w).Encode(body)
}

// protobufText is a Protobuf schema as .proto source: its text as
// registered, or a serialized one written out. Text that would not compile
// to the same descriptor (custom options, which the writer leaves out)
// leaves the schema serialized, which every Confluent client reads too.
func protobufText(sch format.Schema) string {
	fdp := format.SerializedDescriptor(sch.Text)
	if fdp == nil {
		return sch.Text
	}
	text, err := format.ProtobufText(fdp)
	if err != nil {
		return sch.Text
	}
	registered, err := format.CompileProtobuf(sch)
	if err != nil {
		return sch.Text
	}
	printed := sch
	printed.Text = text
	written, err := format.CompileProtobuf(printed)
	if err != nil || !proto.Equal(protodesc.ToFileDescriptorProto(registered), protodesc.ToFileDescriptorProto(written)) {
		return sch.Text
	}
	return text
}

// get asks the registry's own handler, in process.
func (e *Embedded) get(path string, into any) error {
	rec := httptest.NewRecorder()
	e.reg.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	if rec.Code != http.StatusOK {
		return fmt.Errorf("GET %s: %d %s", path, rec.Code, rec.Body.String())
	}
	return json.Unmarshal(rec.Body.Bytes(), into)
}

// save writes every registration to the file (atomically: a temporary
// file renamed over it).
func (e *Embedded) save() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	var subjects []string
	if err := e.get("/subjects", &subjects); err != nil {
		return err
	}
	var all []savedSchema
	for _, s := range subjects {
		var versions []int
		if err := e.get("/subjects/"+s+"/versions", &versions); err != nil {
			return err
		}
		for _, v := range versions {
			var ss sr.SubjectSchema
			if err := e.get(fmt.Sprintf("/subjects/%s/versions/%d", s, v), &ss); err != nil {
				return err
			}
			all = append(all, savedSchema{Subject: ss.Subject, Version: ss.Version, ID: ss.ID, Type: ss.Type, Schema: ss.Schema.Schema, References: ss.References})
		}
	}
	b, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(e.file), 0o755); err != nil {
		return err
	}
	tmp := e.file + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, e.file)
}

// load seeds the registry from the file, in id order, so ids and
// versions are what they were.
func (e *Embedded) load() (err error) {
	b, err := os.ReadFile(e.file)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var all []savedSchema
	if err := json.Unmarshal(b, &all); err != nil {
		return err
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].ID != all[j].ID {
			return all[i].ID < all[j].ID
		}
		return all[i].Subject < all[j].Subject
	})
	defer func() {
		// srfake's seeding panics on a bad entry: a damaged file.
		if p := recover(); p != nil {
			err = fmt.Errorf("%v", p)
		}
	}()
	seen := map[int]bool{}
	for _, s := range all {
		sch := sr.Schema{Schema: s.Schema, Type: s.Type, References: s.References}
		if !seen[s.ID] {
			e.reg.SeedSchema(s.Subject, s.Version, s.ID, sch)
			seen[s.ID] = true
			continue
		}
		// The same schema under another subject shares its id.
		if _, _, err := e.reg.RegisterSchema(s.Subject, sch); err != nil {
			return fmt.Errorf("subject %s: %w", s.Subject, err)
		}
	}
	return nil
}

// Seed registers an Avro schema under subject as its next version, with
// the given id when id > 0 (a test's fixtures name their ids), and
// returns the id.
func (e *Embedded) Seed(subject string, id int, schema string) (n int, err error) {
	return e.SeedSchema(subject, id, sr.Schema{Schema: schema, Type: sr.TypeAvro})
}

// SeedSchema is Seed for a schema of any type, with its references.
func (e *Embedded) SeedSchema(subject string, id int, sch sr.Schema) (n int, err error) {
	if id <= 0 {
		n, _, err = e.reg.RegisterSchema(subject, sch)
		return n, err
	}
	var versions []int
	_ = e.get("/subjects/"+subject+"/versions", &versions)
	var taken sr.Schema
	if e.get(fmt.Sprintf("/schemas/ids/%d", id), &taken) == nil {
		// The id exists: the same schema under one more subject.
		n, _, err = e.reg.RegisterSchema(subject, sch)
		return n, err
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("seed %s id %d: %v", subject, id, p)
		}
	}()
	e.reg.SeedSchema(subject, len(versions)+1, id, sch)
	return id, nil
}
