package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/sluice-sql/sluice/format"
)

const (
	orderV1 = `{"type":"record","name":"Order","fields":[{"name":"ID","type":"long"}]}`
	orderV2 = `{"type":"record","name":"Order","fields":[{"name":"ID","type":"long"},{"name":"NOTE","type":["null","string"],"default":null}]}`
	// Incompatible under BACKWARD: a new field without a default.
	orderBad = `{"type":"record","name":"Order","fields":[{"name":"ID","type":"long"},{"name":"QTY","type":"int"}]}`
)

// TestEmbeddedRegistry registers schemas in the embedded registry over
// HTTP, reads them back by id and as a subject's latest, sees an
// incompatible one refused, and finds everything again after a restart
// from its file.
func TestEmbeddedRegistry(t *testing.T) {
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "schemas.json")
	reg, err := Serve("127.0.0.1:0", file)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := NewClient(reg.URL())
	if err != nil {
		t.Fatal(err)
	}
	id1, err := cl.Register(ctx, "orders-value", orderV1)
	if err != nil {
		t.Fatal(err)
	}
	again, err := cl.Register(ctx, "orders-value", orderV1)
	if err != nil || again != id1 {
		t.Fatalf("registering the same schema again: id %d, %v; want %d", again, err, id1)
	}
	id2, err := cl.Register(ctx, "orders-value", orderV2)
	if err != nil || id2 == id1 {
		t.Fatalf("second version: id %d, %v", id2, err)
	}
	shared, err := cl.Register(ctx, "archive-value", orderV1)
	if err != nil || shared != id1 {
		t.Fatalf("the same schema under another subject: id %d, %v; want %d", shared, err, id1)
	}
	if _, err := cl.Register(ctx, "orders-value", orderBad); !errors.Is(err, ErrIncompatible) {
		t.Errorf("incompatible schema: %v, want ErrIncompatible", err)
	}
	if err := reg.Close(); err != nil {
		t.Fatal(err)
	}

	// A new process: the same file, a new port.
	reg, err = Serve("127.0.0.1:0", file)
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	cl, err = NewClient(reg.URL())
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[int]string{id1: "ID", id2: "NOTE"} {
		text, err := cl.SchemaByID(ctx, id)
		if err != nil || !strings.Contains(text, want) {
			t.Errorf("schema %d after restart: %q, %v", id, text, err)
		}
	}
	text, id, found, err := cl.Latest(ctx, "orders-value")
	if err != nil || !found || id != id2 || !strings.Contains(text, "NOTE") {
		t.Errorf("latest orders-value after restart: id %d found %v %v; want %d", id, found, err, id2)
	}
	if _, _, found, err := cl.Latest(ctx, "nobody-value"); found || err != nil {
		t.Errorf("unknown subject: found %v, %v; want not found, no error", found, err)
	}
	id3, err := cl.Register(ctx, "new-value", `{"type":"record","name":"N","fields":[]}`)
	if err != nil || id3 <= id2 {
		t.Errorf("a registration after restart got id %d (%v), want a new one above %d", id3, err, id2)
	}
}

