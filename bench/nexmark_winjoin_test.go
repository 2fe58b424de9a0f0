package main

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// nxT is a time on a 10 s window boundary.
const nxT = int64(1_765_000_000_000)

// sluiceRecord is an output record as Sluice writes it: the join's key, a
// BIGINT, in the record key and not in the value.
func sluiceRecord(key int64, value string) *kgo.Record {
	return &kgo.Record{Key: binary.BigEndian.AppendUint64(nil, uint64(key)), Value: []byte(value)}
}

// TestNXVerifyQ7: q7's expected rows are the bids with their window's
// highest price whose time lies in [window end − 1 ms − 10 s, window end −
// 1 ms], for the windows each side has closed: a bid at a window's last
// millisecond also matches the next window's maximum; Sluice and Kafka
// Streams close a window at stream time end + the 90 s grace, Flink at
// watermark end − 1 ms. The check accepts exactly those rows and rejects a
// changed, a missing and an extra row.
func TestNXVerifyQ7(t *testing.T) {
	nx := &nxEvents{bids: []bidAvro{
		{Auction: 1000, Bidder: 1, Price: 50, DateTime: nxT + 100, Extra: "a"},
		{Auction: 1001, Bidder: 2, Price: 90, DateTime: nxT + 200, Extra: "b"},    // window 0's highest
		{Auction: 1002, Bidder: 3, Price: 70, DateTime: nxT + 9_999, Extra: "c"},  // window 0's last ms: matches window 1's 70
		{Auction: 1003, Bidder: 4, Price: 70, DateTime: nxT + 10_500, Extra: "d"}, // window 1's highest
		{Auction: 1004, Bidder: 5, Price: 20, DateTime: nxT + 15_000, Extra: "e"},
		{Auction: 1005, Bidder: 6, Price: 1, DateTime: nxT + 120_000, Extra: "f"}, // stream time: windows 0–2 closed (S, KS)
	}}
	// Flink's watermark: least of the partitions' greatest times, less 4 s:
	// T + 11 s closes window 0 only.
	env := nxEnv{partitions: 2, bidsMaxTS: map[int32]int64{0: nxT + 120_000, 1: nxT + 15_000}}
	row := func(i int) string {
		b := nx.bids[i]
		return fmt.Sprintf(`{"AUCTION":%d,"BIDDER":%d,"dateTime":%d,"EXTRA":%q}`, b.Auction, b.Bidder, b.DateTime, b.Extra)
	}
	rec := func(i int) *kgo.Record { return sluiceRecord(nx.bids[i].Price, row(i)) }
	for _, side := range []string{"S", "KS"} {
		e, err := newNXExpected(nxQ7, nx, side, env)
		if err != nil {
			t.Fatal(err)
		}
		if e.n != 3 {
			t.Fatalf("%s: %d expected rows, want 3 (bids 1, 2, 3)", side, e.n)
		}
		if err := e.verify([]*kgo.Record{rec(3), rec(1), rec(2)}); err != nil {
			t.Fatalf("%s: expected output rejected: %v", side, err)
		}
		for name, bad := range map[string][]*kgo.Record{
			"changed bidder": {rec(1), rec(2), sluiceRecord(70, strings.Replace(row(3), `"BIDDER":4`, `"BIDDER":5`, 1))},
			"missing row":    {rec(1), rec(2)},
			"extra row":      {rec(1), rec(2), rec(3), rec(0)},
			"duplicated row": {rec(1), rec(2), rec(2)},
		} {
			if err := e.verify(bad); err == nil {
				t.Errorf("%s: %s accepted", side, name)
			}
		}
	}
	e, err := newNXExpected(nxQ7, nx, "F", env)
	if err != nil {
		t.Fatal(err)
	}
	flink := `{"auction":1001,"price":90,"bidder":2,"dateTime":"2025-12-06 05:46:40.200","extra":"b"}`
	if err := e.verify([]*kgo.Record{{Value: []byte(flink)}}); err != nil {
		t.Fatalf("F: expected output rejected: %v", err)
	}
	if err := e.verify([]*kgo.Record{{Value: []byte(flink)}, rec(3)}); err == nil {
		t.Error("F: the row of a window its watermark has not closed accepted")
	}
}

