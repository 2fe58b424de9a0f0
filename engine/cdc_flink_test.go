package engine_test

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/internal/testcdc"
	"github.com/sluice-sql/sluice/internal/testkafka"
)

// TestFlinkDebeziumJSON proves the claim of docs/cdc.md that Flink SQL's
// debezium-json format reads a Sluice table's change events: a CREATE
// TABLE … AS SELECT with VALUE_ENVELOPE='DEBEZIUM' over a table whose
// keys are created, updated (a value, and a row moved to another group),
// left unchanged, filtered out, deleted and created again, on Apache
// Kafka; then Flink (bench/flink/run cdc-read, a local MiniCluster) reads
// the sink's topic as a changelog table to its end. Flink's table equals
// Sluice's (pull query), and Flink's COUNT/SUM GROUP BY over it equals
// Sluice's aggregate over the same table: Flink retracted every update
// and delete. At least once and exactly once (the sink's transactions,
// read read_committed).
func TestFlinkDebeziumJSON(t *testing.T) {
	testcdc.Require(t)
	run, err := filepath.Abs(filepath.Join("..", "bench", "flink", "run"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"mvn", "flock"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found: bench/flink/run builds its jar with Maven under flock", tool)
		}
	}
	for _, guarantee := range []string{"at_least_once", "exactly_once"} {
		t.Run(guarantee, func(t *testing.T) { flinkDebeziumJSON(t, run, guarantee) })
	}
}

