package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The stateful workloads of issue 22, beyond agg. Their names are stable:
// other contenders (Flink SQL, bench/flink.go) add versions of them.
//
//	agg-late  agg (with a 2 s grace) over a copy of the bids in which a
//	          fraction (--late, 15%) is late by up to 1.9 s of event time:
//	          within the grace, so every bid counts and the output is again
//	          one update per bid;
//	session   a COUNT(*) per bidder over session windows (2 s gap, 2 s
//	          grace) over a copy of the bids keyed by bidder, so neither
//	          contender repartitions; output: one update per bid plus a
//	          tombstone for each session a bid extends (its predecessor);
//	join      a stream–table LEFT JOIN: each bid with its auction's seller
//	          and category from a table over the auctions topic (one record
//	          per auction, keyed by auction id like the bids, each auction
//	          older than its bids); one output per bid.
const (
	aggLate workload = "agg-late"
	session workload = "session"
	join    workload = "join"
)

// Window parameters the Sluice SQL and the Kafka Streams topologies share.
const (
	aggGraceMs   = 2_000
	sessionGapMs = 2_000
	// lateMaxMs bounds how far a late bid's event time is moved back: less
	// than the grace, so that its window is still open (stream time is at
	// most the newest bid's time, and the late bid's window ends after its
	// own time).
	lateMaxMs = aggGraceMs - 100
)

// extraInputs writes the copies of the bids the stateful workloads read,
// bid by bid as generate makes them. A nil *extraInputs writes nothing.
type extraInputs struct {
	late        float64 // fraction of agg-late's bids made late
	lateTopic   string  // agg-late's bids; "" when not written
	bidderTopic string  // session's bids, keyed by bidder; "" when not written
	rng         *rand.Rand

	lateBids int64
	// sessions: per bidder the end of its current session; sessionOut
	// counts the session workload's expected output records.
	sessions              map[int64]int64
	nSessions, sessionOut int64
	bidders               map[int64]struct{}
}

func newExtraInputs(tag string, seed uint64, late float64, wantLate, wantSession bool) *extraInputs {
	if !wantLate && !wantSession {
		return nil
	}
	x := &extraInputs{late: late, rng: rand.New(rand.NewPCG(seed^0x5bd1e995, seed)), sessions: map[int64]int64{}, bidders: map[int64]struct{}{}}
	if wantLate {
		x.lateTopic = "nexmark-bids-late-" + tag
	}
	if wantSession {
		x.bidderTopic = "nexmark-bids-bybidder-" + tag
	}
	return x
}

func (x *extraInputs) topics() []string {
	var ts []string
	if x == nil {
		return nil
	}
	for _, t := range []string{x.lateTopic, x.bidderTopic} {
		if t != "" {
			ts = append(ts, t)
		}
	}
	return ts
}

// bidJSON is a bid's value on every bids topic.
func bidJSON(b bidAvro) []byte {
	return fmt.Appendf(nil, `{"auction":%d,"bidder":%d,"price":%d,"channel":"%s","url":"%s","dateTime":%d,"extra":"%s"}`,
		b.Auction, b.Bidder, b.Price, b.Channel, b.URL, b.DateTime, b.Extra)
}

// bid writes bid b (key: its auction) to the extra topics.
func (x *extraInputs) bid(ctx context.Context, cl *kgo.Client, b bidAvro, key, value []byte, done func(*kgo.Record, error)) {
	if x == nil {
		return
	}
	if x.lateTopic != "" {
		lb, v := b, value
		if x.rng.Float64() < x.late {
			lb.DateTime -= 1 + x.rng.Int64N(lateMaxMs)
			v = bidJSON(lb)
			x.lateBids++
		}
		cl.Produce(ctx, &kgo.Record{Topic: x.lateTopic, Key: key, Value: v, Timestamp: time.UnixMilli(lb.DateTime)}, done)
	}
	if x.bidderTopic != "" {
		// Per bidder the bids come in event-time order, so the sessions,
		// and the output count, do not depend on processing order.
		x.sessionOut++
		if end, ok := x.sessions[b.Bidder]; ok && b.DateTime-end <= sessionGapMs {
			x.sessionOut++ // the extended session's tombstone
		} else {
			x.nSessions++
		}
		x.sessions[b.Bidder] = b.DateTime
		x.bidders[b.Bidder] = struct{}{}
		cl.Produce(ctx, &kgo.Record{Topic: x.bidderTopic, Key: strconv.AppendInt(nil, b.Bidder, 10), Value: value, Timestamp: time.UnixMilli(b.DateTime)}, done)
	}
}

