package state

import (
	"errors"
	"fmt"
)

// ErrDiskFull is returned by Commit when the disk holding the state has
// less free space than the DB keeps in reserve. Badger writes its
// memtables and value log through memory-mapped sparse files, and a write
// to such a file on a full disk kills the whole process (SIGBUS) instead
// of returning an error; checking free space before every commit turns
// that into an error that fails one query, visibly, while the process
// and its stateless queries keep running.
var ErrDiskFull = errors.New("disk full")

// DefaultMinFreeBytes is the free space a DB keeps in reserve when
// Options.MinFreeBytes is zero: room for Badger to flush its memtables
// (3 × 16 MB) and compact.
const DefaultMinFreeBytes = 128 << 20

// SetMinFreeBytes changes the reserve; n < 0 turns the check off.
func (db *DB) SetMinFreeBytes(n int64) { db.minFree.Store(n) }

// checkSpace fails when writing need bytes would eat into the reserve.
// An in-memory DB, or a platform where free space cannot be read, is
// never full.
func (db *DB) checkSpace(need int64) error {
	reserve := db.minFree.Load()
	if db.dir == "" || reserve < 0 {
		return nil
	}
	free, ok := freeBytes(db.dir)
	if !ok {
		return nil
	}
	if reserve > free || need > free-reserve { // not free < reserve+need: that can overflow
		return fmt.Errorf("%w: %d bytes free under %s; %d to write and %d kept in reserve", ErrDiskFull, free, db.dir, need, reserve)
	}
	return nil
}
