package state

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
