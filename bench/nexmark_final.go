package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

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
// last bid, and finalWindows computes them, with each one's COUNT and SUM,
// from the topic.
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

// finalWindows reads the bids of topic and returns the windows S-agg-final
// writes by the end of it.
func finalWindows(ctx context.Context, conn []kgo.Opt, topic string) (map[windowKey]windowRow, error) {
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
		if k.start+flinkWindowMs <= maxTS[k.p] {
			out[k.windowKey] = w
		}
	}
	return out, nil
}

// verifyFinalWindows checks S-agg-final's output against want: each
// record's key is the auction key and the window start (8 bytes
// big-endian, Kafka Streams' windowed key), its value {"N","TOTAL"}; every
// window once, none missing, none extra.
func verifyFinalWindows(want map[windowKey]windowRow) func([]*kgo.Record) error {
	return func(recs []*kgo.Record) error {
		left := maps.Clone(want)
		var extra []string
		for _, r := range recs {
			if len(r.Key) < 8 {
				return fmt.Errorf("record key %q holds no window start", r.Key)
			}
			k := windowKey{string(r.Key[:len(r.Key)-8]), int64(binary.BigEndian.Uint64(r.Key[len(r.Key)-8:]))}
			var v struct {
				N, Total *int64
			}
			if err := json.Unmarshal(r.Value, &v); err != nil || v.N == nil || v.Total == nil {
				return fmt.Errorf("window %s@%d: value %q is not {\"N\",\"TOTAL\"} (%v)", k.key, k.start, r.Value, err)
			}
			w, ok := left[k]
			if !ok || w != (windowRow{*v.N, *v.Total}) {
				extra = append(extra, fmt.Sprintf("%s@%d N=%d TOTAL=%d", k.key, k.start, *v.N, *v.Total))
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
