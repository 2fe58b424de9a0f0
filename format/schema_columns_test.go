package format_test

import (
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/format"
)

// TestSchemaColumns: the columns a source declared without a column list
// infers from its registered schema. A record value is a column per
// field; a key, or a value declared WRAP_SINGLE_VALUE=false, is one
// column (ROWKEY, ROWVAL) of the whole schema's type.
func TestSchemaColumns(t *testing.T) {
	const (
		avroRecord = `{"type":"record","name":"R","fields":[{"name":"f0","type":["null","int"]},{"name":"F1","type":"string"}]}`
		jsonObject = `{"type":"object","properties":{"f0":{"type":"integer"},"F1":{"type":"string"}}}`
	)
	for _, tc := range []struct {
		name           string
		format, schema string
		key, unwrapped bool
		want           string
	}{
		{"avro record value", format.Avro, avroRecord, false, false, "F0 INTEGER, F1 STRING"},
		{"avro record value unwrapped", format.Avro, avroRecord, false, true, "ROWVAL STRUCT<`F0` INTEGER, `F1` STRING>"},
		{"avro record key", format.Avro, avroRecord, true, false, "ROWKEY STRUCT<`F0` INTEGER, `F1` STRING> KEY"},
		{"avro primitive value", format.Avro, `"int"`, false, false, "ROWVAL INTEGER"},
		{"avro primitive value unwrapped", format.Avro, `"int"`, false, true, "ROWVAL INTEGER"},
		{"avro map value unwrapped", format.Avro, `{"type":"map","values":["null","int"]}`, false, true, "ROWVAL MAP<STRING, INTEGER>"},
		{"json_sr object value", format.JSONSR, jsonObject, false, false, "F0 BIGINT, F1 STRING"},
		{"json_sr object value unwrapped", format.JSONSR, jsonObject, false, true, "ROWVAL STRUCT<`F0` BIGINT, `F1` STRING>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cols, err := format.SchemaColumns(tc.format, format.Schema{Type: format.RegistryType(tc.format), Text: tc.schema}, "", tc.key, tc.unwrapped)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range cols {
				s := c.Name + " " + c.Type.String()
				if c.Key {
					s += " KEY"
				}
				got = append(got, s)
			}
			if g := strings.Join(got, ", "); g != tc.want {
				t.Errorf("columns %s, want %s", g, tc.want)
			}
		})
	}
}
