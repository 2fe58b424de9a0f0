package state

import (
	"encoding/binary"
	"fmt"
)

// Badger key layout. Every store partition owns two disjoint key spaces:
//
//	data:       'd' | uvarint(len(name)) | name | partition (4 bytes BE) | user key
//	checkpoint: 'c' | uvarint(len(name)) | name | partition (4 bytes BE)
//
// The name is length-prefixed so that no store's prefix is a prefix of
// another store's ("ab"/0 vs "a"/…); that keeps prefix scans and DropPrefix
// from ever touching a neighbour. The partition is big-endian so partitions of
// one store sort numerically. All encoding and decoding lives in this file.
const (
	tagData       byte = 'd'
	tagCheckpoint byte = 'c'
)

// storePrefix returns tag | uvarint(len(name)) | name | partition.
func storePrefix(tag byte, name string, partition int32) []byte {
	b := make([]byte, 0, 1+binary.MaxVarintLen64+len(name)+4)
	b = append(b, tag)
	b = binary.AppendUvarint(b, uint64(len(name)))
	b = append(b, name...)
	b = binary.BigEndian.AppendUint32(b, uint32(partition))
	return b
}

// decodeStorePrefix parses the tag, name and partition at the start of a
// Badger key and returns the length of that prefix.
func decodeStorePrefix(k []byte) (tag byte, name string, partition int32, n int, err error) {
	if len(k) < 1 {
		return 0, "", 0, 0, fmt.Errorf("decode key %x: empty", k)
	}
	tag = k[0]
	l, w := binary.Uvarint(k[1:])
	if w <= 0 {
		return 0, "", 0, 0, fmt.Errorf("decode key %x: bad name length", k)
	}
	start := 1 + w
	if uint64(len(k)-start) < l+4 {
		return 0, "", 0, 0, fmt.Errorf("decode key %x: truncated", k)
	}
	end := start + int(l)
	name = string(k[start:end])
	partition = int32(binary.BigEndian.Uint32(k[end : end+4]))
	return tag, name, partition, end + 4, nil
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
