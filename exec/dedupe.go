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

// upstreamSource names one partition of one input of the upstream task:
// a sub-topology reading two topics (a join feeding an aggregation) has
// records at the same partition and offset in each, and they must not be
// taken for one another.
type upstreamSource struct {
	input     int32 // the input's number among the upstream task's inputs
	partition int32
}

// The header is varint(partition) varint(offset) [varint(seq)
// [varint(input)]]: seq, the record's number among those one input record
// wrote, and input, the upstream input it was read from, are left out
// when 0 (and seq is written when input is not).
func encodeUpstream(partition int32, offset, seq int64, input int32) []byte {
	b := binary.AppendVarint(nil, int64(partition))
	b = binary.AppendVarint(b, offset)
	if seq > 0 || input > 0 {
		b = binary.AppendVarint(b, seq)
	}
	if input > 0 {
		b = binary.AppendVarint(b, int64(input))
	}
	return b
}

func decodeUpstream(b []byte) (src upstreamSource, offset, seq int64, ok bool) {
	p, n := binary.Varint(b)
	if n <= 0 {
		return src, 0, 0, false
	}
	o, m := binary.Varint(b[n:])
	if m <= 0 {
		return src, 0, 0, false
	}
	src.partition = int32(p)
	rest := b[n+m:]
	if len(rest) == 0 {
		return src, o, 0, true
	}
	seq, k := binary.Varint(rest)
	if k <= 0 {
		return src, 0, 0, false
	}
	if rest = rest[k:]; len(rest) > 0 {
		in, j := binary.Varint(rest)
		if j <= 0 {
			return src, 0, 0, false
		}
		src.input = int32(in)
	}
	return src, o, seq, true
}

// upstreamKeyPrefix marks checkpoint entries of upstream positions: the
// next position (upstream offset << 8 | output sequence) not yet applied.
// An entry is prefix + partition for the upstream task's first input, and
// prefix + "i" + input + "/" + partition for the others.
const upstreamKeyPrefix = "#upos/"

func upstreamKey(prefix string, src upstreamSource) string {
	if src.input == 0 {
		return prefix + strconv.Itoa(int(src.partition))
	}
	return prefix + "i" + strconv.Itoa(int(src.input)) + "/" + strconv.Itoa(int(src.partition))
}

func parseUpstreamKey(key, prefix string) (upstreamSource, bool) {
	rest, ok := strings.CutPrefix(key, prefix)
	if !ok {
		return upstreamSource{}, false
	}
	var src upstreamSource
	if after, ok := strings.CutPrefix(rest, "i"); ok {
		in, p, ok := strings.Cut(after, "/")
		if !ok {
			return upstreamSource{}, false
		}
		n, err := strconv.Atoi(in)
		if err != nil {
			return upstreamSource{}, false
		}
		src.input, rest = int32(n), p
	}
	p, err := strconv.Atoi(rest)
	src.partition = int32(p)
	return src, err == nil
}

// freshUpstream reports whether a repartition record's upstream record
// has not been applied yet, and records it as applied. Records without
// the header (written by something else) always count.
func (in *taskInput) freshUpstream(rec *Record) bool {
	for _, h := range rec.Headers {
		if h.Key != upstreamHeader {
			continue
		}
		src, off, seq, ok := decodeUpstream(h.Value)
		if !ok {
			return true
		}
		if in.upstream == nil {
			in.upstream = map[upstreamSource]int64{}
		}
		// One upstream record may write several records (a table change
		// writes an undo and an add): each has its sequence number.
		pos := off<<8 | min(seq, 255)
		if next, seen := in.upstream[src]; seen && pos < next {
			return false
		}
		in.upstream[src] = pos + 1
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
