package logical

import (
	"fmt"
	"strings"
)

// StoreScan reads every row of a table from the state store that keeps
// it for pull queries.
type StoreScan struct {
	Table string
}

var _ Node = (*StoreScan)(nil)

func (s *StoreScan) Describe() string        { return fmt.Sprintf("store scan %s (every row)", s.Table) }
func (s *StoreScan) Inputs() []Node          { return nil }
func (s *StoreScan) WithInputs(...Node) Node { return s }

// StoreLookup reads only the rows of the given keys from a table's state
// store (the key-lookup rule): WHERE pins every key column.
type StoreLookup struct {
	Table string
	// Keys are the keys read, each printed as its column values.
	Keys []string
}

var _ Node = (*StoreLookup)(nil)

func (s *StoreLookup) Describe() string {
	return fmt.Sprintf("store lookup %s (keys %s)", s.Table, strings.Join(s.Keys, ", "))
}
func (s *StoreLookup) Inputs() []Node          { return nil }
func (s *StoreLookup) WithInputs(...Node) Node { return s }

// StoreRange reads only the rows of a key range from a table's state
// store, by ordered key ranges (the key-range rule): WHERE bounds the
// key with <, <=, >, >= or BETWEEN.
type StoreRange struct {
	Table string
	// Range is the range read, as exec.KeyRange prints it.
	Range string
}

var _ Node = (*StoreRange)(nil)

func (s *StoreRange) Describe() string        { return fmt.Sprintf("store range %s (%s)", s.Table, s.Range) }
func (s *StoreRange) Inputs() []Node          { return nil }
func (s *StoreRange) WithInputs(...Node) Node { return s }
