package format

import (
	"encoding/binary"
	"fmt"
)

// Windowed keys are written the way Kafka Streams' windowed serdes write
// them, so that ksqlDB and Kafka Streams consumers can read our output and
// we can read theirs.

// EncodeTimeWindowedKey returns key ‖ start as an 8-byte big-endian int64
// (Kafka Streams' TimeWindowedSerializer; the end is implied by the size).
func EncodeTimeWindowedKey(key []byte, start int64) []byte {
	b := make([]byte, len(key), len(key)+8)
	copy(b, key)
	return AppendTimeWindow(b, start)
}

// AppendTimeWindow appends to a key's bytes the window start that makes
// it a time-windowed key (EncodeTimeWindowedKey without the copy).
func AppendTimeWindow(key []byte, start int64) []byte {
	return binary.BigEndian.AppendUint64(key, uint64(start))
}

// DecodeTimeWindowedKey splits a time-windowed key. The returned key
// aliases b.
func DecodeTimeWindowedKey(b []byte) (key []byte, start int64, err error) {
	if len(b) < 8 {
		return nil, 0, fmt.Errorf("%w: time-windowed key has %d bytes, need at least 8", ErrMalformed, len(b))
	}
	n := len(b) - 8
	return b[:n], int64(binary.BigEndian.Uint64(b[n:])), nil
}

// EncodeSessionWindowedKey returns key ‖ end ‖ start, each an 8-byte
// big-endian int64: the order of Kafka Streams' SessionKeySchema, end
// first.
func EncodeSessionWindowedKey(key []byte, start, end int64) []byte {
	b := make([]byte, len(key), len(key)+16)
	copy(b, key)
	return AppendSessionWindow(b, start, end)
}

// AppendSessionWindow appends to a key's bytes the session bounds that
// make it a session-windowed key (EncodeSessionWindowedKey without the
// copy).
func AppendSessionWindow(key []byte, start, end int64) []byte {
	key = binary.BigEndian.AppendUint64(key, uint64(end))
	return binary.BigEndian.AppendUint64(key, uint64(start))
}

// DecodeSessionWindowedKey splits a session-windowed key. The returned key
// aliases b.
func DecodeSessionWindowedKey(b []byte) (key []byte, start, end int64, err error) {
	if len(b) < 16 {
		return nil, 0, 0, fmt.Errorf("%w: session-windowed key has %d bytes, need at least 16", ErrMalformed, len(b))
	}
	n := len(b) - 16
	end = int64(binary.BigEndian.Uint64(b[n:]))
	start = int64(binary.BigEndian.Uint64(b[n+8:]))
	return b[:n], start, end, nil
}
