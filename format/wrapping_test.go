package format_test

import (
	"errors"
	"testing"

	"github.com/sluice-sql/sluice/format"
)

func TestValueWrapping(t *testing.T) {
	yes, no := true, false
	show := func(b *bool) string {
		if b == nil {
			return "default"
		}
		return map[bool]string{true: "wrap", false: "unwrap"}[*b]
	}
	tests := []struct {
		format               string
		columns              int
		explicit, configured *bool
		want                 string
		err                  string
	}{
		{format: "JSON", columns: 1, want: "default"},
		{format: "JSON", columns: 1, explicit: &no, want: "unwrap"},
		{format: "json", columns: 1, explicit: &yes, configured: &no, want: "wrap"},
		{format: "JSON", columns: 1, configured: &no, want: "unwrap"},
		{format: "AVRO", columns: 1, configured: &no, want: "unwrap"},
		{format: "JSON_SR", columns: 1, configured: &yes, want: "wrap"},
		{format: "JSON", columns: 2, configured: &no, want: "default"},
		{format: "JSON", columns: 0, configured: &no, want: "default"},
		{format: "DELIMITED", columns: 1, configured: &yes, want: "default"},
		{format: "DELIMITED", columns: 1, configured: &no, want: "unwrap"},
		{format: "KAFKA", columns: 1, configured: &yes, want: "default"},
		{format: "PROTOBUF", columns: 1, configured: &no, want: "default"},
		{format: "JSON", columns: 2, explicit: &no, err: "'WRAP_SINGLE_VALUE' is only valid for single-field value schemas"},
		{format: "JSON", columns: 3, explicit: &yes, err: "'WRAP_SINGLE_VALUE' is only valid for single-field value schemas"},
		{format: "KAFKA", columns: 1, explicit: &yes, err: "Format 'KAFKA' does not support 'WRAP_SINGLE_VALUE' set to 'true'."},
		{format: "delimited", columns: 2, explicit: &yes, err: "Format 'DELIMITED' does not support 'WRAP_SINGLE_VALUE' set to 'true'."},
		{format: "PROTOBUF", columns: 1, explicit: &no, err: "Format 'PROTOBUF' does not support 'WRAP_SINGLE_VALUE' set to 'false'."},
	}
	for _, tc := range tests {
		got, err := format.ValueWrapping(tc.format, tc.columns, tc.explicit, tc.configured)
		if tc.err != "" {
			if err == nil || !errors.Is(err, format.ErrUnsupported) || err.Error() != "unsupported by format: "+tc.err {
				t.Errorf("%s %d cols explicit %s configured %s: err %v, want %q", tc.format, tc.columns, show(tc.explicit), show(tc.configured), err, tc.err)
			}
			continue
		}
		if err != nil || show(got) != tc.want {
			t.Errorf("%s %d cols explicit %s configured %s: %s, %v; want %s", tc.format, tc.columns, show(tc.explicit), show(tc.configured), show(got), err, tc.want)
		}
	}
}
