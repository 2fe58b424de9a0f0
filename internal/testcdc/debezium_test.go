package testcdc

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

var updateSamples = flag.Bool("update-samples", false, "write the Debezium records this test reads into "+samplesDir)

// samplesDir holds real Debezium records for the format's unit tests.
const samplesDir = "../../format/testdata/debezium"

// TestDebeziumPostgres is the fixture's proof: PostgreSQL → Debezium's
// connector in a real Connect worker → Apache Kafka, with the exact change
// records an INSERT, an UPDATE, an UPDATE of the primary key and a DELETE
// give, under REPLICA IDENTITY FULL and DEFAULT; then what a graceful task
// restart and a worker crash add to the topic.
func TestDebeziumPostgres(t *testing.T) {
	Require(t)
	brokers := testkafka.Brokers(t)
	pg := StartPostgres(t)
	// Source offsets are committed only when a task stops gracefully: the
	// crash below then replays everything since the task restart, always
	// the same records (with a short interval it would depend on timing).
	connect := StartConnect(t, brokers, "offset.flush.interval.ms=600000")

	name := strings.ToLower(testkafka.Name(t, "cdc"))
	plain := name + "_plain"
	pg.Exec(t, `
CREATE TABLE accounts_full (id int PRIMARY KEY, owner text, balance int);
ALTER TABLE accounts_full REPLICA IDENTITY FULL;
CREATE TABLE accounts_default (id int PRIMARY KEY, owner text, balance int);
INSERT INTO accounts_full VALUES (1, 'ann', 100), (2, 'bob', 50);
INSERT INTO accounts_default VALUES (1, 'ann', 100), (2, 'bob', 50);`)

	connect.CreateConnector(t, name, pg.DebeziumConfig(name, "public.accounts_full", "public.accounts_default"))
	// The same changes once more, keys and values as bare JSON (no schema
	// envelope), for the samples.
	plainConfig := pg.DebeziumConfig(plain, "public.accounts_full")
	for _, side := range []string{"key", "value"} {
		plainConfig[side+".converter"] = "org.apache.kafka.connect.json.JsonConverter"
		plainConfig[side+".converter.schemas.enable"] = "false"
	}
	connect.CreateConnector(t, plain, plainConfig)
	connect.AwaitRunning(t, name)
	connect.AwaitRunning(t, plain)

	full, deflt, plainTopic := name+".public.accounts_full", name+".public.accounts_default", plain+".public.accounts_full"
	snapshot := []string{
		`key={"id":1} op=r before=null after={"balance":100,"id":1,"owner":"ann"}`,
		`key={"id":2} op=r before=null after={"balance":50,"id":2,"owner":"bob"}`,
	}
	checkTopic(t, brokers, full, snapshot)
	checkTopic(t, brokers, deflt, snapshot)

	for _, table := range []string{"accounts_full", "accounts_default"} {
		pg.Exec(t, fmt.Sprintf(`
INSERT INTO %[1]s VALUES (3, 'cat', 10);
UPDATE %[1]s SET balance = 60 WHERE id = 2;
UPDATE %[1]s SET id = 20 WHERE id = 2;
DELETE FROM %[1]s WHERE id = 1;`, table))
	}
	// REPLICA IDENTITY FULL: before is the whole old row, on updates and deletes.
	changesFull := append(append([]string{}, snapshot...),
		`key={"id":3} op=c before=null after={"balance":10,"id":3,"owner":"cat"}`,
		`key={"id":2} op=u before={"balance":50,"id":2,"owner":"bob"} after={"balance":60,"id":2,"owner":"bob"}`,
		// An update of the key is a delete of the old key (and its
		// tombstone) then a create of the new one, each naming the other key.
		`key={"id":2} op=d before={"balance":60,"id":2,"owner":"bob"} after=null __debezium.newkey={"id":20}`,
		`key={"id":2} tombstone __debezium.newkey={"id":20}`,
		`key={"id":20} op=c before=null after={"balance":60,"id":20,"owner":"bob"} __debezium.oldkey={"id":2}`,
		`key={"id":1} op=d before={"balance":100,"id":1,"owner":"ann"} after=null`,
		`key={"id":1} tombstone`,
	)
	// REPLICA IDENTITY DEFAULT: an update carries no before; a delete's
	// before has the key's columns only, the others null.
	changesDefault := append(append([]string{}, snapshot...),
		`key={"id":3} op=c before=null after={"balance":10,"id":3,"owner":"cat"}`,
		`key={"id":2} op=u before=null after={"balance":60,"id":2,"owner":"bob"}`,
		`key={"id":2} op=d before={"balance":null,"id":2,"owner":null} after=null __debezium.newkey={"id":20}`,
		`key={"id":2} tombstone __debezium.newkey={"id":20}`,
		`key={"id":20} op=c before=null after={"balance":60,"id":20,"owner":"bob"} __debezium.oldkey={"id":2}`,
		`key={"id":1} op=d before={"balance":null,"id":1,"owner":null} after=null`,
		`key={"id":1} tombstone`,
	)
	checkTopic(t, brokers, full, changesFull)
	checkTopic(t, brokers, deflt, changesDefault)
	plainRecords := checkTopic(t, brokers, plainTopic, changesFull)
	if *updateSamples {
		writeSamples(t, "schemas", testkafka.ReadAll(t, brokers, full))
		writeSamples(t, "plain", plainRecords)
		writeSamples(t, "replica-identity-default", testkafka.ReadAll(t, brokers, deflt))
	}

	// A graceful task restart: the task commits its offsets as it stops,
	// so the restarted task resumes after the last record: no duplicates.
	connect.RestartTask(t, name, 0)
	connect.AwaitRunning(t, name)
	pg.Exec(t, `INSERT INTO accounts_full VALUES (4, 'dan', 5);`)
	afterRestart := append(append([]string{}, changesFull...),
		`key={"id":4} op=c before=null after={"balance":5,"id":4,"owner":"dan"}`,
	)
	checkTopic(t, brokers, full, afterRestart)

	// A crash of the worker: the offsets since the last commit (the task
	// restart) are lost, so the new worker's task sends those changes
	// again: at-least-once duplicates a CDC table must absorb.
	pg.Exec(t, `UPDATE accounts_full SET balance = 11 WHERE id = 3;`)
	beforeCrash := append(append([]string{}, afterRestart...),
		`key={"id":3} op=u before={"balance":10,"id":3,"owner":"cat"} after={"balance":11,"id":3,"owner":"cat"}`,
	)
	checkTopic(t, brokers, full, beforeCrash)
	connect.Kill(t)
	connect.Restart(t)
	connect.AwaitRunning(t, name)
	pg.Exec(t, `DELETE FROM accounts_full WHERE id = 4;`)
	afterCrash := append(append([]string{}, beforeCrash...),
		`key={"id":4} op=c before=null after={"balance":5,"id":4,"owner":"dan"}`,
		`key={"id":3} op=u before={"balance":10,"id":3,"owner":"cat"} after={"balance":11,"id":3,"owner":"cat"}`,
		`key={"id":4} op=d before={"balance":5,"id":4,"owner":"dan"} after=null`,
		`key={"id":4} tombstone`,
	)
	checkTopic(t, brokers, full, afterCrash)
}

