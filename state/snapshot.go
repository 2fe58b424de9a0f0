package state

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"hash/maphash"
	"math/bits"
	"slices"
)

// snapshot is what a cold restore reads into memory: the latest value of
// each changelog key. It is a hash table of its own rather than a Go map
// because a map of 1M string keys and []byte values costs the restore loop
// more than consuming does: three cache misses per insert, plus the GC
// marking two pointers per entry at every cycle while the map grows (~0.25×
// a raw consume, measured). Here the slots are one uint64 each, the table
// holds no pointers (the GC never scans it), is sized once from the number of
// offsets to read (an upper bound on the keys: one record per offset), and
// keys and values are appended to 1 MiB slabs.
//
// A slot is 0 when empty, else
//
//	bit 63: deleted | bits 32–62: fingerprint (hash >> 33) | bits 0–31: ref + 1
//
// where ref = slab << slabBits | offset of the entry, and an entry is
// uvarint(len(key)) | key | uvarint(len(value)) | value. A put of a key
// already present appends a new entry and repoints the slot; a delete keeps
// the slot (so probes for the key still find it) with the deleted bit set.
//
// Only the restore loop writes a snapshot; afterwards it is read-only, so
// readers and the background build share it without locks.
type snapshot struct {
	seed  maphash.Seed
	slots []uint64
	mask  uint64
	used  int // slots taken, deleted ones included
	live  int // keys present
	slabs [][]byte
	arena int64 // bytes allocated for slabs
}

const (
	slotDeleted = 1 << 63
	slabBits    = 20
	slabSize    = 1 << slabBits
	// maxSlabs keeps the largest ref + 1 within 32 bits.
	maxSlabs = 1<<(32-slabBits) - 1
	// minSlots is the smallest table; a table is at most 3/4 full.
	minSlots = 1 << 10
)

// newSnapshot sizes the table for up to records keys, but to no more slots
// than maxSlots.
func newSnapshot(records int64, maxSlots int) *snapshot {
	want := max(records*4/3+1, minSlots)
	n := uint64(1) << bits.Len64(uint64(want-1)) // next power of two
	for n > minSlots && n > uint64(maxSlots) {
		n >>= 1
	}
	return &snapshot{seed: maphash.MakeSeed(), slots: make([]uint64, n), mask: n - 1}
}

// room reports whether n more keys fit in the table and the arena.
func (s *snapshot) room(n int) bool {
	return (s.used+n)*4 <= len(s.slots)*3 && len(s.slabs) < maxSlabs-1
}

// memBytes is the memory the snapshot holds.
func (s *snapshot) memBytes() int64 { return int64(len(s.slots))*8 + s.arena }

// find returns the slot of key, or the empty slot where it would go. The
// table is never full (room), so the probe ends.
func (s *snapshot) find(key []byte) (i uint64, fp uint64, found bool) {
	h := maphash.Bytes(s.seed, key)
	fp = h >> 33
	for i = h & s.mask; ; i = (i + 1) & s.mask {
		sl := s.slots[i]
		if sl == 0 {
			return i, fp, false
		}
		if (sl>>32)&0x7fffffff == fp && bytes.Equal(s.keyAt(uint32(sl)-1), key) {
			return i, fp, true
		}
	}
}

func (s *snapshot) put(key, value []byte) {
	i, fp, found := s.find(key)
	if !found {
		s.used++
	}
	if !found || s.slots[i]&slotDeleted != 0 {
		s.live++
	}
	s.slots[i] = fp<<32 | uint64(s.append(key, value)+1)
}

func (s *snapshot) delete(key []byte) {
	// A key never seen needs no tombstone: nothing lies below a snapshot.
	if i, _, found := s.find(key); found && s.slots[i]&slotDeleted == 0 {
		s.slots[i] |= slotDeleted
		s.live--
	}
}

// get returns key's value, shared with the snapshot (capacity-limited, so
// an append by the caller copies).
func (s *snapshot) get(key []byte) ([]byte, bool) {
	i, _, found := s.find(key)
	if !found || s.slots[i]&slotDeleted != 0 {
		return nil, false
	}
	_, v := s.entry(uint32(s.slots[i]) - 1)
	return v, true
}

// append stores an entry and returns its ref.
func (s *snapshot) append(key, value []byte) uint32 {
	need := uvarintLen(len(key)) + len(key) + uvarintLen(len(value)) + len(value)
	last := len(s.slabs) - 1
	if last < 0 || len(s.slabs[last])+need > cap(s.slabs[last]) {
		// An entry larger than a slab gets a slab of its own, starting
		// at offset 0 like every entry's offset fits slabBits.
		size := max(slabSize, need)
		s.slabs = append(s.slabs, make([]byte, 0, size))
		s.arena += int64(size)
		last++
	}
	b := s.slabs[last]
	off := len(b)
	b = binary.AppendUvarint(b, uint64(len(key)))
	b = append(b, key...)
	b = binary.AppendUvarint(b, uint64(len(value)))
	b = append(b, value...)
	s.slabs[last] = b
	return uint32(last)<<slabBits | uint32(off)
}

func (s *snapshot) keyAt(ref uint32) []byte {
	k, _ := s.entry(ref)
	return k
}

// entry decodes the entry at ref. Both slices are capacity-limited views
// of the slab; the value is never nil (an empty value is not a delete).
func (s *snapshot) entry(ref uint32) (key, value []byte) {
	b := s.slabs[ref>>slabBits][ref&(slabSize-1):]
	kl, n := binary.Uvarint(b)
	b = b[n:]
	key, b = b[:kl:kl], b[kl:]
	vl, n := binary.Uvarint(b)
	b = b[n:]
	return key, b[:vl:vl]
}

// sorted returns the refs of the live keys in key order.
//
// Comparing keys in the arena costs a cache miss or two per comparison, ~3 s
// for 1M keys; so each key's first 16 bytes ride along as two big-endian
// integers, and only keys whose first 16 bytes tie are compared in full
// (0.3 s for the same keys).
func (s *snapshot) sorted() []uint32 {
	type sortKey struct {
		hi, lo uint64
		ref    uint32
	}
	sk := make([]sortKey, 0, s.live)
	for _, sl := range s.slots {
		if sl != 0 && sl&slotDeleted == 0 {
			ref := uint32(sl) - 1
			var pre [16]byte
			copy(pre[:], s.keyAt(ref))
			sk = append(sk, sortKey{binary.BigEndian.Uint64(pre[:8]), binary.BigEndian.Uint64(pre[8:]), ref})
		}
	}
	slices.SortFunc(sk, func(a, b sortKey) int {
		if c := cmp.Compare(a.hi, b.hi); c != 0 {
			return c
		}
		if c := cmp.Compare(a.lo, b.lo); c != 0 {
			return c
		}
		// Equal zero-padded prefixes: "a" and "a\x00" tie here.
		return bytes.Compare(s.keyAt(a.ref), s.keyAt(b.ref))
	})
	refs := make([]uint32, len(sk))
	for i, k := range sk {
		refs[i] = k.ref
	}
	return refs
}

// search returns the index in refs (sorted) of the first key ≥ key.
func (s *snapshot) search(refs []uint32, key []byte) int {
	i, _ := slices.BinarySearchFunc(refs, key, func(ref uint32, k []byte) int { return bytes.Compare(s.keyAt(ref), k) })
	return i
}

func uvarintLen(n int) int {
	l := 1
	for n >= 0x80 {
		n >>= 7
		l++
	}
	return l
}
