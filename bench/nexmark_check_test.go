package main

import (
	"encoding/binary"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestNXVerify: the suite's check accepts an output equal to the expected
// one in either side's JSON (Sluice's upper-case names and epoch
// milliseconds, Flink's lower-case names, DECIMAL text and TIMESTAMP(3)
// text), in any order, and rejects a changed value, a missing or
// duplicated row and a column the query does not select.
func TestNXVerify(t *testing.T) {
	nx := &nxEvents{bids: []bidAvro{
		{Auction: 1000, Bidder: 7, Price: 10_000, DateTime: 1_765_000_000_123, Extra: "abc"},
		{Auction: 1001, Bidder: 8, Price: 3, DateTime: 1_765_000_000_124, Extra: ""},
	}}
	e, err := newNXExpected(nxQueryNamed("q1"), nx, "S", nxEnv{})
	if err != nil {
		t.Fatal(err)
	}
	sluice := `{"AUCTION":1000,"BIDDER":7,"PRICE":9080.000,"dateTime":1765000000123,"EXTRA":"abc"}`
	flink := `{"auction":1001,"bidder":8,"price":2.724,"dateTime":"2025-12-06 05:46:40.124","extra":""}`
	vals := func(ss ...string) []*kgo.Record {
		var out []*kgo.Record
		for _, s := range ss {
			out = append(out, &kgo.Record{Value: []byte(s)})
		}
		return out
	}
	if err := e.verify(vals(flink, sluice)); err != nil {
		t.Fatalf("equal output rejected: %v", err)
	}
	for name, bad := range map[string][]*kgo.Record{
		"changed price":  vals(flink, strings.Replace(sluice, "9080.000", "9080.001", 1)),
		"changed time":   vals(strings.Replace(flink, "40.124", "40.125", 1), sluice),
		"missing row":    vals(sluice),
		"duplicated row": vals(sluice, sluice),
		"extra column":   vals(flink, strings.Replace(sluice, `"EXTRA"`, `"X":1,"EXTRA"`, 1)),
	} {
		if err := e.verify(bad); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestVerifyFinalWindows: S-agg-final's check accepts every expected
// window once, in any order, and rejects a changed count or sum, a
// missing, duplicated or unexpected window, and a value without the
// results.
func TestVerifyFinalWindows(t *testing.T) {
	want := map[windowKey]windowRow{{"1000", 10_000}: {2, 30}, {"1001", 20_000}: {1, 7}}
	rec := func(key string, start int64, value string) *kgo.Record {
		return &kgo.Record{Key: binary.BigEndian.AppendUint64([]byte(key), uint64(start)), Value: []byte(value)}
	}
	a, b := rec("1000", 10_000, `{"N":2,"TOTAL":30}`), rec("1001", 20_000, `{"N":1,"TOTAL":7}`)
	verify := verifyFinalWindows(want, sluiceWindow)
	if err := verify([]*kgo.Record{b, a}); err != nil {
		t.Fatalf("equal output rejected: %v", err)
	}
	for name, bad := range map[string][]*kgo.Record{
		"changed count":  {b, rec("1000", 10_000, `{"N":3,"TOTAL":30}`)},
		"changed sum":    {b, rec("1000", 10_000, `{"N":2,"TOTAL":31}`)},
		"missing window": {a},
		"duplicated":     {a, b, b},
		"other window":   {a, b, rec("1000", 20_000, `{"N":1,"TOTAL":1}`)},
		"no results":     {b, rec("1000", 10_000, `{"N":2}`)},
	} {
		if err := verify(bad); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// Flink's records: key@window start (UTC text) in the key.
	frec := func(k, value string) *kgo.Record {
		return &kgo.Record{Key: []byte(k), Value: []byte(`{` + value + `}`)}
	}
	fa, fb := frec("1000@1970-01-01 00:00:10", `"n":2,"total":30`), frec("1001@1970-01-01 00:00:20.000", `"n":1,"total":7`)
	fverify := verifyFinalWindows(want, flinkWindow)
	if err := fverify([]*kgo.Record{fa, fb}); err != nil {
		t.Fatalf("Flink's equal output rejected: %v", err)
	}
	for name, bad := range map[string][]*kgo.Record{
		"changed sum":    {fa, frec("1001@1970-01-01 00:00:20.000", `"n":1,"total":8`)},
		"other window":   {fa, frec("1001@1970-01-01 00:00:30.000", `"n":1,"total":7`)},
		"missing window": {fb},
	} {
		if err := fverify(bad); err == nil {
			t.Errorf("Flink, %s: accepted", name)
		}
	}
}

// TestNXVerifyTable: an updating table's check (q4, q15–q18) reads the
// output as a table, the latest record of each record key, with the key's
// columns read from a JSON key object (Flink's upsert-kafka, Sluice's
// GROUP BY of several columns) or a JSON key that is one value (Sluice's
// of one): it accepts either side's changelog whatever its intermediate
// values and counts, and rejects a wrong latest value, a missing or an
// extra key, a key deleted at the end, and an extra column. settle says
// the output is complete exactly when the latest values are the expected.
func TestNXVerifyTable(t *testing.T) {
	nx := &nxEvents{
		auctions: []nxAuction{
			{ID: 1000, DateTime: 100, Expires: 200, Category: 10},
			{ID: 1001, DateTime: 100, Expires: 200, Category: 10},
			{ID: 1002, DateTime: 100, Expires: 200, Category: 11},
		},
		bids: []bidAvro{
			{Auction: 1000, Price: 5, DateTime: 150},
			{Auction: 1000, Price: 50, DateTime: 160},
			{Auction: 1000, Price: 500, DateTime: 201}, // after the auction expired: left out
			{Auction: 1001, Price: 7, DateTime: 170},
			{Auction: 1002, Price: 9, DateTime: 99}, // before the auction: category 11 has no winning bid
			{Auction: 1002, Price: 3, DateTime: 180},
		},
	}
	e, err := newNXExpected(nxQueryNamed("q4"), nx, "S", nxEnv{})
	if err != nil {
		t.Fatal(err)
	}
	rec := func(key, value string) *kgo.Record {
		r := &kgo.Record{Key: []byte(key)}
		if value != "" {
			r.Value = []byte(value)
		}
		return r
	}
	// Category 10: (50 + 7) / 2 = 28 (BIGINT, truncated); 11: 3.
	sluice := []*kgo.Record{rec("10", `{"FINAL":5}`), rec("11", `{"FINAL":3}`), rec("10", `{"FINAL":50}`), rec("10", `{"FINAL":28}`)}
	flink := []*kgo.Record{rec(`{"id":10}`, `{"id":10,"final":5}`), rec(`{"id":10}`, ""), rec(`{"id":11}`, `{"id":11,"final":3}`),
		rec(`{"id":10}`, `{"id":10,"final":28}`)}
	for name, out := range map[string][]*kgo.Record{"sluice": sluice, "flink": flink} {
		if err := e.verify(out); err != nil {
			t.Errorf("%s: equal output rejected: %v", name, err)
		}
		follow := e.settle()
		for i, r := range out {
			if got, want := follow(r), i == len(out)-1; got != want {
				t.Errorf("%s: settled after record %d: %v, want %v", name, i, got, want)
			}
		}
	}
	for name, bad := range map[string][]*kgo.Record{
		"wrong latest value": append(slices.Clone(sluice), rec("10", `{"FINAL":29}`)),
		"missing key":        sluice[:3],
		"extra key":          append(slices.Clone(sluice), rec("12", `{"FINAL":1}`)),
		"deleted at the end": append(slices.Clone(flink), rec(`{"id":11}`, "")),
		"extra column":       append(slices.Clone(sluice), rec("11", `{"FINAL":3,"X":1}`)),
	} {
		if err := e.verify(bad); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestNXDailyQueries: q15–q18's expected outputs from four bids, accepted
// as Sluice writes them (GROUP BY columns in a JSON key, upper-case value
// columns, epoch milliseconds) and as Flink's upsert-kafka sink does (key
// columns in the value too, TIMESTAMP(3) as text), and rejected with one
// value changed.
func TestNXDailyQueries(t *testing.T) {
	const day = 1_765_000_000_000 // 2025-12-06 05:46:40 UTC
	nx := &nxEvents{bids: []bidAvro{
		{Auction: 1000, Bidder: 7, Price: 500, Channel: "Apple", URL: "u1", DateTime: day, Extra: "a"},
		{Auction: 1000, Bidder: 7, Price: 20_000, Channel: "Apple", URL: "u2", DateTime: day + 60_000, Extra: "b"},
		{Auction: 1001, Bidder: 8, Price: 5_000_000, Channel: "Baidu", URL: "u3", DateTime: day + 120_000, Extra: "c"},
		{Auction: 1000, Bidder: 9, Price: 700, Channel: "Apple", URL: "u4", DateTime: day + 180_000, Extra: "d"},
	}}
	rec := func(key, value string) *kgo.Record { return &kgo.Record{Key: []byte(key), Value: []byte(value)} }
	for _, tc := range []struct {
		q        string
		sluice   []*kgo.Record
		flink    []*kgo.Record
		from, to string // a change in the last Sluice record the check must reject
	}{
		{
			q: "q15",
			sluice: []*kgo.Record{rec(`"2025-12-06"`, `{"TOTAL_BIDS":4,"RANK1_BIDS":2,"RANK2_BIDS":1,"RANK3_BIDS":1,"TOTAL_BIDDERS":3,"RANK1_BIDDERS":2,"RANK2_BIDDERS":1,"RANK3_BIDDERS":1,`+
				`"TOTAL_AUCTIONS":2,"RANK1_AUCTIONS":1,"RANK2_AUCTIONS":1,"RANK3_AUCTIONS":1}`)},
			flink: []*kgo.Record{rec(`{"day":"2025-12-06"}`, `{"day":"2025-12-06","total_bids":4,"rank1_bids":2,"rank2_bids":1,"rank3_bids":1,"total_bidders":3,"rank1_bidders":2,"rank2_bidders":1,"rank3_bidders":1,`+
				`"total_auctions":2,"rank1_auctions":1,"rank2_auctions":1,"rank3_auctions":1}`)},
			from: `"RANK1_BIDDERS":2`, to: `"RANK1_BIDDERS":1`,
		},
		{
			q: "q16",
			sluice: []*kgo.Record{
				rec(`{"CHANNEL":"Baidu","day":"2025-12-06"}`, `{"minute":"05:48","TOTAL_BIDS":1,"RANK1_BIDS":0,"RANK2_BIDS":0,"RANK3_BIDS":1,"TOTAL_BIDDERS":1,"RANK1_BIDDERS":0,"RANK2_BIDDERS":0,"RANK3_BIDDERS":1,`+
					`"TOTAL_AUCTIONS":1,"RANK1_AUCTIONS":0,"RANK2_AUCTIONS":0,"RANK3_AUCTIONS":1}`),
				rec(`{"CHANNEL":"Apple","day":"2025-12-06"}`, `{"minute":"05:49","TOTAL_BIDS":3,"RANK1_BIDS":2,"RANK2_BIDS":1,"RANK3_BIDS":0,"TOTAL_BIDDERS":2,"RANK1_BIDDERS":2,"RANK2_BIDDERS":1,"RANK3_BIDDERS":0,`+
					`"TOTAL_AUCTIONS":1,"RANK1_AUCTIONS":1,"RANK2_AUCTIONS":1,"RANK3_AUCTIONS":0}`),
			},
			from: `"minute":"05:49"`, to: `"minute":"05:47"`,
		},
		{
			q: "q17",
			sluice: []*kgo.Record{
				rec(`{"AUCTION":1000,"day":"2025-12-06"}`, `{"TOTAL_BIDS":2,"RANK1_BIDS":1,"RANK2_BIDS":1,"RANK3_BIDS":0,"MIN_PRICE":500,"MAX_PRICE":20000,"AVG_PRICE":10250,"SUM_PRICE":20500}`),
				rec(`{"AUCTION":1001,"day":"2025-12-06"}`, `{"TOTAL_BIDS":1,"RANK1_BIDS":0,"RANK2_BIDS":0,"RANK3_BIDS":1,"MIN_PRICE":5000000,"MAX_PRICE":5000000,"AVG_PRICE":5000000,"SUM_PRICE":5000000}`),
				// The third bid on 1000: AVG 21200 / 3 = 7066.67, truncated.
				rec(`{"AUCTION":1000,"day":"2025-12-06"}`, `{"TOTAL_BIDS":3,"RANK1_BIDS":2,"RANK2_BIDS":1,"RANK3_BIDS":0,"MIN_PRICE":500,"MAX_PRICE":20000,"AVG_PRICE":7066,"SUM_PRICE":21200}`),
			},
			from: `"AVG_PRICE":7066`, to: `"AVG_PRICE":7067`,
		},
		{
			q: "q18",
			sluice: []*kgo.Record{
				rec(`{"BIDDER":7,"AUCTION":1000}`, `{"PRICE":500,"CHANNEL":"Apple","URL":"u1","dateTime":1765000000000,"EXTRA":"a"}`),
				rec(`{"BIDDER":7,"AUCTION":1000}`, `{"PRICE":20000,"CHANNEL":"Apple","URL":"u2","dateTime":1765000060000,"EXTRA":"b"}`),
				rec(`{"BIDDER":8,"AUCTION":1001}`, `{"PRICE":5000000,"CHANNEL":"Baidu","URL":"u3","dateTime":1765000120000,"EXTRA":"c"}`),
				rec(`{"BIDDER":9,"AUCTION":1000}`, `{"PRICE":700,"CHANNEL":"Apple","URL":"u4","dateTime":1765000180000,"EXTRA":"d"}`),
			},
			flink: []*kgo.Record{
				rec(`{"bidder":7,"auction":1000}`, `{"auction":1000,"bidder":7,"price":20000,"channel":"Apple","url":"u2","dateTime":"2025-12-06 05:47:40","extra":"b"}`),
				rec(`{"bidder":8,"auction":1001}`, `{"auction":1001,"bidder":8,"price":5000000,"channel":"Baidu","url":"u3","dateTime":"2025-12-06 05:48:40","extra":"c"}`),
				rec(`{"bidder":9,"auction":1000}`, `{"auction":1000,"bidder":9,"price":700,"channel":"Apple","url":"u4","dateTime":"2025-12-06 05:49:40","extra":"d"}`),
			},
			from: `"EXTRA":"d"`, to: `"EXTRA":"x"`,
		},
	} {
		e, err := newNXExpected(nxQueryNamed(tc.q), nx, "S", nxEnv{})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.verify(tc.sluice); err != nil {
			t.Errorf("%s: Sluice's output rejected: %v", tc.q, err)
		}
		if tc.flink != nil {
			if err := e.verify(tc.flink); err != nil {
				t.Errorf("%s: Flink's output rejected: %v", tc.q, err)
			}
		}
		bad := slices.Clone(tc.sluice)
		last := *bad[len(bad)-1]
		if !strings.Contains(string(last.Value), tc.from) {
			t.Fatalf("%s: %s not in %s", tc.q, tc.from, last.Value)
		}
		last.Value = []byte(strings.Replace(string(last.Value), tc.from, tc.to, 1))
		bad[len(bad)-1] = &last
		if err := e.verify(bad); err == nil {
			t.Errorf("%s: a changed value accepted", tc.q)
		}
	}
}

// TestRatioSkipsUnmeasuredRuns: a per-CPU figure of 0 (a steady window
// too short to sample the CPU, or shorter than minCPUWindow) gives no
// ratio, so results.json gets no
// 0 for a query that was merely too short; the runs that measured
// something still give their median.
func TestRatioSkipsUnmeasuredRuns(t *testing.T) {
	s := func(steadyCPU time.Duration) procSample {
		return procSample{Records: 1000, Steady: time.Second, SteadyFrac: 0.5, SteadyCPU: steadyCPU}
	}
	short := func(steadyCPU time.Duration) procSample {
		return procSample{Records: 1000, Steady: minCPUWindow - time.Millisecond, SteadyFrac: 0.5, SteadyCPU: steadyCPU}
	}
	tests := []struct {
		name   string
		a, b   []procSample
		want   float64
		wantOK bool
	}{
		{"every run measured", []procSample{s(time.Second), s(2 * time.Second), s(time.Second)}, []procSample{s(2 * time.Second), s(2 * time.Second), s(4 * time.Second)}, 2, true},
		{"no run measured", []procSample{s(0), s(0)}, []procSample{s(time.Second), s(time.Second)}, 0, false},
		{"one run measured", []procSample{s(0), s(time.Second)}, []procSample{s(time.Second), s(3 * time.Second)}, 3, true},
		{"unequal runs", []procSample{s(time.Second)}, nil, 0, false},
		// A steady window shorter than minCPUWindow holds too few CPU
		// samples to measure: the run counts as not measured.
		{"short window", []procSample{short(time.Second / 10), s(time.Second)}, []procSample{s(time.Second), s(3 * time.Second)}, 3, true},
		{"only short windows", []procSample{short(time.Second / 10)}, []procSample{s(time.Second)}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ratio(tt.a, tt.b, procSample.PerCPU)
			if got != tt.want || ok != tt.wantOK {
				t.Fatalf("ratio = %v, %v; want %v, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}
