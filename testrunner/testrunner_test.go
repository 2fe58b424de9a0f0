package testrunner

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func i64(v int64) *int64 { return &v }

func TestLoadQTT(t *testing.T) {
	p := writeFile(t, t.TempDir(), "t.json", `{"tests": [
	  {"name": "plain", "statements": ["CREATE STREAM S (ID INT KEY, V BIGINT) WITH (kafka_topic='s', value_format='JSON');"],
	   "properties": {"a.num": 1, "b.str": "x", "c.bool": true},
	   "inputs": [{"topic": "s", "key": 1, "value": {"V": 12345678901234567890}}],
	   "outputs": [{"topic": "O", "key": 1, "value": {"V": 1.50}, "timestamp": 7,
	                "window": {"start": 0, "end": 10, "type": "TIME"}}]},
	  {"name": "multi", "format": ["AVRO", "JSON"],
	   "statements": ["CREATE STREAM S (V INT) WITH (kafka_topic='s', value_format='{FORMAT}');"],
	   "topics": [{"name": "s", "valueFormat": "{FORMAT}"}],
	   "expectedException": {"type": "KsqlException", "message": "boom"}},
	  {"name": "off", "enabled": false, "statements": ["SELECT 1;"]},
	  {"name": "sr", "statements": ["CREATE STREAM S (V INT) WITH (kafka_topic='s', KEY_FORMAT = 'json_sr', value_format='JSON');"]}
	]}`)
	f, err := LoadQTT(p)
	if err != nil {
		t.Fatal(err)
	}
	want := []Case{
		{
			Name:       "plain",
			Statements: []string{"CREATE STREAM S (ID INT KEY, V BIGINT) WITH (kafka_topic='s', value_format='JSON');"},
			Properties: map[string]string{"a.num": "1", "b.str": "x", "c.bool": "true", "sluice.compat": "ksqldb"},
			Inputs: []Record{{Topic: "s", Key: json.Number("1"),
				Value: map[string]any{"V": json.Number("12345678901234567890")}, ValueText: json.RawMessage(`{"V":12345678901234567890}`), Timestamp: i64(0)}},
			Outputs: []Record{{Topic: "O", Key: json.Number("1"), Value: map[string]any{"V": json.Number("1.50")},
				Timestamp: i64(7), Window: &Window{Start: 0, End: 10, Type: "time"}}},
		},
		{
			Name: "multi - AVRO", Format: "AVRO",
			Statements:    []string{"CREATE STREAM S (V INT) WITH (kafka_topic='s', value_format='AVRO');"},
			Topics:        json.RawMessage(`[{"name": "s", "valueFormat": "AVRO"}]`),
			ExpectedError: &ExpectedError{Type: "KsqlException", Message: "boom"},
		},
		{
			Name: "multi - JSON", Format: "JSON",
			Statements:    []string{"CREATE STREAM S (V INT) WITH (kafka_topic='s', value_format='JSON');"},
			Topics:        json.RawMessage(`[{"name": "s", "valueFormat": "JSON"}]`),
			ExpectedError: &ExpectedError{Type: "KsqlException", Message: "boom"},
		},
		{Name: "off", Statements: []string{"SELECT 1;"}, Skip: "disabled upstream (enabled: false)"},
		{
			Name:       "sr",
			Statements: []string{"CREATE STREAM S (V INT) WITH (kafka_topic='s', KEY_FORMAT = 'json_sr', value_format='JSON');"},
		},
	}
	for i := range want[1:] {
		want[i+1].Properties = map[string]string{"sluice.compat": "ksqldb"}
	}
	if diff := cmp.Diff(want, f.Cases); diff != "" {
		t.Errorf("LoadQTT (-want +got):\n%s", diff)
	}
}

func TestLoadQTTErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := LoadQTT(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("missing file: no error")
	}
	bad := writeFile(t, dir, "bad.json", `{"tests": [{"name": "x", "inputs": [{"topic": "t", "timestamp": 1.5}]}]}`)
	if _, err := LoadQTT(bad); err == nil {
		t.Error("fractional timestamp: no error")
	}
}

