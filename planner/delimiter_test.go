package planner

import (
	"testing"

	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/parser"
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

// A CREATE naming no format takes the session's default formats.
func TestDefaultFormats(t *testing.T) {
	tests := []struct {
		name, with         string
		opts               Options
		wantKey, wantValue string
	}{
		{"value default", "KAFKA_TOPIC='t'", Options{DefaultValueFormat: "JSON"}, "KAFKA", "JSON"},
		{"both defaults", "KAFKA_TOPIC='t'", Options{DefaultKeyFormat: "JSON", DefaultValueFormat: "DELIMITED"}, "JSON", "DELIMITED"},
		{"statement wins", "KAFKA_TOPIC='t', KEY_FORMAT='DELIMITED', VALUE_FORMAT='KAFKA'", Options{DefaultKeyFormat: "JSON", DefaultValueFormat: "JSON"}, "DELIMITED", "KAFKA"},
		{"FORMAT wins", "KAFKA_TOPIC='t', FORMAT='JSON'", Options{DefaultKeyFormat: "DELIMITED", DefaultValueFormat: "DELIMITED"}, "JSON", "JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, err := parser.ParseOne("CREATE STREAM s (k STRING KEY, v INT) WITH (" + tc.with + ")")
			if err != nil {
				t.Fatal(err)
			}
			src, err := CreateSourceWith(NewCatalog(), st.(*parser.CreateSource), "", tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if src.KeyFormat != tc.wantKey || src.ValueFormat != tc.wantValue {
				t.Errorf("formats = %s, %s, want %s, %s", src.KeyFormat, src.ValueFormat, tc.wantKey, tc.wantValue)
			}
		})
	}
}
