package planner

import (
	"testing"

	"github.com/sluice-sql/sluice/format"
)

// A query's sink keeps its source's delimiters unless the statement names
// the format or the delimiter.
func TestInheritDelimiters(t *testing.T) {
	src := &Source{KeyFormat: "DELIMITED", ValueFormat: "DELIMITED",
		KeyProps: format.Props{Delimiter: ";"}, ValueProps: format.Props{Delimiter: "|"}}
	tests := []struct {
		name               string
		with               Props
		keyFormat, valFmt  string
		wantKey, wantValue string
	}{
		{"inherited", Props{}, "DELIMITED", "DELIMITED", ";", "|"},
		{"value format named", Props{"VALUE_FORMAT": "DELIMITED"}, "DELIMITED", "DELIMITED", ";", ""},
		{"format named", Props{"FORMAT": "DELIMITED"}, "DELIMITED", "DELIMITED", "", ""},
		{"delimiter named", Props{"VALUE_DELIMITER": "TAB"}, "DELIMITED", "DELIMITED", ";", "TAB"},
		{"key format changed", Props{}, "JSON", "DELIMITED", "", "|"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sink := &Source{KeyFormat: tc.keyFormat, ValueFormat: tc.valFmt}
			sink.KeyProps, sink.ValueProps = tc.with.formatProps()
			tc.with.inheritDelimiters(src, sink)
			if sink.KeyProps.Delimiter != tc.wantKey || sink.ValueProps.Delimiter != tc.wantValue {
				t.Errorf("delimiters = %q, %q, want %q, %q", sink.KeyProps.Delimiter, sink.ValueProps.Delimiter, tc.wantKey, tc.wantValue)
			}
		})
	}
}