// checkTopic waits until topic holds len(want) records, then compares them,
// described, with want; it returns the records.
func checkTopic(t *testing.T, brokers, topic string, want []string) []*kgo.Record {
	t.Helper()
	adm := kadm.NewClient(testkafka.Client(t, brokers))
	const timeout = 60 * time.Second
	deadline := time.Now().Add(timeout)
	for {
		n, err := recordCount(adm, topic)
		if err == nil && n >= int64(len(want)) {
			break
		}
		if time.Now().After(deadline) {
			got := ""
			if err == nil {
				for _, r := range testkafka.ReadAll(t, brokers, topic) {
					got += "\n  " + describe(t, r)
				}
			}
			t.Fatalf("%s: %d records within %s, want %d (last error: %v); got:%s", topic, n, timeout, len(want), err, got)
		}
		time.Sleep(100 * time.Millisecond)
	}
	recs := testkafka.ReadAll(t, brokers, topic)
	got := make([]string, len(recs))
	for i, r := range recs {
		got[i] = describe(t, r)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("%s records (-want +got):\n%s", topic, diff)
	}
	return recs
}

// recordCount is the number of offsets the topic's partitions hold.
func recordCount(adm *kadm.Client, topic string) (int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return 0, err
	}
	if err := ends.Error(); err != nil {
		return 0, err
	}
	var n int64
	ends.Each(func(o kadm.ListedOffset) { n += o.Offset })
	return n, nil
}