func flinkDebeziumJSON(t *testing.T, run, guarantee string) {
	brokers := testkafka.Brokers(t)
	svc, topic, cdcTopic := testkafka.Name(t, "svc"), testkafka.Name(t, "items"), testkafka.Name(t, "items_cdc")
	testkafka.CreateTopic(t, brokers, topic, 2)
	e := openEngineLog(t, brokers, t.TempDir(), svc, quiet, "processing.guarantee", guarantee)
	defer closeEngine(t, e)
	execute(t, e, fmt.Sprintf(`
		CREATE TABLE items (id INT PRIMARY KEY, name STRING, qty BIGINT)
		  WITH (KAFKA_TOPIC='%[1]s', KEY_FORMAT='JSON', VALUE_FORMAT='JSON', VALUE_ENVELOPE='DEBEZIUM');
		CREATE TABLE items_cdc WITH (KAFKA_TOPIC='%[2]s', VALUE_ENVELOPE='DEBEZIUM') AS
		  SELECT id, name, qty FROM items WHERE qty > 0;
		CREATE TABLE by_name AS SELECT name, COUNT(*) AS n, SUM(qty) AS total FROM items_cdc GROUP BY name;`,
		topic, cdcTopic))

	// Records of this hour: a real broker compacts the sink's topic, and
	// rolls a segment of old records at the first transaction marker.
	ts := time.Now().Add(-time.Hour).UnixMilli()
	lsn := int64(0)
	change := func(id int, op string, before, after map[string]any) *kgo.Record {
		ts++
		lsn++
		r := &kgo.Record{Topic: topic, Key: debeziumKey(id), Timestamp: time.UnixMilli(ts)}
		if op != "" {
			r.Value = []byte(debezium(op, before, after, ts, lsn))
		}
		return r
	}
	// Debezium's events of a database table, and the change events each
	// makes in the sink (18 records in all).
	testkafka.Produce(t, brokers,
		change(1, "c", nil, item(1, "anvil", 3)),                 // c
		change(2, "c", nil, item(2, "anvil", 4)),                 // c
		change(3, "c", nil, item(3, "bolt", 5)),                  // c
		change(4, "c", nil, item(4, "bolt", 1)),                  // c
		change(5, "c", nil, item(5, "nail", 2)),                  // c
		change(1, "u", item(1, "anvil", 3), item(1, "anvil", 7)), // u: a value
		change(3, "u", item(3, "bolt", 5), item(3, "anvil", 5)),  // u: from group bolt to anvil
		change(1, "u", item(1, "anvil", 3), item(1, "anvil", 7)), // nothing: re-sent, the row as it is
		change(4, "d", item(4, "bolt", 1), nil),                  // d, tombstone
		change(4, "", nil, nil),                                  // nothing: Debezium's tombstone
		change(5, "u", item(5, "nail", 2), item(5, "nail", 0)),   // d, tombstone: filtered out
		change(2, "d", item(2, "anvil", 4), nil),                 // d, tombstone
		change(2, "c", nil, item(2, "bolt", 9)),                  // c: the key again
		change(6, "c", nil, item(6, "nail", 1)),                  // c
		change(6, "d", item(6, "nail", 1), nil),                  // d, tombstone: group nail empty
		change(7, "c", nil, item(7, "big anvil", 2)),             // c: a name with a space
	)

	// Sluice's answers, each row's columns joined by a tab as cdc-read
	// prints them; the aggregate keeps a group whose rows are all gone
	// (COUNT 0), where Flink's retracts it: the empty groups are left out.
	wantTable := []string{"1\tanvil\t7", "2\tbolt\t9", "3\tanvil\t5", "7\tbig anvil\t2"}
	wantAgg := []string{"anvil\t2\t12", "big anvil\t1\t2", "bolt\t1\t9"}
	pull := func(sql string) []string {
		res, err := e.Execute(context.Background(), sql)
		if err != nil {
			return []string{err.Error()}
		}
		var lines []string
		for r := range res[0].Rows.C {
			var cells []string
			for _, v := range r.Cols {
				cells = append(cells, fmt.Sprint(v))
			}
			lines = append(lines, strings.Join(cells, "\t"))
		}
		slices.Sort(lines)
		return lines
	}
	var gotTable, gotAgg []string
	func() {
		defer func() {
			if t.Failed() {
				t.Logf("Sluice's table %q, aggregate %q", gotTable, gotAgg)
			}
		}()
		testkafka.Await(t, 60*time.Second, "Sluice's table and aggregate", func() bool {
			gotTable, gotAgg = pull("SELECT * FROM items_cdc;"), pull("SELECT * FROM by_name WHERE n > 0;")
			return slices.Equal(gotTable, wantTable) && slices.Equal(gotAgg, wantAgg)
		})
	}()
	// Flink reads the topic up to its end when it starts: the sink must
	// have written every change first.
	var events int
	testkafka.Await(t, 60*time.Second, "the 18 change events", func() bool {
		events = len(testkafka.ReadAll(t, brokers, cdcTopic))
		return events >= 18
	})
	if events != 18 {
		t.Fatalf("the sink wrote %d records, want 18", events)
	}

	// The row images' field names are the table's column names, in upper
	// case; debezium-json matches them exactly.
	columns := "`ID` INT, `NAME` STRING, `QTY` BIGINT"
	flink := func(query string) []string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		x := exec.CommandContext(ctx, run, "cdc-read", "--brokers", brokers, "--topic", cdcTopic,
			"--columns", columns, "--key", "`ID`", "--query", query)
		var stdout, stderr bytes.Buffer
		x.Stdout, x.Stderr = &stdout, &stderr
		start := time.Now()
		if err := x.Run(); err != nil {
			t.Fatalf("%s cdc-read --query %q: %v\n%s", run, query, err, stderr.String())
		}
		t.Logf("flink %q: %s", query, time.Since(start).Round(time.Millisecond))
		out := strings.TrimSuffix(stdout.String(), "\n")
		if out == "" {
			return nil
		}
		return strings.Split(out, "\n")
	}
	if diff := cmp.Diff(gotTable, flink("SELECT `ID`, `NAME`, `QTY` FROM t")); diff != "" {
		t.Errorf("Flink's table of the change events (-Sluice +Flink):\n%s", diff)
	}
	if diff := cmp.Diff(gotAgg, flink("SELECT `NAME`, COUNT(*), SUM(`QTY`) FROM t GROUP BY `NAME`")); diff != "" {
		t.Errorf("Flink's aggregate over the change events (-Sluice +Flink):\n%s", diff)
	}
}
