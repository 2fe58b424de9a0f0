package state

import (
	"fmt"
	"testing"
)

// BenchmarkRangeAfterPut is the session-window pattern: every record
// writes a new key, then ranges over a few keys of one group, while the
// overlay fills up over a commit interval.
func BenchmarkRangeAfterPut(b *testing.B) {
	for _, pending := range []int{1_000, 20_000} {
		b.Run(fmt.Sprintf("overlay=%d", pending), func(b *testing.B) {
			s := openDB(b, "").Store("bench", 0)
			for i := range pending {
				s.Put(fmt.Appendf(nil, "k%08d", i), []byte("v"))
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				k := fmt.Appendf(nil, "n%08d", i)
				s.Put(k, []byte("v"))
				if err := s.RangeBetween(k, append(k, 0xff), func(_, _ []byte) bool { return true }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
