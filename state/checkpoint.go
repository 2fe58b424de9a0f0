package state

import (
	"encoding/binary"
	"errors"
	"maps"
	"slices"
)

// Checkpoint encoding (under the checkpoint key):
//
//	version=1 | varint(ChangelogOffset) | uvarint(n) | n × (uvarint(len) | "topic/partition" | varint(offset))
//
// Entries are sorted so equal checkpoints encode to equal bytes.
const checkpointVersion = 1

var errBadCheckpoint = errors.New("malformed checkpoint")

func encodeCheckpoint(cp Checkpoint) []byte {
	b := []byte{checkpointVersion}
	b = binary.AppendVarint(b, cp.ChangelogOffset)
	b = binary.AppendUvarint(b, uint64(len(cp.SourceOffsets)))
	for _, k := range slices.Sorted(maps.Keys(cp.SourceOffsets)) {
		b = binary.AppendUvarint(b, uint64(len(k)))
		b = append(b, k...)
		b = binary.AppendVarint(b, cp.SourceOffsets[k])
	}
	return b
}

func decodeCheckpoint(b []byte) (Checkpoint, error) {
	if len(b) == 0 || b[0] != checkpointVersion {
		return Checkpoint{}, errBadCheckpoint
	}
	b = b[1:]
	var cp Checkpoint
	off, w := binary.Varint(b)
	if w <= 0 {
		return Checkpoint{}, errBadCheckpoint
	}
	cp.ChangelogOffset = off
	b = b[w:]
	n, w := binary.Uvarint(b)
	if w <= 0 || n > uint64(len(b)) {
		return Checkpoint{}, errBadCheckpoint
	}
	b = b[w:]
	if n > 0 {
		cp.SourceOffsets = make(map[string]int64, n)
	}
	for range n {
		l, w := binary.Uvarint(b)
		if w <= 0 || l > uint64(len(b)-w) {
			return Checkpoint{}, errBadCheckpoint
		}
		k := string(b[w : w+int(l)])
		b = b[w+int(l):]
		v, w2 := binary.Varint(b)
		if w2 <= 0 {
			return Checkpoint{}, errBadCheckpoint
		}
		b = b[w2:]
		cp.SourceOffsets[k] = v
	}
	return cp, nil
}
