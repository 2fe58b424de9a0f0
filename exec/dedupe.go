package exec

import (
	"encoding/binary"
	"strconv"
	"strings"
)

// The repartition de-duplication protocol, in one place.
//
// A record written to a repartition topic carries, in the header
// upstreamHeader, where it came from: the partition and offset of the
// input record that wrote it, and its number among the records that one
// input record wrote (TaskContext.outSeq; a table change writes an undo
// and an add). The task reading the repartition topic keeps, per
// upstream partition, the next upstream position it has not applied
// (taskInput.upstream) and skips a record below it: a replay of the
// upstream sub-topology after a crash under at-least-once writes records
// the downstream task has already applied. The positions are part of the
// downstream task's state checkpoint (checkpointOffsets, under
// upstreamKeyPrefix), committed with the state they describe, and read
// back when the task opens (Task.Open), so the check survives restarts.

// upstreamHeader names the header in which repartition records carry the
// partition and offset of the input record they came from.
const upstreamHeader = "sluice.up"

// The header is varint(partition) varint(offset) [varint(seq)]: seq, the
// record's number among those one input record wrote, is left out when 0.
func encodeUpstream(partition int32, offset, seq int64) []byte {
	b := binary.AppendVarint(nil, int64(partition))
	b = binary.AppendVarint(b, offset)
	if seq > 0 {
		b = binary.AppendVarint(b, seq)
	}
	return b
}

func decodeUpstream(b []byte) (partition int32, offset, seq int64, ok bool) {
	p, n := binary.Varint(b)
	if n <= 0 {
		return 0, 0, 0, false
	}
	o, m := binary.Varint(b[n:])
	if m <= 0 {
		return 0, 0, 0, false
	}
	if rest := b[n+m:]; len(rest) > 0 {
		if seq, k := binary.Varint(rest); k > 0 {
			return int32(p), o, seq, true
		}
		return 0, 0, 0, false
	}
	return int32(p), o, 0, true
}

// upstreamKeyPrefix marks checkpoint entries of upstream positions: the
// next position (upstream offset << 8 | output sequence) not yet applied.
const upstreamKeyPrefix = "#upos/"

func upstreamPartition(key, prefix string) (int32, bool) {
	rest, ok := strings.CutPrefix(key, prefix)
	if !ok {
		return 0, false
	}
	p, err := strconv.Atoi(rest)
	return int32(p), err == nil
}

// freshUpstream reports whether a repartition record's upstream record
// has not been applied yet, and records it as applied. Records without
// the header (written by something else) always count.
func (in *taskInput) freshUpstream(rec *Record) bool {
	for _, h := range rec.Headers {
		if h.Key != upstreamHeader {
			continue
		}
		p, off, seq, ok := decodeUpstream(h.Value)
		if !ok {
			return true
		}
		if in.upstream == nil {
			in.upstream = map[int32]int64{}
		}
		// One upstream record may write several records (a table change
		// writes an undo and an add): each has its sequence number.
		pos := off<<8 | min(seq, 255)
		if next, seen := in.upstream[p]; seen && pos < next {
			return false
		}
		in.upstream[p] = pos + 1
		return true
	}
	return true
}

// dedupes reports whether records of topic carry upstream positions to
// deduplicate by.
func (t *Task) dedupes(topic string) bool {
	in := t.byTopic[topic]
	return in != nil && in.spec.Dedupe
}