func TestLoadRunnerCase(t *testing.T) {
	dir := t.TempDir()
	sql := "CREATE STREAM S (K STRING KEY, V INT) WITH (kafka_topic='s', value_format='JSON');\nCREATE STREAM O AS SELECT * FROM S;\n"
	sp := writeFile(t, dir, "statements.sql", sql)
	ip := writeFile(t, dir, "input.json", `{"inputs": [{"topic": "s", "key": "a", "value": {"V": 1}}, {"topic": "s", "key": "b", "value": null, "timestamp": 5}]}`)
	op := writeFile(t, dir, "output.json", `{"outputs": [{"topic": "O", "key": "a", "value": {"V": 1}}]}`)
	c, err := LoadRunnerCase(sp, ip, op)
	if err != nil {
		t.Fatal(err)
	}
	want := &Case{
		Name:       "statements",
		Statements: []string{sql},
		Inputs: []Record{
			{Topic: "s", Key: "a", Value: map[string]any{"V": json.Number("1")}, ValueText: json.RawMessage(`{"V":1}`), Timestamp: i64(0)},
			{Topic: "s", Key: "b", Value: nil, Timestamp: i64(5)},
		},
		Outputs: []Record{{Topic: "O", Key: "a", Value: map[string]any{"V": json.Number("1")}}},
	}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("LoadRunnerCase (-want +got):\n%s", diff)
	}
}