// describe prints a Debezium record with what a CDC table reads from it:
// the key, op, before and after (JSON with sorted fields, the schema
// envelope removed), a tombstone as such, and Debezium's key-change headers.
// Timestamps and source positions, which differ from run to run, are left out.
func describe(t *testing.T, r *kgo.Record) string {
	t.Helper()
	s := "key=" + canonical(t, unwrap(t, r.Key))
	if r.Value == nil {
		s += " tombstone"
	} else {
		var v struct {
			Op     string          `json:"op"`
			Before json.RawMessage `json:"before"`
			After  json.RawMessage `json:"after"`
		}
		if err := json.Unmarshal(unwrap(t, r.Value), &v); err != nil {
			t.Fatalf("%s/%d@%d: value %q: %v", r.Topic, r.Partition, r.Offset, r.Value, err)
		}
		s += fmt.Sprintf(" op=%s before=%s after=%s", v.Op, canonical(t, v.Before), canonical(t, v.After))
	}
	for _, h := range r.Headers {
		if keyChangeHeader(h.Key) {
			s += " " + h.Key + "=" + canonical(t, unwrap(t, h.Value))
		}
	}
	return s
}

// keyChangeHeader reports whether a header is the one Debezium puts on the
// two records of a primary-key update, naming the other key.
func keyChangeHeader(key string) bool {
	return key == "__debezium.oldkey" || key == "__debezium.newkey"
}

// keyChangeHeaders are the record's key-change headers, name to value (its
// JSON, or a string when the value is not JSON), or nil when it has none.
func keyChangeHeaders(r *kgo.Record) map[string]any {
	var hs map[string]any
	for _, h := range r.Headers {
		if !keyChangeHeader(h.Key) {
			continue
		}
		if hs == nil {
			hs = map[string]any{}
		}
		if json.Valid(h.Value) {
			hs[h.Key] = json.RawMessage(h.Value)
		} else {
			hs[h.Key] = string(h.Value)
		}
	}
	return hs
}

// unwrap returns the payload of JsonConverter's schema envelope
// {"schema":…,"payload":…}, or b itself when it has none.
func unwrap(t *testing.T, b []byte) []byte {
	t.Helper()
	var env map[string]json.RawMessage
	if json.Unmarshal(b, &env) == nil && len(env) == 2 && env["schema"] != nil && env["payload"] != nil {
		return env["payload"]
	}
	return b
}

// canonical re-encodes JSON with sorted object fields.
func canonical(t *testing.T, b []byte) string {
	t.Helper()
	if len(b) == 0 {
		return "null"
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("JSON %q: %v", b, err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("JSON %q: %v", b, err)
	}
	return string(out)
}

// writeSamples writes each record of recs as it came from Kafka, the key
// and the value bytes unchanged (NAME.key.json, NAME.value.json, empty for a
// tombstone), into samplesDir/dir: r, c, u, d and tombstone (the first of
// each), and pk-change-d, pk-change-tombstone, pk-change-c for the update of
// a primary key, with their key-change headers (NAME.headers.json).
func writeSamples(t *testing.T, dir string, recs []*kgo.Record) {
	t.Helper()
	out := filepath.Join(samplesDir, dir)
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range recs {
		name := "tombstone"
		if r.Value != nil {
			var v struct {
				Op string `json:"op"`
			}
			if err := json.Unmarshal(unwrap(t, r.Value), &v); err != nil {
				t.Fatal(err)
			}
			name = v.Op
		}
		for _, h := range r.Headers {
			if keyChangeHeader(h.Key) {
				name = "pk-change-" + name
				break
			}
		}
		if seen[name] {
			continue
		}
		seen[name] = true
		files := []struct {
			ext string
			b   []byte
		}{{".key.json", r.Key}, {".value.json", r.Value}}
		if hs := keyChangeHeaders(r); hs != nil {
			b, err := json.MarshalIndent(hs, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, struct {
				ext string
				b   []byte
			}{".headers.json", append(b, '\n')})
		}
		for _, f := range files {
			if err := os.WriteFile(filepath.Join(out, name+f.ext), f.b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Logf("wrote %d samples into %s", len(seen), out)
}
