package format

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sluice-sql/sluice/types"
)

// TestReadDebeziumJSON reads the real Debezium records in
// testdata/debezium (Postgres, JsonConverter with and without schemas,
// REPLICA IDENTITY FULL and DEFAULT: see its README) through the change
// codec: the op, the row its op makes current in the declared columns,
// the before image, source.ts_ms and the source block.
func TestReadDebeziumJSON(t *testing.T) {
	cols := []types.Column{
		{Name: "ID", Type: types.IntegerType, Key: true},
		{Name: "OWNER", Type: types.StringType},
		{Name: "BALANCE", Type: types.BigIntType},
	}
	c, err := NewChangeCodec(EnvelopeDebezium, JSON, cols, Props{})
	if err != nil {
		t.Fatal(err)
	}
	row := func(id int32, owner any, balance any) []any { return []any{id, owner, balance} }
	full := map[string]struct {
		op          byte
		row, before []any
	}{
		"r":           {'r', row(1, "ann", int64(100)), nil},
		"c":           {'c', row(3, "cat", int64(10)), nil},
		"u":           {'u', row(2, "bob", int64(60)), row(2, "bob", int64(50))},
		"pk-change-d": {'d', row(2, "bob", int64(60)), row(2, "bob", int64(60))},
		"pk-change-c": {'c', row(20, "bob", int64(60)), nil},
		"d":           {'d', row(1, "ann", int64(100)), row(1, "ann", int64(100))},
	}
	for _, dir := range []string{"plain", "schemas", "replica-identity-default"} {
		for name, want := range full {
			t.Run(dir+"/"+name, func(t *testing.T) {
				data, err := os.ReadFile(filepath.Join("testdata", "debezium", dir, name+".value.json"))
				if err != nil {
					t.Fatal(err)
				}
				// What Debezium wrote, read independently: the source block.
				var raw map[string]any
				dec := json.NewDecoder(bytes.NewReader(data))
				dec.UseNumber()
				if err := dec.Decode(&raw); err != nil {
					t.Fatal(err)
				}
				if p, ok := raw["payload"].(map[string]any); ok {
					raw = p
				}
				source := raw["source"].(map[string]any)
				if dir == "replica-identity-default" {
					// Without REPLICA IDENTITY FULL the database logs no
					// old row for an update and only the key for a delete.
					switch name {
					case "u":
						want.before = nil
					case "d", "pk-change-d":
						want.before = row(want.row[0].(int32), nil, nil)
						want.row = want.before
					}
				}
				got := make([]any, len(cols))
				ev, err := c.Read(data, got)
				if err != nil {
					t.Fatal(err)
				}
				if ev.Op != want.op {
					t.Errorf("op %c, want %c", ev.Op, want.op)
				}
				if diff := cmp.Diff(want.row, got); diff != "" {
					t.Errorf("row (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(want.before, ev.Before); diff != "" {
					t.Errorf("before (-want +got):\n%s", diff)
				}
				if want, _ := source["ts_ms"].(json.Number).Int64(); ev.TsMs != want {
					t.Errorf("ts_ms %v, want %d", ev.TsMs, want)
				}
				if len(ev.Source) != len(source) {
					t.Errorf("source has %d fields, want %d: %v", len(ev.Source), len(source), ev.Source)
				}
				for k, v := range source {
					var want any
					switch x := v.(type) {
					case string:
						want = x
					case json.Number:
						want = x.String()
					}
					if ev.Source[k] != want {
						t.Errorf("source[%s] = %#v, want %#v", k, ev.Source[k], want)
					}
				}
			})
		}
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