// TestUnreachableRegistry: an error names the URL.
func TestUnreachableRegistry(t *testing.T) {
	cl, err := NewClient("http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	_, err = cl.SchemaByID(context.Background(), 1)
	if err == nil || !strings.Contains(err.Error(), "schema registry http://127.0.0.1:1") {
		t.Errorf("error %v, want one naming the registry URL", err)
	}
}

// A Protobuf schema with a reference: the client resolves the import's
// text, and the embedded registry serves it serialized (a base64
// FileDescriptorProto, as Confluent's Protobuf clients ask for) too.
func TestProtobufReferences(t *testing.T) {
	ctx := context.Background()
	reg, err := Serve("127.0.0.1:0", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Close() })
	event := "syntax = \"proto3\";\nmessage Event { int64 timestamp = 1; }\n"
	main := "syntax = \"proto3\";\nimport \"event.proto\";\nmessage Logistics { Event event = 1; }\n"
	if _, err := reg.SeedSchema("event.proto", 0, sr.Schema{Schema: event, Type: sr.TypeProtobuf}); err != nil {
		t.Fatal(err)
	}
	id, err := reg.SeedSchema("logistics-value", 0, sr.Schema{Schema: main, Type: sr.TypeProtobuf,
		References: []sr.SchemaReference{{Name: "event.proto", Subject: "event.proto", Version: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := NewClient(reg.URL())
	if err != nil {
		t.Fatal(err)
	}
	got, err := cl.Schema(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	want := format.Schema{Type: format.SchemaProtobuf, Text: main, References: map[string]string{"event.proto": event}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("schema %d: %+v, want %+v", id, got, want)
	}
	resp, err := http.Get(fmt.Sprintf("%s/schemas/ids/%d?format=serialized", reg.URL(), id))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Schema string `json:"schema"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	fdp := format.SerializedDescriptor(body.Schema)
	if fdp == nil || len(fdp.MessageType) != 1 || fdp.MessageType[0].GetName() != "Logistics" || !slices.Equal(fdp.Dependency, []string{"event.proto"}) {
		t.Fatalf("serialized schema %q: descriptor %v, want message Logistics importing event.proto", body.Schema, fdp)
	}
	// The serialized form reads back as the same columns.
	cols, err := format.ProtobufColumns(format.Schema{Type: format.SchemaProtobuf, Text: body.Schema, References: got.References}, "", false)
	if err != nil || len(cols) != 1 || cols[0].Name != "event" || cols[0].Type.String() != "STRUCT<`timestamp` BIGINT>" {
		t.Errorf("columns of the serialized schema: %v, %v", cols, err)
	}
}

// TestCompatibilityLevels: the embedded registry refuses an Avro schema
// by the subject's compatibility level (PUT /config/{subject}, or the
// global level), against the latest version or, transitively, every one.
func TestCompatibilityLevels(t *testing.T) {
	const (
		v1 = `{"type":"record","name":"Order","fields":[{"name":"ID","type":"long"}]}`
		// addQty adds a field without a default: new readers cannot
		// read old records; old readers skip it.
		addQty = `{"type":"record","name":"Order","fields":[{"name":"ID","type":"long"},{"name":"QTY","type":"int"}]}`
		// dropID: new readers read old records; old readers miss ID.
		dropID = `{"type":"record","name":"Order","fields":[]}`
		// qtyDefault then qtyRequired: each reads the one before it,
		// qtyRequired cannot read v1.
		qtyDefault  = `{"type":"record","name":"Order","fields":[{"name":"ID","type":"long"},{"name":"QTY","type":"int","default":0}]}`
		qtyRequired = addQty
	)
	for _, tc := range []struct {
		name     string
		level    string // "" leaves the default
		global   sr.CompatibilityLevel
		versions []string // registered in order; the last is the candidate
		refused  bool
	}{
		{"backward refuses a field without default", "", 0, []string{v1, addQty}, true},
		{"backward takes a dropped field", "", 0, []string{v1, dropID}, false},
		{"subject NONE", "NONE", 0, []string{v1, addQty}, false},
		{"global NONE", "", sr.CompatNone, []string{v1, addQty}, false},
		{"forward takes a field without default", "FORWARD", 0, []string{v1, addQty}, false},
		{"forward refuses a dropped field", "FORWARD", 0, []string{v1, dropID}, true},
		{"full refuses a field without default", "FULL", 0, []string{v1, addQty}, true},
		{"full refuses a dropped field", "FULL", 0, []string{v1, dropID}, true},
		{"full takes a field with default", "FULL", 0, []string{v1, qtyDefault}, false},
		{"backward checks the latest only", "BACKWARD", 0, []string{v1, qtyDefault, qtyRequired}, false},
		{"backward transitive checks every version", "BACKWARD_TRANSITIVE", 0, []string{v1, qtyDefault, qtyRequired}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			reg, err := Serve("127.0.0.1:0", "")
			if err != nil {
				t.Fatal(err)
			}
			defer reg.Close()
			if tc.global != 0 {
				if err := reg.SetGlobalCompatibility(tc.global); err != nil {
					t.Fatal(err)
				}
			}
			if tc.level != "" {
				if code, body := httpDo(t, http.MethodPut, reg.URL()+"/config/orders-value", `{"compatibility":"`+tc.level+`"}`); code != http.StatusOK {
					t.Fatalf("PUT /config/orders-value: %d %s", code, body)
				}
			}
			cl, err := NewClient(reg.URL())
			if err != nil {
				t.Fatal(err)
			}
			last := len(tc.versions) - 1
			for _, v := range tc.versions[:last] {
				if _, err := cl.Register(ctx, "orders-value", v); err != nil {
					t.Fatal(err)
				}
			}
			_, err = cl.Register(ctx, "orders-value", tc.versions[last])
			if refused := errors.Is(err, ErrIncompatible); refused != tc.refused || err != nil && !refused {
				t.Errorf("register: %v; want refused %v", err, tc.refused)
			}
		})
	}
}
