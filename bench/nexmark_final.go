package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// agg-emit-final (issue 35) is agg with EMIT FINAL: one record per
// (auction, 10 s window), written once the window has closed, as Flink's
// window TVF writes its final windows (F-agg). F2 compares the two, so
// that both sides write the same kind and number of records, where S-agg
// writes an update per bid.
//
// The window closes, with ksqlDB's default grace for EMIT FINAL (none),
// once the stream time of its task reaches its end. GROUP BY K groups by
// the bids' key, so a task is a partition of the bids topic and its
// stream time the greatest timestamp read there: the windows written by
// the end of the input are those ending at or before their partition's
// last bid (sluiceClosed). Flink's close by its watermark (flinkClosed).
// finalWindows computes either side's windows, with each one's COUNT and
// SUM, from the topic, and each side's output is checked against them
// window by window before its time counts.
const aggEmitFinal workload = "agg-emit-final"

// windowRow is one final window's result.
type windowRow struct {
	n, total int64
}

// windowKey is an auction key and a window start.
type windowKey struct {
	key   string
	start int64
}

// windowClosed says whether the window ending at end (exclusive) of a
// key in partition p has closed by the end of the input, given each
// partition's greatest timestamp.
type windowClosed func(p int32, end int64, maxTS map[int32]int64) bool

// sluiceClosed is S-agg-final's rule: stream time (its partition's last
// bid) has reached the window's end.
func sluiceClosed(p int32, end int64, maxTS map[int32]int64) bool { return end <= maxTS[p] }

// flinkClosed is F-agg's rule: the watermark, the least over the
// partitions of the greatest timestamp less the delay, has reached the
// window's last millisecond.
func flinkClosed(_ int32, end int64, maxTS map[int32]int64) bool {
	return end-1 <= finalWatermark(maxTS, flinkDelay)
}

// finalWindows reads the bids of topic and returns the windows a side
// writes by the end of it, by that side's rule.
func finalWindows(ctx context.Context, conn []kgo.Opt, topic string, closed windowClosed) (map[windowKey]windowRow, error) {
	type partWindow struct {
		p int32
		windowKey
	}
	rows := map[partWindow]windowRow{}
	var bad error
	maxTS, err := topicRecords(ctx, conn, topic, func(r *kgo.Record) {
		var b struct {
			Price int64 `json:"price"`
		}
		if err := json.Unmarshal(r.Value, &b); err != nil {
			bad = fmt.Errorf("bid at %s/%d@%d: %w", topic, r.Partition, r.Offset, err)
			return
		}
		ts := r.Timestamp.UnixMilli()
		k := partWindow{r.Partition, windowKey{string(r.Key), ts - ts%flinkWindowMs}}
		w := rows[k]
		w.n++
		w.total += b.Price
		rows[k] = w
	})
	if err == nil {
		err = bad
	}
	if err != nil {
		return nil, err
	}
	out := map[windowKey]windowRow{}
	for k, w := range rows {
		if closed(k.p, k.start+flinkWindowMs, maxTS) {
			out[k.windowKey] = w
		}
	}
	return out, nil
}

// sluiceWindow reads an S-agg-final record: the key is the auction key
// and the window start (8 bytes big-endian, Kafka Streams' windowed key),
// the value {"N","TOTAL"}.
func sluiceWindow(r *kgo.Record) (windowKey, windowRow, error) {
	if len(r.Key) < 8 {
		return windowKey{}, windowRow{}, fmt.Errorf("record key %q holds no window start", r.Key)
	}
	k := windowKey{string(r.Key[:len(r.Key)-8]), int64(binary.BigEndian.Uint64(r.Key[len(r.Key)-8:]))}
	var v struct {
		N, Total *int64
	}
	if err := json.Unmarshal(r.Value, &v); err != nil || v.N == nil || v.Total == nil {
		return k, windowRow{}, fmt.Errorf("window %s@%d: value %q is not {\"N\",\"TOTAL\"} (%v)", k.key, k.start, r.Value, err)
	}
	return k, windowRow{*v.N, *v.Total}, nil
}

// flinkWindow reads an F-agg record: the key (raw) is the auction key,
// '@' and the window start as Flink casts a TIMESTAMP(3) to text (the
// job's local time zone is UTC), the value {"n","total"}.
func flinkWindow(r *kgo.Record) (windowKey, windowRow, error) {
	key, start, ok := strings.Cut(string(r.Key), "@")
	t, err := time.Parse(time.DateTime, start) // the fraction, when there, parses too
	if !ok || err != nil {
		return windowKey{}, windowRow{}, fmt.Errorf("record key %q is not key@window start (%v)", r.Key, err)
	}
	k := windowKey{key, t.UnixMilli()}
	var v struct {
		N, Total *int64
	}
	if err := json.Unmarshal(r.Value, &v); err != nil || v.N == nil || v.Total == nil {
		return k, windowRow{}, fmt.Errorf("window %s: value %q is not {\"n\",\"total\"} (%v)", r.Key, r.Value, err)
	}
	return k, windowRow{*v.N, *v.Total}, nil
}

// verifyFinalWindows checks a side's output against want, each record
// read by parse: every window once, with its results, none missing, none
// extra.
func verifyFinalWindows(want map[windowKey]windowRow, parse func(*kgo.Record) (windowKey, windowRow, error)) func([]*kgo.Record) error {
	return func(recs []*kgo.Record) error {
		left := maps.Clone(want)
		var extra []string
		for _, r := range recs {
			k, got, err := parse(r)
			if err != nil {
				return err
			}
			if w, ok := left[k]; !ok || w != got {
				extra = append(extra, fmt.Sprintf("%s@%d N=%d TOTAL=%d", k.key, k.start, got.n, got.total))
				continue
			}
			delete(left, k)
		}
		if len(extra) == 0 && len(left) == 0 {
			return nil
		}
		var missing []string
		for k, w := range left {
			missing = append(missing, k.key+"@"+strconv.FormatInt(k.start, 10)+fmt.Sprintf(" N=%d TOTAL=%d", w.n, w.total))
		}
		slices.Sort(extra)
		slices.Sort(missing)
		return fmt.Errorf("%d windows not expected (or with other results), first %q; %d expected windows missing, first %q",
			len(extra), extra[:min(len(extra), 5)], len(missing), missing[:min(len(missing), 5)])
	}
}
