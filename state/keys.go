package state

import (
	"encoding/binary"
	"fmt"
)

// Badger key layout. A DB gives every store name a number the first time
// it sees it, and keeps the pair in its catalog; every store partition
// then owns two disjoint key spaces:
//
//	catalog:    'n' | name                                      → uvarint(number)
//	data:       'k' | uvarint(number) | partition (4 bytes BE) | user key
//	checkpoint: 'o' | uvarint(number) | partition (4 bytes BE)
//
// Every key Badger holds carries its store partition's prefix, and a
// store's name (the query's ID and the operator's, 30–60 bytes) was longer
// than most user keys and values: Badger wrote it to its log, memtable and
// tables, compared it in every skiplist step and compaction, and kept it
// in memory, once per entry. The number is one byte for a DB's first 127
// names. The uvarint is self-delimiting and the partition fixed-size, so no
// store partition's prefix is a prefix of another's; that keeps prefix
// scans and DropPrefix from ever touching a neighbour. The partition is
// big-endian so partitions of one store sort numerically. All encoding and
// decoding lives in this file.
const (
	tagCatalog    byte = 'n'
	tagData       byte = 'k'
	tagCheckpoint byte = 'o'
)

// legacyTags are the data and checkpoint tags of the layout before store
// numbers, whose keys began with the store's name ('d' | uvarint(len) |
// name | partition). Open drops what a data directory still holds under
// them: each store is restored from its changelog, as after a lost disk.
var legacyTags = []byte{'d', 'c'}

// storePrefix returns tag | uvarint(number) | partition.
func storePrefix(tag byte, number uint32, partition int32) []byte {
	b := make([]byte, 0, 1+binary.MaxVarintLen32+4)
	b = append(b, tag)
	b = binary.AppendUvarint(b, uint64(number))
	b = binary.BigEndian.AppendUint32(b, uint32(partition))
	return b
}

// decodeStorePrefix parses the tag, store number and partition at the
// start of a Badger key and returns the length of that prefix.
func decodeStorePrefix(k []byte) (tag byte, number uint32, partition int32, n int, err error) {
	if len(k) < 1 {
		return 0, 0, 0, 0, fmt.Errorf("decode key %x: empty", k)
	}
	tag = k[0]
	num, w := binary.Uvarint(k[1:])
	if w <= 0 || num > 1<<32-1 {
		return 0, 0, 0, 0, fmt.Errorf("decode key %x: bad store number", k)
	}
	end := 1 + w
	if len(k)-end < 4 {
		return 0, 0, 0, 0, fmt.Errorf("decode key %x: truncated", k)
	}
	partition = int32(binary.BigEndian.Uint32(k[end : end+4]))
	return tag, uint32(num), partition, end + 4, nil
}

// catalogKey is the catalog's key of a store name.
func catalogKey(name string) []byte {
	return append([]byte{tagCatalog}, name...)
}

// encodeNumber and decodeNumber are a catalog entry's value.
func encodeNumber(number uint32) []byte { return binary.AppendUvarint(nil, uint64(number)) }

func decodeNumber(v []byte) (uint32, error) {
	num, w := binary.Uvarint(v)
	if w != len(v) || w <= 0 || num == 0 || num > 1<<32-1 {
		return 0, fmt.Errorf("bad store number %x", v)
	}
	return uint32(num), nil
}

// prefixEnd returns the smallest key greater than every key starting with p,
// or nil if there is none (p is all 0xff), meaning "unbounded".
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// concat returns a new slice holding a followed by b.
func concat(a, b []byte) []byte {
	out := make([]byte, 0, len(a)+len(b))
	return append(append(out, a...), b...)
}
