package format

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sluice-sql/sluice/types"
)

// TestReadMaxwellJSON reads Maxwell's change events (the shapes of its
// documentation) into a table's columns through ChangeCodec.
func TestReadMaxwellJSON(t *testing.T) {
	cols := []types.Column{{Name: "ID", Type: types.IntegerType}, {Name: "DAEMON", Type: types.StringType}}
	c, err := NewChangeCodec(EnvelopeMaxwell, JSON, cols, Props{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in     string
		op     byte
		row    []any
		before []any
		tsMs   any
		source map[string]any
	}{
		{`{"database":"test","table":"maxwell","type":"insert","ts":1449786310,"xid":940752,"commit":true,"data":{"id":1,"daemon":"Stanislaw Lem"}}`,
			'c', []any{int32(1), "Stanislaw Lem"}, nil, int64(1449786310000),
			map[string]any{"database": "test", "table": "maxwell", "type": "insert", "ts": "1449786310", "xid": "940752", "commit": "true"}},
		{`{"database":"test","table":"maxwell","type":"update","ts":1449786341,"xid":940786,"commit":true,"data":{"id":1,"daemon":"Firebus!  Firebus!"},"old":{"daemon":"Stanislaw Lem"}}`,
			'u', []any{int32(1), "Firebus!  Firebus!"}, []any{int32(1), "Stanislaw Lem"}, int64(1449786341000),
			map[string]any{"database": "test", "table": "maxwell", "type": "update", "ts": "1449786341", "xid": "940786", "commit": "true"}},
		{`{"database":"test","table":"maxwell","type":"delete","ts":1449786358,"xid":940791,"commit":true,"data":{"id":1,"daemon":"Firebus!  Firebus!"}}`,
			'd', []any{int32(1), "Firebus!  Firebus!"}, []any{int32(1), "Firebus!  Firebus!"}, int64(1449786358000),
			map[string]any{"database": "test", "table": "maxwell", "type": "delete", "ts": "1449786358", "xid": "940791", "commit": "true"}},
		{`{"database":"test","table":"maxwell","type":"bootstrap-insert","ts":1449786400,"data":{"id":2,"daemon":"Vonnegut"}}`,
			'r', []any{int32(2), "Vonnegut"}, nil, int64(1449786400000),
			map[string]any{"database": "test", "table": "maxwell", "type": "bootstrap-insert", "ts": "1449786400"}},
	}
	for _, tt := range tests {
		row := make([]any, len(cols))
		ev, err := c.Read([]byte(tt.in), row)
		if err != nil {
			t.Errorf("%s: %v", tt.in, err)
			continue
		}
		got := []any{string(ev.Op), row, ev.Before, ev.TsMs, ev.Source}
		want := []any{string(tt.op), tt.row, tt.before, tt.tsMs, tt.source}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.in, diff)
		}
	}
	for _, tt := range []struct{ in, want string }{
		{`{"database":"test","type":"bootstrap-start","ts":1}`, "not a row change"},
		{`{"database":"test","ts":1,"data":{"id":1}}`, "malformed record: malformed change event: no type field"},
		{`{"type":"upsert","data":{"id":1}}`, `malformed record: malformed change event: unknown type "upsert" (Maxwell writes insert, update, delete, bootstrap-insert)`},
		{`{"type":"insert"}`, "malformed record: malformed change event: insert without data"},
		{`{"type":"delete","data":[1]}`, "malformed record: malformed change event: data is a JSON object or null, not array"},
	} {
		_, err := c.Read([]byte(tt.in), make([]any, len(cols)))
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s: error %v, want %s", tt.in, err, tt.want)
		}
		if tt.want != "not a row change" && !errors.Is(err, ErrEnvelope) {
			t.Errorf("%s: %v is not ErrEnvelope", tt.in, err)
		}
	}
}
