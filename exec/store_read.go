package exec

import (
	"fmt"
	"strings"
)

// StoreRead says a sub-topology's chain runs over the rows of a table's
// state store instead of the records of its source topic: a pull query
// on a table, which the engine answers from the store of the query that
// keeps the table, as of that query's last commit. The planner decides
// it (a store scan, or by its key-lookup rule a lookup of keys).
type StoreRead struct {
	// Table is the table read.
	Table string
	// Store is the state store keeping it (in the topology of the query
	// that keeps the table), "" when the planner was not told which.
	Store string
	// Keys are the keys looked up, each the values of the key columns in
	// order; nil: every row is scanned.
	Keys [][]any
	// Range, when set (and Keys nil), is the key range read: the store
	// is read by ordered key ranges, not scanned.
	Range *KeyRange
	// Window, when set, bounds a windowed table's WINDOWSTART and
	// WINDOWEND: the windows outside are not read where the store's
	// layout orders them (see TableReader.ScanWindows).
	Window *WindowBounds
}

// Describe is the read as EXPLAIN's physical plan shows it.
func (r *StoreRead) Describe() string {
	where := "from the state store keeping it, as of its last commit"
	if r.Store != "" {
		where = "from state store " + r.Store + ", as of its last commit"
	}
	if r.Window != nil {
		where = r.Window.String() + ", " + where
	}
	if r.Keys == nil && r.Range != nil {
		return fmt.Sprintf("store range %s (%s, %s)", r.Table, r.Range, where)
	}
	if r.Keys == nil {
		return fmt.Sprintf("store scan %s (every row, %s)", r.Table, where)
	}
	return fmt.Sprintf("store lookup %s (keys %s, %s)", r.Table, KeyTexts(r.Keys), where)
}

// KeyTexts prints keys as EXPLAIN shows them: each key its column values
// in brackets, separated by commas.
func KeyTexts(keys [][]any) string {
	texts := make([]string, len(keys))
	for i, k := range keys {
		texts[i] = fmt.Sprint(k)
	}
	return strings.Join(texts, ", ")
}
