package exec

import (
	"fmt"
	"math"
	"strings"

	"github.com/sluice-sql/sluice/state"
	"github.com/sluice-sql/sluice/types"
)

// WindowBounds are a pull query's inclusive bounds on a windowed
// table's WINDOWSTART and WINDOWEND (nil: unbounded), from the
// comparisons of its WHERE with integer literals. The WHERE still
// filters the rows read.
type WindowBounds struct {
	StartLo, StartHi, EndLo, EndHi *int64
}

// String is the bounds as EXPLAIN prints them.
func (b *WindowBounds) String() string {
	var parts []string
	bound := func(name string, lo, hi *int64) {
		switch {
		case lo != nil && hi != nil:
			parts = append(parts, fmt.Sprintf("%d <= %s <= %d", *lo, name, *hi))
		case lo != nil:
			parts = append(parts, fmt.Sprintf("%s >= %d", name, *lo))
		case hi != nil:
			parts = append(parts, fmt.Sprintf("%s <= %d", name, *hi))
		}
	}
	bound("WINDOWSTART", b.StartLo, b.StartHi)
	bound("WINDOWEND", b.EndLo, b.EndHi)
	return "windows " + strings.Join(parts, " and ")
}

// startRange is the range of window starts the bounds allow for windows
// of w: WINDOWEND bounds become start bounds through the window's size
// (a session's end only caps its start).
func (b *WindowBounds) startRange(w *WindowSpec) (lo, hi int64) {
	lo, hi = math.MinInt64, math.MaxInt64
	if b.StartLo != nil {
		lo = *b.StartLo
	}
	if b.StartHi != nil {
		hi = *b.StartHi
	}
	if b.EndHi != nil {
		h := *b.EndHi
		if w.Kind != Session && h > math.MinInt64+w.Size {
			h -= w.Size
		}
		hi = min(hi, h)
	}
	if b.EndLo != nil && w.Kind != Session && *b.EndLo > math.MinInt64+w.Size {
		lo = max(lo, *b.EndLo-w.Size)
	}
	return lo, hi
}

// ScanWindows is Scan (keys nil) or ScanKeys limited to the windows the
// bounds allow, read by ordered ranges of window start where the layout
// has them: TUMBLING and HOPPING windows lay the start first, so any
// bounds read one range of starts (every key's windows there); SESSION
// and SLIDING lay the key first, so a key's windows are one range of its
// entries, and without keys the table is scanned. Other tables read as
// ScanKeys and Scan do.
func (r *TableReader) ScanWindows(db *state.DB, keys [][]any, b *WindowBounds, fn func(row []any) bool) error {
	w := (*WindowSpec)(nil)
	if r.agg != nil {
		w = r.agg.Window
	}
	timeWindows := w != nil && w.Kind != Session && w.Kind != Sliding
	if w == nil || (!timeWindows && keys == nil) {
		if keys != nil {
			return r.ScanKeys(db, keys, fn)
		}
		return r.Scan(db, fn)
	}
	lo, hi := b.startRange(w)
	if lo > hi {
		return nil
	}
	endOf := func(prefix []byte) []byte {
		if hi == math.MaxInt64 {
			return prefixEndOf(prefix)
		}
		return appendTime(append([]byte(nil), prefix...), hi+1)
	}
	type run struct{ start, end []byte }
	var runs []run
	if timeWindows {
		var end []byte
		if hi != math.MaxInt64 {
			end = windowBound(hi + 1)
		}
		runs = append(runs, run{windowBound(lo), end})
	} else {
		prefix, _ := entryLayout(r.agg)
		for _, k := range keys {
			gk := append(append([]byte(nil), prefix...), types.AppendValues(nil, k)...)
			runs = append(runs, run{appendTime(append([]byte(nil), gk...), lo), endOf(gk)})
		}
	}
	return r.eachStore(db, func(store *state.Store, partition int32) (bool, error) {
		for _, rn := range runs {
			if more, err := r.scanAggregate(store, partition, rn.start, rn.end, fn); err != nil || !more {
				return false, err
			}
		}
		return true, nil
	})
}
