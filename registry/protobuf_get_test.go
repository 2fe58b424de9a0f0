package registry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sluice-sql/sluice/format"
)

// httpDo sends a request to the registry and returns the status and body.
func httpDo(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/vnd.schemaregistry.v1+json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// register posts a schema under subject as a client does and returns its
// id.
func register(t *testing.T, base, subject, schemaType, schema string) int {
	t.Helper()
	req, _ := json.Marshal(map[string]string{"schemaType": schemaType, "schema": schema})
	code, body := httpDo(t, http.MethodPost, base+"/subjects/"+subject+"/versions", string(req))
	var resp struct{ ID int }
	if code != http.StatusOK || json.Unmarshal([]byte(body), &resp) != nil {
		t.Fatalf("register under %s: %d %s", subject, code, body)
	}
	return resp.ID
}

// TestProtobufGetAnswersText: a Protobuf schema registered serialized, as
// Confluent's clients register it, is answered as .proto text by a plain
// GET of it (by id, by subject and version, and the /schema variants of
// both), and as base64 only with ?format=serialized, as Confluent's
// registry answers. A schema registered as text is answered as it was
// registered; an Avro schema is untouched. The /schema variants answer
// the schema alone, unquoted, as Confluent's registry does.
func TestProtobufGetAnswersText(t *testing.T) {
	reg, err := Serve("127.0.0.1:0", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Close() })
	base := reg.URL()
	source := "syntax = \"proto3\"; package shop; message Order { string id = 1; repeated int64 qty = 2; }"
	serialized, err := format.SerializeProtobuf(format.Schema{Type: format.SchemaProtobuf, Text: source})
	if err != nil {
		t.Fatal(err)
	}
	text := "syntax = \"proto3\";\npackage shop;\n\nmessage Order {\n  string id = 1;\n  repeated int64 qty = 2;\n}\n"
	id := register(t, base, "orders-value", "PROTOBUF", serialized)
	textID := register(t, base, "texts-value", "PROTOBUF", source)
	avro := `{"type":"record","name":"A","fields":[{"name":"x","type":"long"}]}`
	avroID := register(t, base, "avros-value", "AVRO", avro)

	for _, tc := range []struct {
		path, want string
		raw        bool // the want is the body itself, not JSON
	}{
		{fmt.Sprintf("/schemas/ids/%d", id), fmt.Sprintf(`{"schema":%q,"schemaType":"PROTOBUF"}`, text), false},
		{fmt.Sprintf("/schemas/ids/%d?format=serialized", id), fmt.Sprintf(`{"schema":%q,"schemaType":"PROTOBUF"}`, serialized), false},
		{fmt.Sprintf("/schemas/ids/%d/schema", id), text, true},
		{fmt.Sprintf("/schemas/ids/%d/schema?format=serialized", id), serialized, true},
		{"/subjects/orders-value/versions/1", fmt.Sprintf(`{"id":%d,"schema":%q,"schemaType":"PROTOBUF","subject":"orders-value","version":1}`, id, text), false},
		{"/subjects/orders-value/versions/latest?format=serialized", fmt.Sprintf(`{"id":%d,"schema":%q,"schemaType":"PROTOBUF","subject":"orders-value","version":1}`, id, serialized), false},
		{"/subjects/orders-value/versions/1/schema", text, true},
		{"/subjects/orders-value/versions/latest/schema?format=serialized", serialized, true},
		{fmt.Sprintf("/schemas/ids/%d", textID), fmt.Sprintf(`{"schema":%q,"schemaType":"PROTOBUF"}`, source), false},
		{"/subjects/texts-value/versions/1/schema", source, true},
		{fmt.Sprintf("/schemas/ids/%d", avroID), fmt.Sprintf(`{"schema":%q}`, avro), false},
		{"/subjects/avros-value/versions/1", fmt.Sprintf(`{"id":%d,"schema":%q,"subject":"avros-value","version":1}`, avroID, avro), false},
		{"/schemas/ids/999", `{"error_code":40403,"message":"schema not found"}`, false},
	} {
		code, body := httpDo(t, http.MethodGet, base+tc.path, "")
		if tc.raw {
			if code != http.StatusOK || body != tc.want {
				t.Errorf("GET %s: %d\n%s\nwant 200\n%s", tc.path, code, body, tc.want)
			}
			continue
		}
		var got, want any
		if err := json.Unmarshal([]byte(body), &got); err != nil {
			t.Errorf("GET %s: %d %q: %v", tc.path, code, body, err)
			continue
		}
		if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
			t.Fatalf("want of %s: %v", tc.path, err)
		}
		// srfake gives each version a random guid of its own.
		if m, ok := got.(map[string]any); ok {
			delete(m, "guid")
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("GET %s (-want +got):\n%s", tc.path, diff)
		}
	}
}
