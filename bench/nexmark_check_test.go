package main

import (
	"encoding/binary"
	"strings"
	"testing"

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