// TestNXVerifyQ8: q8's expected rows are the persons who created an
// auction in the 10 s window they registered in, with the window's start:
// Sluice and Kafka Streams (a join of persons and auctions) once per such
// auction, Flink (a join of the windowed groups) once, for the windows
// both sources' watermarks have closed. The check rejects a changed, a
// missing and an extra row.
func TestNXVerifyQ8(t *testing.T) {
	nx := &nxEvents{
		persons: []nxPerson{
			{ID: 1000, Name: "Kate Smith", DateTime: nxT + 100},
			{ID: 1001, Name: "Paul Jones", DateTime: nxT + 200},
			{ID: 1002, Name: "Sarah White", DateTime: nxT + 12_000},
		},
		auctions: []nxAuction{
			{ID: 1, Seller: 1000, DateTime: nxT + 5_000},
			{ID: 2, Seller: 1000, DateTime: nxT + 9_000},
			{ID: 3, Seller: 1001, DateTime: nxT + 10_500}, // the next window: not new
			{ID: 4, Seller: 1002, DateTime: nxT + 13_000},
		},
	}
	// Flink: persons' watermark T + 26 s, auctions' T + 14 s: window 0 only.
	env := nxEnv{partitions: 2, personsMaxTS: map[int32]int64{0: nxT + 30_000}, auctionsMaxTS: map[int32]int64{0: nxT + 18_000}}
	kate := sluiceRecord(1000, fmt.Sprintf(`{"NAME":"Kate Smith","STIME":%d}`, nxT))
	sarah := sluiceRecord(1002, fmt.Sprintf(`{"NAME":"Sarah White","STIME":%d}`, nxT+10_000))
	for _, side := range []string{"S", "KS"} {
		e, err := newNXExpected(nxQ8, nx, side, env)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.verify([]*kgo.Record{kate, sarah, kate}); err != nil {
			t.Fatalf("%s: expected output rejected: %v", side, err)
		}
		for name, bad := range map[string][]*kgo.Record{
			"changed start": {kate, kate, sluiceRecord(1002, fmt.Sprintf(`{"NAME":"Sarah White","STIME":%d}`, nxT))},
			"missing row":   {kate, sarah},
			"extra row":     {kate, sarah, kate, sluiceRecord(1001, fmt.Sprintf(`{"NAME":"Paul Jones","STIME":%d}`, nxT))},
		} {
			if err := e.verify(bad); err == nil {
				t.Errorf("%s: %s accepted", side, name)
			}
		}
	}
	e, err := newNXExpected(nxQ8, nx, "F", env)
	if err != nil {
		t.Fatal(err)
	}
	flink := &kgo.Record{Value: []byte(`{"id":1000,"name":"Kate Smith","stime":"2025-12-06 05:46:40"}`)}
	if err := e.verify([]*kgo.Record{flink}); err != nil {
		t.Fatalf("F: expected output rejected: %v", err)
	}
	if err := e.verify([]*kgo.Record{flink, flink}); err == nil {
		t.Error("F: a person twice accepted")
	}
}

// TestNXVerifyQ5: q5's expected rows are, per 10 s window sliding by 2 s,
// the auctions with the most bids (all of them on a tie), for the windows
// each side has closed: Flink's by its watermark; Sluice's and Kafka
// Streams' counts once their task's stream time passes end + 90 s,
// their maxima once the greatest start the counts wrote passes start + 2
// s + 60 s, with the start (their join key) in the row. The check rejects
// a changed, a missing and an extra row.
func TestNXVerifyQ5(t *testing.T) {
	nx := &nxEvents{bids: []bidAvro{
		{Auction: 1000, DateTime: nxT + 100}, {Auction: 1000, DateTime: nxT + 200},
		{Auction: 1001, DateTime: nxT + 300}, {Auction: 1001, DateTime: nxT + 400},
		{Auction: 1002, DateTime: nxT + 500},
		{Auction: 1003, DateTime: nxT + 5_000},
		// Stream time for Sluice's counts (T + 200 s closes the windows
		// starting up to T + 100 s), and a count at T + 100 s for the
		// maxima (which closes their windows up to T + 38 s).
		{Auction: 1004, DateTime: nxT + 100_000},
		{Auction: 1005, DateTime: nxT + 200_000},
	}}
	// One partition; Flink's watermark T + 13 s: starts up to T + 2 s.
	env := nxEnv{partitions: 1, bidsMaxTS: map[int32]int64{0: nxT + 17_000}}
	type row struct{ start, auction, num int64 }
	var want []row
	for s := nxT - 8_000; s <= nxT; s += 2_000 {
		want = append(want, row{s, 1000, 2}, row{s, 1001, 2}) // a tie: both
	}
	want = append(want, row{nxT + 2_000, 1003, 1}, row{nxT + 4_000, 1003, 1})
	rec := func(r row) *kgo.Record {
		return sluiceRecord(r.start, fmt.Sprintf(`{"AUCTION":%d,"NUM":%d}`, r.auction, r.num))
	}
	var out []*kgo.Record
	for _, r := range want {
		out = append(out, rec(r))
	}
	for _, side := range []string{"S", "KS"} {
		e, err := newNXExpected(nxQ5, nx, side, env)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.verify(out); err != nil {
			t.Fatalf("%s: expected output rejected: %v", side, err)
		}
		for name, bad := range map[string][]*kgo.Record{
			"changed start": append(out[:len(out)-1:len(out)-1], rec(row{nxT + 6_000, 1003, 1})),
			"missing row":   out[1:],
			"extra row":     append(out[:len(out):len(out)], rec(row{nxT + 92_000, 1004, 1})),
		} {
			if err := e.verify(bad); err == nil {
				t.Errorf("%s: %s accepted", side, name)
			}
		}
	}
	e, err := newNXExpected(nxQ5, nx, "F", env)
	if err != nil {
		t.Fatal(err)
	}
	var flink []*kgo.Record
	for _, r := range want[:len(want)-1] {
		flink = append(flink, &kgo.Record{Value: []byte(fmt.Sprintf(`{"auction":%d,"num":%d}`, r.auction, r.num))})
	}
	if err := e.verify(flink); err != nil {
		t.Fatalf("F: expected output rejected: %v", err)
	}
	if err := e.verify(flink[1:]); err == nil {
		t.Error("F: a missing row accepted")
	}
}
