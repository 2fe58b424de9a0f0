package exec

import "unsafe"

// outArena holds the bytes of the records one task produces. The client
// keeps a produced record's key and value until the broker has them, and
// a push query's subscriber may keep them longer, so they cannot be
// reused; but they need not be allocated one by one either. The arena
// carves them out of chunks of arenaChunk bytes that it never writes
// again once handed out: a chunk is garbage when the last record in it
// is. A task's hundreds of records per chunk then cost one allocation,
// without pointers for the collector to scan, instead of one each.
//
// An encoder appends to the empty slice begin returns; end takes the
// result back and makes it the record's bytes. When the encoding outgrew
// the room begin left, append moved it to a slice of its own, which end
// returns unchanged: the arena only ever saves work, it never limits a
// record's size. An arena serves one task, so one goroutine at a time.
type outArena struct {
	chunk []byte
}

// arenaChunk is the size of an arena's chunks: some 300 Nexmark bids.
// Larger chunks save little more and hold more memory while one record
// of them waits for the broker.
const arenaChunk = 64 << 10

// begin returns an empty slice with room for at least hint bytes, for
// an encoder to append one record's bytes to.
func (a *outArena) begin(hint int) []byte {
	hint = max(hint, 1)
	if cap(a.chunk)-len(a.chunk) < hint {
		a.chunk = make([]byte, 0, max(arenaChunk, hint))
	}
	n := len(a.chunk)
	return a.chunk[n:n]
}

// end returns b, which an encoder appended to begin's slice, capped at
// its length so that no later append can write past it into the next
// record; if b still lies in the chunk, the chunk's free part now starts
// after it. A nil b (nothing to write, a null) stays nil.
func (a *outArena) end(b []byte) []byte {
	if b == nil {
		return nil
	}
	b = b[:len(b):len(b)]
	n := len(a.chunk)
	if len(b) > 0 && n < cap(a.chunk) && unsafe.SliceData(b) == unsafe.SliceData(a.chunk[n:n+1]) {
		a.chunk = a.chunk[:n+len(b)]
	}
	return b
}
