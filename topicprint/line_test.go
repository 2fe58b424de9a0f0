package topicprint_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sluice-sql/sluice/topicprint"
)

func ptr(s string) *string { return &s }

// TestParseLine reads PRINT lines back into the records Line wrote, and
// passes over the other lines a PRINT response carries.
func TestParseLine(t *testing.T) {
	for _, c := range []struct {
		line string
		want topicprint.Record
		ok   bool
		err  string
	}{
		{line: "rowtime: 2026/05/24 12:00:00.000 Z, key: a, value: {\"n\":1}, partition: 3\n",
			want: topicprint.Record{Rowtime: "2026/05/24 12:00:00.000 Z", Key: ptr("a"), Value: ptr(`{"n":1}`), Partition: 3}, ok: true},
		{line: "rowtime: N/A, key: <null>, value: x, partition: 0, y, partition: 1",
			want: topicprint.Record{Rowtime: "N/A", Value: ptr("x, partition: 0, y"), Partition: 1}, ok: true},
		{line: "rowtime: N/A, key: k, value: <null>, partition: 0",
			want: topicprint.Record{Rowtime: "N/A", Key: ptr("k"), Partition: 0}, ok: true},
		{line: "\n"},
		{line: "Key format: KAFKA_STRING\n"},
		{line: "Value format: JSON or KAFKA_STRING\n"},
		{line: "Connection reset\n", err: "PRINT: Connection reset"},
		{line: "rowtime: N/A, key: k", err: `PRINT: not a record line: "rowtime: N/A, key: k"`},
	} {
		got, ok, err := topicprint.ParseLine(c.line)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if diff := cmp.Diff(c.want, got); diff != "" || ok != c.ok || gotErr != c.err {
			t.Errorf("%q: ok %v (want %v), err %q (want %q), record (-want +got):\n%s", c.line, ok, c.ok, gotErr, c.err, diff)
		}
		if ok {
			if back := topicprint.Line(got) + "\n"; back != c.line && back != c.line+"\n" {
				t.Errorf("%q: printed back as %q", c.line, back)
			}
		}
	}
}
