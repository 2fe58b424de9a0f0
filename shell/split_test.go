package shell

import (
	"testing"
)

func TestBlank(t *testing.T) {
	for src, want := range map[string]bool{"": true, " \n\t": true, "-- done": true, "/* x */ -- y\n": true, "/* open": false, "x": false, "-- a\nSELECT": false} {
		if got := blank(src); got != want {
			t.Errorf("blank(%q) = %v, want %v", src, got, want)
		}
	}
}

func TestHistoryEntry(t *testing.T) {
	got := historyEntry("CREATE STREAM s (id VARCHAR KEY)\n    WITH (KAFKA_TOPIC='s');\n")
	if want := "CREATE STREAM s (id VARCHAR KEY) WITH (KAFKA_TOPIC='s');"; got != want {
		t.Errorf("historyEntry = %q, want %q", got, want)
	}
}