func TestEqualJSON(t *testing.T) {
	tests := []struct {
		name string
		a, b any
		want bool
	}{
		{"number text vs float", json.Number("125"), 125.0, true},
		{"number text vs int64", json.Number("125"), int64(125), true},
		{"decimal text vs float", json.Number("125.0"), int64(125), true},
		{"exponent", json.Number("1.25e2"), int32(125), true},
		{"big ints exact", json.Number("9007199254740993"), int64(9007199254740992), false},
		{"big ints equal", json.Number("9223372036854775807"), int64(math.MaxInt64), true},
		{"big int vs float", int64(9007199254740993), float64(9007199254740992), false},
		{"fraction", json.Number("0.1"), 0.1, true}, // the decimal text names the double 0.1, as Java writes it
		{"float vs float", 0.1, 0.1, true},
		{"doubles an ulp apart", json.Number("8634.659796579544"), json.Number("8634.659796579543"), true},
		{"doubles further apart", json.Number("8634.659796579544"), json.Number("8634.6597965795"), false},
		{"nan", math.NaN(), math.NaN(), true},
		{"number vs string", json.Number("1"), "1", false},
		{"strings", "a", "a", true},
		{"bools", true, false, false},
		{"nil", nil, nil, true},
		{"nil vs value", nil, "x", false},
		{"maps", map[string]any{"A": json.Number("1"), "B": []any{"x"}}, map[string]any{"B": []any{"x"}, "A": 1.0}, true},
		{"maps missing key", map[string]any{"A": json.Number("1")}, map[string]any{"B": json.Number("1")}, false},
		{"maps extra key", map[string]any{"A": nil}, map[string]any{"A": nil, "B": nil}, false},
		{"arrays order", []any{json.Number("1"), json.Number("2")}, []any{int64(2), int64(1)}, false},
		{"arrays length", []any{}, []any{nil}, false},
		{"array vs map", []any{}, map[string]any{}, false},
	}
	// An expected name missing from the record is tried upper-cased, as
	// ksqlDB's test tool does; only in that direction.
	oneWay := []struct {
		name     string
		expected any
		actual   any
		want     bool
	}{
		{"lower-case expected name", map[string]any{"json_v": "1"}, map[string]any{"JSON_V": "1"}, true},
		{"nested", map[string]any{"s": map[string]any{"id": nil}}, map[string]any{"S": map[string]any{"ID": nil}}, true},
		{"upper-case expected name", map[string]any{"JSON_V": "1"}, map[string]any{"json_v": "1"}, false},
		{"mixed case record name", map[string]any{"json_v": "1"}, map[string]any{"Json_V": "1"}, false},
		{"exact name wins", map[string]any{"a": "1", "A": "2"}, map[string]any{"a": "1", "A": "2"}, true},
		{"null exact name tries upper", map[string]any{"a": "2", "A": "2"}, map[string]any{"a": nil, "A": "2"}, true},
		// A DECIMAL read from a record equals an expected number of its
		// exact value, whatever the scale, and an expected string of its
		// exact text; digits beyond a double's count.
		{"decimal vs number", json.Number("3.4"), decimalNumber("3.40"), true},
		{"decimal vs integer", json.Number("12345678987654321"), decimalNumber("12345678987654321.0000000000000000"), true},
		{"decimal vs string", "3.40", decimalNumber("3.40"), true},
		{"decimal vs string of another scale", "3.4", decimalNumber("3.40"), false},
		{"decimal vs zero-padded string", "00.00", decimalNumber("0.00"), true},
		{"decimal vs zero-padded string of another scale", "005.40", decimalNumber("5.4"), false},
		{"decimal vs padded string", "005.4", decimalNumber("5.4"), true},
		{"decimal vs negative string", "-01.5", decimalNumber("-1.5"), true},
		{"decimal vs text", "five", decimalNumber("5"), false},
		// An expected null matches a field the record lacks, as ksqlDB's
		// test tool reads a missing field as null; the sizes must agree.
		{"expected null, field missing", map[string]any{"KQL_COL_0": nil, "V": "x"}, map[string]any{"KSQL_COL_0": nil, "V": "x"}, true},
		{"expected value, field missing", map[string]any{"KQL_COL_0": "y"}, map[string]any{"KSQL_COL_0": "y"}, false},
		{"expected null, field missing, sizes differ", map[string]any{"A": nil}, map[string]any{}, false},
		{"decimal beyond a double", json.Number("12345678987654321.0000000000000001"), decimalNumber("12345678987654321.0000000000000000"), false},
		{"decimal beyond a double, 38 digits", json.Number("1234567898765432123.4567898765432151"), decimalNumber("1234567898765432123.4567898765432150"), false},
		{"decimal vs double", 0.1, decimalNumber("0.1"), false}, // float64(0.1) is not 0.1
	}
	for _, tc := range oneWay {
		if got := EqualJSON(tc.expected, tc.actual); got != tc.want {
			t.Errorf("%s: EqualJSON(%v, %v) = %v, want %v", tc.name, tc.expected, tc.actual, got, tc.want)
		}
	}
	for _, tc := range tests {
		if got := EqualJSON(tc.a, tc.b); got != tc.want {
			t.Errorf("%s: EqualJSON(%v, %v) = %v, want %v", tc.name, tc.a, tc.b, got, tc.want)
		}
		if got := EqualJSON(tc.b, tc.a); got != tc.want {
			t.Errorf("%s: EqualJSON(%v, %v) = %v, want %v (reversed)", tc.name, tc.b, tc.a, got, tc.want)
		}
	}
}

