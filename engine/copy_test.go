package engine_test

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sluice-sql/sluice/exec"
)

// collect is an Output that keeps what a task produces.
type collect struct{ recs []*exec.Record }

func (c *collect) Produce(r *exec.Record) { cp := *r; c.recs = append(c.recs, &cp) }

func bigintKey(n uint64) []byte { return binary.BigEndian.AppendUint64(nil, n) }

// TestRecordCopy runs records through a task that may copy a plain
// selection's text and through one that sends every record through its
// operator chain: the two must produce the same records byte for byte
// and count the same errors, while the copy takes exactly the records
// whose text is already what the chain writes.
func TestRecordCopy(t *testing.T) {
	const typed = `CREATE STREAM S (K STRING KEY, A INT, D DOUBLE, B BOOLEAN, T STRING)
		WITH (KAFKA_TOPIC='s', VALUE_FORMAT='JSON', PARTITIONS=1);`
	const keyless = `CREATE STREAM N (A BIGINT, T STRING) WITH (KAFKA_TOPIC='n', VALUE_FORMAT='JSON', PARTITIONS=1);`
	type in struct {
		key, value []byte
		ts         int64
	}
	bid := func(v string) in { return in{bigintKey(1000), []byte(v), 5} }
	typedRec := func(v string) in { return in{[]byte("k1"), []byte(v), 7} }
	cases := []struct {
		name, ddl, sql string
		ins            []in
		copied         int64
		// first is the first input's result: exact bytes of the value.
		first string
	}{
		{
			name: "select star, event time from a column", ddl: bidsDDL, sql: "CREATE STREAM OUT AS SELECT * FROM BIDS;",
			ins: []in{
				bid(`{"auction":1000,"bidder":7,"price":12,"channel":"web","url":"u","dateTime":1700000000000,"extra":""}`),
				bid(`{"bidder":7,"price":12,"channel":"w\u00e9b","url":"u","dateTime":1700000000001,"extra":""}`), // escape
				bid(`{"bidder":7,"price":12.0,"channel":"web","url":"u","dateTime":1700000000002,"extra":""}`),    // a BIGINT as a fraction
				bid(`{"bidder":7,"channel":"web","url":"u","dateTime":1700000000003,"extra":""}`),                 // a missing column
				bid(`{"bidder":7,"price":12,"channel":"web","url":"u","dateTime":null,"extra":""}`),               // no event time
				bid(`{"bidder":7,"price":12,"channel":"web","url":"u","dateTime":-5,"extra":""}`),                 // a negative one
				bid(`{"bidder":7,"price":"x","channel":"web","url":"u","dateTime":1700000000004,"extra":""}`),     // unreadable
				bid(`not json`),
				{bigintKey(1000), nil, 5},       // a tombstone
				{[]byte{1, 2}, []byte(`{}`), 5}, // a malformed KAFKA BIGINT key
				bid(` {"BIDDER" : 8, "price":-3, "channel":"ü", "url":"", "dateTime":1699999999999, "extra":"x", "more":[1,{"a":null}]} `),
			},
			copied: 2,
			first:  `{"BIDDER":7,"PRICE":12,"CHANNEL":"web","URL":"u","DATETIME":1700000000000,"EXTRA":""}`,
		},
		{
			name: "a subset, renamed and reordered", ddl: bidsDDL, sql: "CREATE STREAM OUT AS SELECT auction, url, price AS p FROM BIDS;",
			ins: []in{
				bid(`{"bidder":7,"price":12,"channel":"web","url":"u","dateTime":1700000000000,"extra":""}`),
				bid(`{"bidder":"unread","price":12,"channel":"web\n","url":"u","dateTime":1700000000001,"extra":""}`), // bad unread columns
				bid(`{"price":12,"url":"u\"","dateTime":1700000000002}`),
			},
			copied: 2,
			first:  `{"URL":"u","P":12}`,
		},
		{
			name: "string key, doubles and booleans", ddl: typed, sql: "CREATE STREAM OUT AS SELECT * FROM S;",
			ins: []in{
				typedRec(`{"A":1,"D":2.5,"B":true,"T":"x"}`),
				typedRec(`{"A":1,"D":2,"B":true,"T":"x"}`),       // the chain writes 2.0
				typedRec(`{"A":1,"D":1.0E10,"B":false,"T":"x"}`), // as the chain writes it
				typedRec(`{"A":1,"D":1e10,"B":false,"T":"x"}`),   // written otherwise
				typedRec(`{"A":2147483648,"D":1.5,"B":true,"T":"x"}`),
				typedRec(`{"A":null,"D":null,"B":null,"T":null}`),
				{nil, []byte(`{"A":1,"D":2.5,"B":true,"T":"x"}`), 7},          // a null key
				{[]byte("k"), []byte(`{"A":1,"D":2.5,"B":true,"T":"x"}`), -1}, // a negative record time
			},
			copied: 4,
			first:  `{"A":1,"D":2.5,"B":true,"T":"x"}`,
		},
		{
			name: "computed columns and a filter", ddl: bidsDDL,
			sql: "CREATE STREAM OUT AS SELECT auction, price * 2 AS p2, UCASE(channel) AS ch, url, price * 0.5 AS half, ROWTIME AS rt, ROWPARTITION AS rp, auction + 1 AS next FROM BIDS WHERE price > 10;",
			ins: []in{
				bid(`{"bidder":7,"price":12,"channel":"web","url":"u","dateTime":1700000000000,"extra":""}`),
				bid(`{"bidder":7,"price":5,"channel":"web","url":"u","dateTime":1700000000001,"extra":""}`),       // filtered out
				bid(`{"bidder":7,"price":null,"channel":"web","url":"u","dateTime":1700000000002,"extra":""}`),    // NULL > 10: out
				bid(`{"bidder":7,"price":13,"channel":null,"url":"v","dateTime":1700000000003,"extra":""}`),       // UCASE(NULL)
				bid(`{"bidder":7,"price":14,"channel":"w\u00e9b","url":"u","dateTime":1700000000004,"extra":""}`), // an escape in a read column
				bid(`{"bidder":7,"price":15,"channel":"ü","url":"u\\","dateTime":1700000000005,"extra":""}`),      // one in a copied column
				bid(`{"price":16,"channel":"x","url":"u","dateTime":1700000000006}`),                              // unread columns missing
			},
			copied: 5,
			first:  `{"P2":24,"CH":"WEB","URL":"u","HALF":6.0,"RT":1700000000000,"RP":0,"NEXT":1001}`,
		},
		{
			name: "no key", ddl: keyless, sql: "CREATE STREAM OUT AS SELECT T, A FROM N;",
			ins: []in{
				{[]byte("ignored"), []byte(`{"A":1,"T":"x"}`), 9},
				{nil, []byte(`{"a":-7,"t":""}`), 9},
			},
			copied: 2,
			first:  `{"T":"x","A":1}`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var copyOut, chainOut collect
			copyTask, sub := planTask(t, tc.ddl, tc.sql, false, &copyOut)
			chainTask, _ := planTask(t, tc.ddl, tc.sql, true, &chainOut)
			for i, r := range tc.ins {
				rec := exec.Record{Topic: sub.Source.Topic, Offset: int64(i), Key: r.key, Value: r.value, Timestamp: r.ts}
				rec2 := rec
				if err := copyTask.Process(&rec); err != nil {
					t.Fatal(err)
				}
				if err := chainTask.Process(&rec2); err != nil {
					t.Fatal(err)
				}
			}
			if diff := cmp.Diff(chainOut.recs, copyOut.recs); diff != "" {
				t.Fatalf("the copy's records differ from the chain's (-chain +copy):\n%s", diff)
			}
			if len(copyOut.recs) == 0 || string(copyOut.recs[0].Value) != tc.first {
				t.Fatalf("first result %s, want %s", describe(copyOut.recs), tc.first)
			}
			if got := copyTask.Copied(); got != tc.copied {
				t.Errorf("copied %d records, want %d", got, tc.copied)
			}
			if got := chainTask.Copied(); got != 0 {
				t.Errorf("the chain task copied %d records", got)
			}
			if a, b := copyTask.StreamTime(), chainTask.StreamTime(); a != b {
				t.Errorf("stream time %d with the copy, %d without", a, b)
			}
			if !strings.Contains(copyTask.Topo.Explain(), copyNote) {
				t.Errorf("EXPLAIN does not say the query copies:\n%s", copyTask.Topo.Explain())
			}
		})
	}
	// Queries that change the key or the format go through their steps.
	for _, sql := range []string{
		"CREATE STREAM OUT WITH (VALUE_FORMAT='DELIMITED') AS SELECT * FROM BIDS;",
		"CREATE STREAM OUT WITH (KEY_FORMAT='JSON') AS SELECT * FROM BIDS;",
	} {
		var out collect
		task, sub := planTask(t, bidsDDL, sql, false, &out)
		rec := exec.Record{Topic: sub.Source.Topic, Key: bigintKey(1), Value: []byte(`{"bidder":7,"price":12,"channel":"web","url":"u","dateTime":1700000000000,"extra":""}`), Timestamp: 1}
		if err := task.Process(&rec); err != nil {
			t.Fatal(err)
		}
		if len(out.recs) != 1 || task.Copied() != 0 || strings.Contains(task.Topo.Explain(), copyNote) {
			t.Errorf("%s: %d records, %d copied; EXPLAIN:\n%s", sql, len(out.recs), task.Copied(), task.Topo.Explain())
		}
	}
}

// copyNote is what EXPLAIN says of a query that copies.
const copyNote = "json copy: "

func describe(recs []*exec.Record) string {
	if len(recs) == 0 {
		return "(none)"
	}
	return fmt.Sprintf("%q", recs[0].Value)
}