func (x *extraInputs) describe() string {
	if x == nil {
		return ""
	}
	var parts []string
	if x.lateTopic != "" {
		parts = append(parts, fmt.Sprintf("agg-late: %s, %d bids late by up to %d ms", x.lateTopic, x.lateBids, lateMaxMs))
	}
	if x.bidderTopic != "" {
		parts = append(parts, fmt.Sprintf("session: %s, %d sessions of %d bidders (%.1f per bidder), %d output records",
			x.bidderTopic, x.nSessions, len(x.bidders), float64(x.nSessions)/float64(max(len(x.bidders), 1)), x.sessionOut))
	}
	return strings.Join(parts, "; ")
}

// statefulSQL is sluiceSQL's text for the workloads of this file, after
// the BIDS stream; table is the auctions topic (join).
func statefulSQL(b *strings.Builder, wl workload, out, table string) {
	switch wl {
	case aggLate:
		fmt.Fprintf(b, "CREATE TABLE OUT WITH (KAFKA_TOPIC='%s') AS SELECT K, COUNT(*) AS N, SUM(PRICE) AS TOTAL FROM BIDS WINDOW TUMBLING (SIZE 10 SECONDS, GRACE PERIOD %d SECONDS) GROUP BY K EMIT CHANGES;\n", out, aggGraceMs/1000)
	case session:
		fmt.Fprintf(b, "CREATE TABLE OUT WITH (KAFKA_TOPIC='%s') AS SELECT K, COUNT(*) AS N FROM BIDS WINDOW SESSION (%d SECONDS, GRACE PERIOD %d SECONDS) GROUP BY K EMIT CHANGES;\n", out, sessionGapMs/1000, aggGraceMs/1000)
	case join:
		fmt.Fprintf(b, "CREATE TABLE AUCTIONS (K VARCHAR PRIMARY KEY, ID BIGINT, SELLER BIGINT, CATEGORY BIGINT) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON');\n", table)
		fmt.Fprintf(b, "CREATE STREAM OUT WITH (KAFKA_TOPIC='%s') AS SELECT B.K AS K, B.AUCTION, B.BIDDER, B.PRICE, B.`dateTime`, A.SELLER, A.CATEGORY FROM BIDS B LEFT JOIN AUCTIONS A ON B.K = A.K;\n", out)
	}
}

func (x *extraInputs) lateTopicOr() string {
	if x == nil {
		return ""
	}
	return x.lateTopic
}

func (x *extraInputs) bidderTopicOr() string {
	if x == nil {
		return ""
	}
	return x.bidderTopic
}

// steady is the steady-state window of a finished count: from the warm-up
// point to the last record, and the fraction of want that arrived in it.
// The warm-up point is the first progress point at least warmup after the
// first output record, so that JIT peers have compiled their hot paths and
// every contender has left start-up and its first rebalance behind; but no
// later than the point holding half the output (a short run keeps half its
// output for the window), and no earlier than 10% of it.
func (c *counter) steady(warmup time.Duration, want int64) (time.Duration, float64) {
	ps := c.progress
	if len(ps) < 2 || want <= 0 {
		return 0, 0
	}
	first, last := ps[0], ps[len(ps)-1]
	w := last
	for _, p := range ps {
		if p.t.Sub(first.t) >= warmup || p.n*2 >= want {
			w = p
			break
		}
	}
	if w.n*10 < want {
		for _, p := range ps {
			if p.n*10 >= want {
				w = p
				break
			}
		}
	}
	if !last.t.After(w.t) {
		return 0, 0
	}
	return last.t.Sub(w.t), float64(last.n-w.n) / float64(want)
}

// checkOf is the output check of a workload, or nil: for join, a bid
// whose seller is null found no auction in the table (an auction's record
// is older than its bids, so a contender that reads the table in time
// order finds every one).
func checkOf(wl workload) func([]byte) bool {
	if wl != join {
		return nil
	}
	return func(v []byte) bool {
		return bytes.Contains(bytes.ToLower(v), []byte(`"seller":null`)) || !bytes.Contains(bytes.ToLower(v), []byte(`"seller"`))
	}
}

func flaggedWhat(wl workload) string {
	if wl == join {
		return "bids without their auction's seller"
	}
	return "flagged"
}
