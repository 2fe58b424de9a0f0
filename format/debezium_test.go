package format

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sluice-sql/sluice/types"
)

// TestReadDebeziumJSON reads Debezium's Postgres change events as
// JsonConverter writes them, with and without schemas, and converts the
// image the op makes current into the declared columns by name.
func TestReadDebeziumJSON(t *testing.T) {
	cols := []types.Column{
		{Name: "ID", Type: types.IntegerType, Key: true},
		{Name: "NAME", Type: types.StringType},
		{Name: "QTY", Type: types.BigIntType},
		{Name: "PRICE", Type: types.DoubleType},
	}
	tests := []struct {
		file       string
		op         byte
		row        []any // the image the op makes current
		before     []any // nil: no before image
		tsMs       any
		source     map[string]any // the fields checked
		sourceSize int
	}{
		{"create_schemas_off.json", 'c', []any{int32(1), "anvil", int64(3), 9.5}, nil, int64(1764979200123),
			map[string]any{"connector": "postgresql", "db": "shop", "schema": "public", "table": "items", "txId": "771", "lsn": "26861448", "snapshot": "false", "xmin": nil}, 14},
		{"read_schemas_off.json", 'r', []any{int32(2), "bolt", int64(100), 0.25}, nil, int64(1764979100000),
			map[string]any{"snapshot": "first", "lsn": "26861000"}, 12},
		{"update_schemas_on.json", 'u', []any{int32(1), "anvil", int64(5), 9.5}, []any{int32(1), "anvil", int64(3), 9.5}, int64(1764979201000),
			map[string]any{"txId": "772", "sequence": `["26861448","26861600"]`}, 12},
		{"delete_schemas_off.json", 'd', []any{int32(1), nil, nil, nil}, []any{int32(1), nil, nil, nil}, int64(1764979202000),
			map[string]any{"txId": "773"}, 12},
	}
	codec, err := NewValueCodec(JSON, cols, Props{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "debezium", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			ch, err := ReadDebeziumJSON(data)
			if err != nil {
				t.Fatal(err)
			}
			if ch.Op != tt.op {
				t.Errorf("op %c, want %c", ch.Op, tt.op)
			}
			row := make([]any, len(cols))
			if err := codec.Decode(ch.Image(), row); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.row, row); diff != "" {
				t.Errorf("row (-want +got):\n%s", diff)
			}
			var before []any
			if ch.Before != nil {
				before = make([]any, len(cols))
				if err := codec.Decode(ch.Before, before); err != nil {
					t.Fatal(err)
				}
			}
			if diff := cmp.Diff(tt.before, before); diff != "" {
				t.Errorf("before (-want +got):\n%s", diff)
			}
			if ch.TsMs != tt.tsMs {
				t.Errorf("ts_ms %v, want %v", ch.TsMs, tt.tsMs)
			}
			if len(ch.Source) != tt.sourceSize {
				t.Errorf("source has %d fields, want %d: %v", len(ch.Source), tt.sourceSize, ch.Source)
			}
			for k, want := range tt.source {
				if got, ok := ch.Source[k]; !ok || got != want {
					t.Errorf("source[%s] = %#v (present %v), want %#v", k, got, ok, want)
				}
			}
		})
	}
}

// TestReadDebeziumJSONMalformed: what is not a change event is an
// error naming what is wrong, of kinds ErrMalformed and ErrEnvelope.
func TestReadDebeziumJSONMalformed(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"before":null,"after":{"id":1}}`, "malformed record: malformed change event: no op field"},
		{`{"after":{"id":1},"op":null}`, "malformed record: malformed change event: no op field"},
		{`{"after":{"id":1},"op":"x"}`, `malformed record: malformed change event: unknown op "x" (Debezium writes c, r, u or d)`},
		{`{"after":{"id":1},"op":"t"}`, `malformed record: malformed change event: unknown op "t" (Debezium writes c, r, u or d)`},
		{`{"after":{"id":1},"op":7}`, `malformed record: malformed change event: unknown op 7 (Debezium writes c, r, u or d)`},
		{`{"before":null,"after":null,"op":"c"}`, "malformed record: malformed change event: op c without an after image"},
		{`{"before":{"id":1},"op":"u"}`, "malformed record: malformed change event: op u without an after image"},
		{`{"before":null,"after":null,"op":"d"}`, "malformed record: malformed change event: op d without a before image (set the table's REPLICA IDENTITY so the database logs the deleted row's key)"},
		{`{"after":[1],"op":"c"}`, "malformed record: malformed change event: after is a JSON object or null, not array"},
		{`[1,2]`, "malformed record: malformed change event: a Debezium change event is a JSON object, not array"},
		{`{"schema":{},"payload":"x"}`, "malformed record: malformed change event: the payload of a Debezium change event is a JSON object, not string"},
		{`{"op":`, "malformed record: malformed change event: cannot parse JSON: cannot parse object: cannot parse object value: cannot parse empty string; unparsed tail: \"\""},
	}
	for _, tt := range tests {
		_, err := ReadDebeziumJSON([]byte(tt.in))
		if err == nil {
			t.Errorf("%s: no error", tt.in)
			continue
		}
		if err.Error() != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.in, err, tt.want)
		}
		if !errors.Is(err, ErrMalformed) || !errors.Is(err, ErrEnvelope) {
			t.Errorf("%s: %v is not ErrMalformed and ErrEnvelope", tt.in, err)
		}
	}
}
