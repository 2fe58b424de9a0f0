package state

import (
	"bytes"
	"fmt"

	"github.com/dgraph-io/badger/v4"
)

// WriteBack is a cache an operator keeps above its store: values it holds
// decoded, folds records into, and writes to the store only when someone
// is about to take the store's writes. Every record then costs a lookup
// in Go values instead of a read, decode, encode and write of the store,
// and a key written many times in a commit interval is encoded once
// (Kafka Streams' record cache plays the same part).
//
// The store calls WriteBack before it hands out its pending writes
// (Pending, and so ProduceChangelog and Flush) and before a range, so the
// changelog, a commit and a scan all see what the cache holds; Discard
// when it drops its own uncommitted writes (an aborted transaction, a
// wipe), so the cache cannot bring them back.
type WriteBack interface {
	// WriteBack puts every entry changed since the last call into the
	// store (Put, Delete).
	WriteBack()
	// Discard drops the entries changed since the last WriteBack; it may
	// drop the others too.
	Discard()
}

// SetWriteBack makes w the store's cache (nil: none). One cache per
// store partition: the operator that owns the store's keys.
func (s *Store) SetWriteBack(w WriteBack) { s.writeBack = w }

// DropWriteBack unsets w as the store's cache, unless another took its
// place already (a task reopened before the old one closed).
func (s *Store) DropWriteBack(w WriteBack) {
	if s.writeBack == w {
		s.writeBack = nil
	}
}

// flushWriteBack writes the cache's changed entries into the overlay.
func (s *Store) flushWriteBack() {
	if s.writeBack != nil {
		s.writeBack.WriteBack()
	}
}

// LastKey returns the greatest key the store may hold, for a cache that
// wants to know which keys the store cannot have: every live key is at
// most last (a deleted key may stand in for a lower live one). ok is
// false when the store is empty; known is false when it cannot tell
// cheaply (a cold restore's data is still being written to Badger).
func (s *Store) LastKey() (last []byte, ok, known bool, err error) {
	if err := s.checkOpen(); err != nil {
		return nil, false, false, s.errorf("last key", err)
	}
	if err := s.settle(); err != nil {
		return nil, false, false, s.errorf("last key", err)
	}
	if s.restored.Load() != nil {
		return nil, false, false, nil
	}
	if k, hit := s.overlay.maxKey(); hit {
		last, ok = []byte(k), true
	}
	err = s.db.bdb.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Reverse: true, Prefix: s.data})
		defer it.Close()
		end := prefixEnd(s.data)
		if end == nil {
			return fmt.Errorf("store prefix %x has no end", s.data)
		}
		it.Seek(end)
		if it.Valid() {
			if k := it.Item().KeyCopy(nil)[len(s.data):]; !ok || bytes.Compare(k, last) > 0 {
				last, ok = k, true
			}
		}
		return nil
	})
	if err != nil {
		return nil, false, false, s.errorf("last key", err)
	}
	return last, ok, true, nil
}
