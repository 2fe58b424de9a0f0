package exec

import (
	"slices"
	"testing"
)

// A negative time has no windows, as in Kafka Streams; sources skip such
// records before they reach an aggregate.
func TestNegativeTimeHasNoWindows(t *testing.T) {
	for _, w := range []*WindowSpec{{Kind: Hopping, Size: 10, Advance: 5}, {Kind: Tumbling, Size: 10}} {
		if got := w.starts(-3, nil); !slices.Equal(got, []int64{}) {
			t.Errorf("%s starts(-3) = %v, want none", w.Kind, got)
		}
	}
}