func TestCompareOutputs(t *testing.T) {
	rec := func(topic string, key, value any, ts *int64, w *Window) Record {
		return Record{Topic: topic, Key: key, Value: value, Timestamp: ts, Window: w}
	}
	win := &Window{Start: 0, End: 30000, Type: "time"}
	tests := []struct {
		name             string
		expected, actual []Record
		want             []string
	}{
		{
			name:     "equal, numbers by value, timestamp and window unchecked when not expected",
			expected: []Record{rec("S2", json.Number("0"), map[string]any{"V": json.Number("125")}, nil, nil)},
			actual:   []Record{rec("S2", int64(0), map[string]any{"V": 125.0}, i64(99), win)},
		},
		{
			name: "topics interleave freely",
			expected: []Record{rec("A", "1", nil, nil, nil), rec("B", "2", nil, nil, nil),
				rec("A", "3", nil, nil, nil)},
			actual: []Record{rec("B", "2", nil, nil, nil), rec("A", "1", nil, nil, nil),
				rec("A", "3", nil, nil, nil)},
		},
		{
			name:     "value mismatch, first per topic only",
			expected: []Record{rec("S", "k", "1", i64(5), nil), rec("S", "k", "2", nil, nil)},
			actual:   []Record{rec("S", "k", "9", i64(5), nil), rec("S", "k", "8", nil, nil)},
			want:     []string{`topic S: record 0 differs in value: expected {"topic":"S","key":"k","value":"1","timestamp":5} got {"topic":"S","key":"k","value":"9","timestamp":5}`},
		},
		{
			name:     "timestamp and window",
			expected: []Record{rec("S", json.Number("1"), nil, i64(5), win)},
			actual:   []Record{rec("S", int64(1), nil, i64(6), &Window{Start: 0, End: 60000, Type: "time"})},
			want:     []string{`topic S: record 0 differs in timestamp, window: expected {"topic":"S","key":1,"value":null,"timestamp":5,"window":{"start":0,"end":30000,"type":"time"}} got {"topic":"S","key":1,"value":null,"timestamp":6,"window":{"start":0,"end":60000,"type":"time"}}`},
		},
		{
			name:     "window expected but missing",
			expected: []Record{rec("S", "k", nil, nil, win)},
			actual:   []Record{rec("S", "k", nil, nil, nil)},
			want:     []string{`topic S: record 0 differs in window: expected {"topic":"S","key":"k","value":null,"window":{"start":0,"end":30000,"type":"time"}} got {"topic":"S","key":"k","value":null}`},
		},
		{
			name:     "missing and extra; a topic the case expects nothing on is not compared",
			expected: []Record{rec("A", "1", nil, nil, nil), rec("A", "2", nil, nil, nil), rec("C", "c", nil, nil, nil)},
			actual: []Record{rec("A", "1", nil, nil, nil), rec("B", "x", json.Number("1"), i64(3), nil),
				rec("C", "c", nil, nil, nil), rec("C", "d", json.Number("2"), i64(4), nil)},
			want: []string{
				`topic A: 1 missing record(s) from record 1 on`,
				`  missing {"topic":"A","key":"2","value":null}`,
				`topic C: 1 extra record(s) from record 1 on`,
				`  extra {"topic":"C","key":"d","value":2,"timestamp":4}`,
			},
		},
		{
			name:     "a case expecting no records at all gets none",
			expected: nil,
			actual:   []Record{rec("B", "x", json.Number("1"), i64(3), nil)},
			want: []string{
				`topic B: 1 extra record(s) from record 0 on`,
				`  extra {"topic":"B","key":"x","value":1,"timestamp":3}`,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := CompareOutputs(tc.expected, tc.actual)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("CompareOutputs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCompareOutputsCapsListing(t *testing.T) {
	var exp []Record
	for range 12 {
		exp = append(exp, Record{Topic: "T", Key: "k"})
	}
	got := CompareOutputs(exp, nil)
	if len(got) != 12 || got[0] != "topic T: 12 missing record(s) from record 0 on" || got[11] != "  … and 2 more" {
		t.Errorf("CompareOutputs = %q", got)
	}
}

func TestWriteReport(t *testing.T) {
	var buf bytes.Buffer
	failed := WriteReport(&buf, []Result{
		{File: "count.json", Case: "count", Status: Passed},
		{File: "sum.json", Case: "sum - AVRO", Status: Skipped, Reason: "format AVRO needs Schema Registry"},
		{File: "sum.json", Case: "sum double", Status: Failed, Diff: []string{"topic S: 1 missing record(s) from record 0 on", `  missing {"topic":"S"}`}},
		{File: "joins.json", Case: "bad", Status: Failed, Reason: "statement 2: unexpected error"},
	})
	want := `PASS  count.json :: count
SKIP  sum.json :: sum - AVRO (format AVRO needs Schema Registry)
FAIL  sum.json :: sum double
    topic S: 1 missing record(s) from record 0 on
      missing {"topic":"S"}
FAIL  joins.json :: bad
    statement 2: unexpected error
1 passed, 2 failed, 1 skipped
`
	if failed != 2 {
		t.Errorf("failed = %d, want 2", failed)
	}
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("WriteReport (-want +got):\n%s", diff)
	}
}
