package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/internal/testcdc"
	"github.com/sluice-sql/sluice/internal/testkafka"
	"github.com/sluice-sql/sluice/ksqlwire"
)

// The names docs/cdc.md gives: the connector (upper-cased, as ksqlDB
// names an unquoted one), the topic Debezium writes, the aggregation and
// its change events.
const (
	cdcConnector    = "SHOP"
	cdcTopic        = "shop.public.orders"
	cdcTotalsTopic  = "CUSTOMER_TOTALS"
	cdcChangesTopic = "customer_changes"
	cdcDocServer    = "http://127.0.0.1:8088"
)

// cdcStep is one thing docs/cdc.md tells its reader to do, in the order
// of the page.
type cdcStep struct {
	kind string // "psql", "file", "server", "shell" or "rest"
	line int    // where it is in docs/cdc.md
	// text is the SQL given to psql, the file written (before the shell
	// expands it), the statements of `sluice shell -e`, or the body
	// POSTed to /query-stream.
	text string
	// want is the output the page shows for a shell or rest step.
	want string
}

func (s cdcStep) String() string { return fmt.Sprintf("docs/cdc.md:%d %s", s.line, s.kind) }

var (
	cdcFence    = regexp.MustCompile("(?ms)^```([a-z]*)\n(.*?)^```\n")
	cdcShellCmd = regexp.MustCompile(`^\./sluice shell --server ` + regexp.QuoteMeta(cdcDocServer) + ` -e "([^"]*)"$`)
	cdcRESTCmd  = regexp.MustCompile(`^curl -sS ` + regexp.QuoteMeta(cdcDocServer) + `/query-stream --data-binary @- <<'JSON'$`)
	cdcQueryID  = regexp.MustCompile(`"queryId":"((?:pull|transient)_[A-Z_]+_)[0-9]+"`)
)

// cdcDocSteps reads the steps out of docs/cdc.md's code blocks: in sh
// blocks, psql here-documents, the `cat > shop.sql <<EOF` file, the
// server's command line, `./sluice shell … -e "…"` and curl to
// /query-stream, each query followed by a block of its output.
func cdcDocSteps(t *testing.T) []cdcStep {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "cdc.md"))
	if err != nil {
		t.Fatal(err)
	}
	var steps []cdcStep
	blocks := cdcFence.FindAllSubmatchIndex(doc, -1)
	for bi := 0; bi < len(blocks); bi++ {
		b := blocks[bi]
		lang, body := string(doc[b[2]:b[3]]), string(doc[b[4]:b[5]])
		if lang != "sh" {
			continue
		}
		first := 1 + strings.Count(string(doc[:b[4]]), "\n")
		lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
		// heredoc collects the lines after line i up to the terminator.
		heredoc := func(i *int, end string) string {
			var out []string
			for *i++; *i < len(lines) && lines[*i] != end; *i++ {
				out = append(out, lines[*i])
			}
			if *i == len(lines) {
				t.Fatalf("docs/cdc.md:%d: here-document without its %s line", first+*i, end)
			}
			return strings.Join(out, "\n") + "\n"
		}
		// output is the next block, which shows what the query prints.
		output := func(line int) string {
			if bi+1 == len(blocks) || string(doc[blocks[bi+1][2]:blocks[bi+1][3]]) != "text" {
				t.Fatalf("docs/cdc.md:%d: a query without a text block of its output after it", line)
			}
			return string(doc[blocks[bi+1][4]:blocks[bi+1][5]])
		}
		for i := 0; i < len(lines); i++ {
			l, line := lines[i], first+i
			switch {
			case l == "scripts/postgres psql <<'SQL'":
				steps = append(steps, cdcStep{kind: "psql", line: line, text: heredoc(&i, "SQL")})
			case l == "cat > shop.sql <<EOF":
				steps = append(steps, cdcStep{kind: "file", line: line, text: heredoc(&i, "EOF")})
			case strings.HasPrefix(l, "./sluice server "):
				for _, want := range []string{`--connect-url "$url"`, "--file shop.sql"} {
					if !strings.Contains(l, want) {
						t.Fatalf("docs/cdc.md:%d: the server's command line lacks %s: %s", line, want, l)
					}
				}
				steps = append(steps, cdcStep{kind: "server", line: line})
			case cdcShellCmd.MatchString(l):
				steps = append(steps, cdcStep{kind: "shell", line: line, text: cdcShellCmd.FindStringSubmatch(l)[1], want: output(line)})
			case cdcRESTCmd.MatchString(l):
				steps = append(steps, cdcStep{kind: "rest", line: line, text: heredoc(&i, "JSON"), want: output(line)})
			}
		}
	}
	// The page's shape, so that a block rewritten out of the test's
	// reach fails here instead of being skipped.
	var kinds []string
	for _, s := range steps {
		kinds = append(kinds, s.kind)
	}
	want := []string{"psql", "file", "server", "shell", "rest", "psql", "shell", "psql", "shell", "psql", "shell", "psql", "shell"}
	if !slices.Equal(kinds, want) {
		t.Fatalf("docs/cdc.md's steps are %v, want %v", kinds, want)
	}
	return steps
}

// expandHeredoc does what the shell does to an unquoted here-document
// of the page: \` and \$ lose their backslash, $NAME is the variable's
// value. A variable the test does not know fails it.
func expandHeredoc(t *testing.T, text string, vars map[string]string) string {
	t.Helper()
	const tick, dollar = "\x00tick\x00", "\x00dollar\x00"
	text = strings.NewReplacer("\\`", tick, "\\$", dollar).Replace(text)
	text = os.Expand(text, func(name string) string {
		v, ok := vars[name]
		if !ok {
			t.Fatalf("docs/cdc.md's shop.sql uses $%s, which the test does not set", name)
		}
		return v
	})
	return strings.NewReplacer(tick, "`", dollar, "$").Replace(text)
}

// TestCDCWalkthrough is issue 36's end-to-end proof, and the proof that
// docs/cdc.md works as written: on Apache Kafka, with a real PostgreSQL
// and a real Kafka Connect worker running Debezium, the real binary runs
// the page's SQL file (the connector created with CREATE SOURCE
// CONNECTOR IF NOT EXISTS, the Debezium table, an aggregation and its
// change events); each INSERT, UPDATE (of a value, of a group, of the
// primary key) and DELETE of the page gives exactly the table and
// aggregate the page shows, by pull queries through the shell and
// /query-stream, and the aggregation's topics end in the same rows. Then:
//   - a Connect worker crash re-sends the changes since the last offset
//     commit (read back from the topic), which change neither the tables
//     nor write any aggregate record;
//   - a SIGKILLed Sluice, and a cleanly stopped one, started again on
//     the same data dir, answer the same, and changes made in PostgreSQL
//     afterwards arrive.
func TestCDCWalkthrough(t *testing.T) {
	testcdc.Require(t)
	start := time.Now()
	steps := cdcDocSteps(t)
	brokers := testkafka.Brokers(t)
	adm := kadm.NewClient(testkafka.Client(t, brokers))
	// The page's names are fixed: a broker kept from an earlier run may
	// hold its topics.
	deleteTopics(t, adm, cdcTopic, cdcTotalsTopic, cdcChangesTopic)
	pg := testcdc.StartPostgres(t)
	// Offsets are flushed only when a task stops, so that a worker crash
	// surely re-sends what came after the last task restart.
	connect := testcdc.StartConnect(t, brokers, "offset.flush.interval.ms=600000")
	t.Logf("PostgreSQL and Connect ready after %s", time.Since(start).Round(time.Second))

	dir := t.TempDir()
	file, data := filepath.Join(dir, "shop.sql"), filepath.Join(dir, "data")
	svc := testkafka.Name(t, "cdc")
	serverArgs := []string{"--brokers", brokers, "--connect-url", connect.URL, "--file", file, "--data-dir", data, "--service-id", svc}
	var srv *serverProc
	var lastShell cdcStep
	restartMark := int64(-1) // the topic's end after Connect's task restart
	shells := 0
	for _, s := range steps {
		switch s.kind {
		case "psql":
			pg.Exec(t, s.text)
		case "file":
			sql := expandHeredoc(t, s.text, map[string]string{
				"PGHOST": pg.Host, "PGPORT": pg.Port, "PGUSER": pg.User, "PGPASSWORD": pg.Password, "PGDATABASE": pg.Database,
			})
			if err := os.WriteFile(file, []byte(sql), 0o644); err != nil {
				t.Fatal(err)
			}
		case "server":
			srv = startServer(t, serverArgs...)
		case "shell":
			srv.awaitShell(t, s.text, s.want, s.String())
			lastShell = s
			shells++
			if shells == 3 {
				// A task restart commits the connector's offsets and
				// sends nothing twice; the crash below re-sends what
				// comes after it (the primary key's change and the
				// delete).
				connect.RestartTask(t, cdcConnector, 0)
				connect.AwaitRunning(t, cdcConnector)
				restartMark = endOffset(t, adm, cdcTopic)
			}
		case "rest":
			srv.awaitREST(t, s.text, s.want, s.String())
		}
	}
	t.Logf("the page's steps done after %s", time.Since(start).Round(time.Second))
	srv.checkConnector(t)
	groups := []string{"CST_ORDERS", "CTAS_CUSTOMER_TOTALS", "CTAS_CUSTOMER_CHANGES"}
	for i, g := range groups {
		groups[i] = "_sluice-" + svc + "-query-" + g
	}
	awaitCaughtUp(t, adm, groups)
	srv.checkSinks(t, brokers)
	totals, changes := len(testkafka.ReadAll(t, brokers, cdcTotalsTopic)), len(testkafka.ReadAll(t, brokers, cdcChangesTopic))
	// The page's last delete wrote the last change of customer_changes.
	if got := latestChange(t, brokers, `"bob"`); got.Op != "u" || string(got.After) != `{"CUSTOMER":"bob","ORDER_COUNT":3,"TOTAL":100}` {
		t.Errorf("latest change event of bob: op %s after %s, want u after %s", got.Op, got.After, `{"CUSTOMER":"bob","ORDER_COUNT":3,"TOTAL":100}`)
	}

	// A worker crash: Connect sends again, in order, every record since
	// the task restart's offset commit.
	before := endOffset(t, adm, cdcTopic)
	if restartMark < 0 || restartMark >= before {
		t.Fatalf("no changes between the task restart (topic end %d) and the crash (topic end %d)", restartMark, before)
	}
	connect.Kill(t)
	connect.Restart(t)
	connect.AwaitRunning(t, cdcConnector)
	resent := before - restartMark
	testkafka.Await(t, 60*time.Second, fmt.Sprintf("%d records re-sent to %s", resent, cdcTopic), func() bool {
		return endOffset(t, adm, cdcTopic) >= before+resent
	})
	recs := testkafka.ReadAll(t, brokers, cdcTopic)
	var first, again []string
	for _, r := range recs[restartMark:before] {
		first = append(first, debeziumIdentity(t, r))
	}
	for _, r := range recs[before:] {
		again = append(again, debeziumIdentity(t, r))
	}
	if diff := cmp.Diff(first, again); diff != "" {
		t.Fatalf("records after the crash are not those after the task restart again (-first +again):\n%s", diff)
	}
	t.Logf("Connect re-sent %d records after its crash: %v", len(again), again)
	awaitCaughtUp(t, adm, groups)
	srv.awaitShell(t, lastShell.text, lastShell.want, "after Connect's crash")
	srv.checkSinks(t, brokers)
	checkCount(t, brokers, cdcTotalsTopic, totals, "after Connect re-sent records")
	checkCount(t, brokers, cdcChangesTopic, changes, "after Connect re-sent records")

	// Sluice killed, then stopped cleanly, each time started again on the
	// same data dir: the same answers.
	srv.kill(t)
	srv = startServer(t, serverArgs...)
	srv.awaitShell(t, lastShell.text, lastShell.want, "after Sluice's SIGKILL")
	srv.stop(t, 30*time.Second)
	srv = startServer(t, serverArgs...)
	defer srv.stop(t, 30*time.Second)
	srv.awaitShell(t, lastShell.text, lastShell.want, "after Sluice's clean stop")
	awaitCaughtUp(t, adm, groups)
	checkCount(t, brokers, cdcTotalsTopic, totals, "after Sluice's restarts")
	checkCount(t, brokers, cdcChangesTopic, changes, "after Sluice's restarts")

	// Changes made now arrive.
	pg.Exec(t, "INSERT INTO orders VALUES (6, 'dan', 10);\nUPDATE orders SET amount = 160 WHERE id = 1;\n")
	srv.awaitShell(t, lastShell.text, `+----+----------+--------+
| ID | CUSTOMER | AMOUNT |
+----+----------+--------+
| 1  | ann      | 160    |
| 3  | bob      | 20     |
| 5  | bob      | 30     |
| 6  | dan      | 10     |
| 20 | bob      | 50     |
+----+----------+--------+
+----------+-------------+-------+
| CUSTOMER | ORDER_COUNT | TOTAL |
+----------+-------------+-------+
| ann      | 1           | 160   |
| bob      | 3           | 100   |
| cat      | 0           | 0     |
| dan      | 1           | 10    |
+----------+-------------+-------+
`, "after the restarts, a change in PostgreSQL")
	awaitCaughtUp(t, adm, groups)
	srv.checkSinks(t, brokers)
	checkCount(t, brokers, cdcTotalsTopic, totals+2, "after two more changes")
	checkCount(t, brokers, cdcChangesTopic, changes+2, "after two more changes")
	t.Logf("done after %s", time.Since(start).Round(time.Second))
}

// awaitShell runs `sluice shell --server … -e statements` until it
// prints want, as the state a pull query reads commits a commit
// interval after the change.
func (s *serverProc) awaitShell(t *testing.T, statements, want, what string) {
	t.Helper()
	var got string
	deadline := time.Now().Add(45 * time.Second)
	for {
		out, errOut, code := runSluice(t, "shell", "--server", s.base, "-e", statements)
		got = out
		if code != 0 {
			got = fmt.Sprintf("exit code %d\n%s%s", code, out, errOut)
		}
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s printed, within 45 s (-want +got):\n%s", what, statements, cmp.Diff(want, got))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// awaitREST POSTs body to /query-stream until it answers want, the
// queryId's number aside (the page shows it as …).
func (s *serverProc) awaitREST(t *testing.T, body, want, what string) {
	t.Helper()
	var got string
	deadline := time.Now().Add(45 * time.Second)
	for {
		code, out := s.post(t, "/query-stream", body)
		got = fmt.Sprintf("%d %s", code, cdcQueryID.ReplaceAllString(out, `"queryId":"${1}…"`))
		if got == "200 "+want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: /query-stream %s answered, within 45 s (-want +got):\n%s", what, body, cmp.Diff("200 "+want, got))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// checkConnector asks /ksql to DESCRIBE the page's connector until it is
// RUNNING with its task and names the topic Debezium writes.
func (s *serverProc) checkConnector(t *testing.T) {
	t.Helper()
	var last string
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, body := s.post(t, "/ksql", `{"ksql":"DESCRIBE CONNECTOR shop;"}`)
		last = fmt.Sprintf("%d %s", code, body)
		var got []ksqlwire.ConnectorDescription
		if code == 200 && json.Unmarshal([]byte(body), &got) == nil && len(got) == 1 {
			d := got[0]
			if d.Type == "connector_description" && d.ConnectorClass == "io.debezium.connector.postgresql.PostgresConnector" &&
				d.Status.Name == cdcConnector && d.Status.Connector.State == "RUNNING" &&
				len(d.Status.Tasks) == 1 && d.Status.Tasks[0].State == "RUNNING" &&
				slices.Equal(d.Topics, []string{cdcTopic}) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("DESCRIBE CONNECTOR shop never showed SHOP and its task RUNNING with topics [%s]; last: %s", cdcTopic, last)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// checkSinks compares the latest record of each key of the aggregation's
// topic, and the after image of the latest change event of each key of
// its change events, with the aggregate a pull query answers.
func (s *serverProc) checkSinks(t *testing.T, brokers string) {
	t.Helper()
	code, body := s.post(t, "/query-stream", `{"sql":"SELECT * FROM customer_totals;"}`)
	lines := strings.Split(strings.TrimSpace(body), "\n")
	if code != 200 || len(lines) < 2 {
		t.Fatalf("pull query on customer_totals: %d %s", code, body)
	}
	wantTotals, wantChanges := map[string]string{}, map[string]string{}
	for _, l := range lines[1:] {
		var row struct {
			Customer   string
			Count, Sum int64
		}
		var cells []json.RawMessage
		if err := json.Unmarshal([]byte(l), &cells); err != nil || len(cells) != 3 {
			t.Fatalf("row %s: %v", l, err)
		}
		for i, dst := range []any{&row.Customer, &row.Count, &row.Sum} {
			if err := json.Unmarshal(cells[i], dst); err != nil {
				t.Fatalf("row %s: %v", l, err)
			}
		}
		key := string(cells[0])
		wantTotals[key] = fmt.Sprintf(`{"ORDER_COUNT":%d,"TOTAL":%d}`, row.Count, row.Sum)
		wantChanges[key] = fmt.Sprintf(`{"CUSTOMER":%s,"ORDER_COUNT":%d,"TOTAL":%d}`, cells[0], row.Count, row.Sum)
	}
	gotTotals := map[string]string{}
	for _, r := range testkafka.ReadAll(t, brokers, cdcTotalsTopic) {
		gotTotals[string(r.Key)] = string(r.Value)
	}
	if diff := cmp.Diff(wantTotals, gotTotals); diff != "" {
		t.Errorf("latest records of %s (-pull query +topic):\n%s", cdcTotalsTopic, diff)
	}
	gotChanges := map[string]string{}
	for _, r := range testkafka.ReadAll(t, brokers, cdcChangesTopic) {
		if r.Value == nil {
			delete(gotChanges, string(r.Key))
			continue
		}
		gotChanges[string(r.Key)] = string(decodeChange(t, r).After)
	}
	if diff := cmp.Diff(wantChanges, gotChanges); diff != "" {
		t.Errorf("after images of the latest change events of %s (-pull query +topic):\n%s", cdcChangesTopic, diff)
	}
}

// sluiceChange is the part of a change event Sluice writes that the
// test reads.
type sluiceChange struct {
	Op     string          `json:"op"`
	Before json.RawMessage `json:"before"`
	After  json.RawMessage `json:"after"`
}

func decodeChange(t *testing.T, r *kgo.Record) sluiceChange {
	t.Helper()
	var c sluiceChange
	if err := json.Unmarshal(r.Value, &c); err != nil {
		t.Fatalf("%s/%d@%d: %q: %v", r.Topic, r.Partition, r.Offset, r.Value, err)
	}
	return c
}

// latestChange is the latest change event of key in customer_changes.
func latestChange(t *testing.T, brokers, key string) sluiceChange {
	t.Helper()
	var last sluiceChange
	for _, r := range testkafka.ReadAll(t, brokers, cdcChangesTopic) {
		if string(r.Key) == key && r.Value != nil {
			last = decodeChange(t, r)
		}
	}
	return last
}

// debeziumIdentity names a record of Debezium's topic by what a re-sent
// copy repeats: its key, and its value's op, source position and row
// images (the envelope's own ts_ms is the time it was sent).
func debeziumIdentity(t *testing.T, r *kgo.Record) string {
	t.Helper()
	unwrap := func(b []byte) []byte {
		var env struct{ Schema, Payload json.RawMessage }
		if json.Unmarshal(b, &env) == nil && env.Schema != nil && env.Payload != nil {
			return env.Payload
		}
		return b
	}
	key := string(unwrap(r.Key))
	if r.Value == nil {
		return key + " tombstone"
	}
	var v struct {
		Op     string          `json:"op"`
		Before json.RawMessage `json:"before"`
		After  json.RawMessage `json:"after"`
		Source struct {
			LSN  json.Number `json:"lsn"`
			TxID json.Number `json:"txId"`
		} `json:"source"`
	}
	if err := json.Unmarshal(unwrap(r.Value), &v); err != nil {
		t.Fatalf("%s/%d@%d: %q: %v", r.Topic, r.Partition, r.Offset, r.Value, err)
	}
	return fmt.Sprintf("%s op=%s lsn=%s tx=%s before=%s after=%s", key, v.Op, v.Source.LSN, v.Source.TxID, v.Before, v.After)
}

// checkCount requires the topic to hold n records.
func checkCount(t *testing.T, brokers, topic string, n int, when string) {
	t.Helper()
	if recs := testkafka.ReadAll(t, brokers, topic); len(recs) != n {
		var vals []string
		for _, r := range recs {
			vals = append(vals, fmt.Sprintf("%s=%s", r.Key, r.Value))
		}
		t.Errorf("%s: %s holds %d records, want %d: %v", when, topic, len(recs), n, vals)
	}
}

// endOffset is the end offset of partition 0 of a one-partition topic.
func endOffset(t *testing.T, adm *kadm.Client, topic string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		t.Fatalf("end offsets of %s: %v", topic, err)
	}
	o, ok := ends.Lookup(topic, 0)
	if !ok {
		t.Fatalf("end offsets of %s: no partition 0", topic)
	}
	return o.Offset
}

// awaitCaughtUp waits until each consumer group has committed the end of
// every partition it reads: the queries have processed, written and
// committed everything there is.
func awaitCaughtUp(t *testing.T, adm *kadm.Client, groups []string) {
	t.Helper()
	var last string
	deadline := time.Now().Add(60 * time.Second)
	for !caughtUp(adm, groups, &last) {
		if time.Now().After(deadline) {
			t.Fatalf("the queries' consumer groups not caught up within 60 s: %s", last)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// caughtUp reports whether every partition each group has committed on is
// at its end; last says what is not.
func caughtUp(adm *kadm.Client, groups []string, last *string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	lags, err := adm.Lag(ctx, groups...)
	if err != nil {
		*last = err.Error()
		return false
	}
	for _, g := range groups {
		l, ok := lags[g]
		if !ok || l.Error() != nil || len(l.Lag) == 0 {
			*last = fmt.Sprintf("%s: no lag (%v)", g, l.Error())
			return false
		}
		for topic, parts := range l.Lag {
			for p, pl := range parts {
				if pl.Err != nil || pl.Lag != 0 {
					*last = fmt.Sprintf("%s on %s/%d: lag %d (%v)", g, topic, p, pl.Lag, pl.Err)
					return false
				}
			}
		}
	}
	return true
}

// deleteTopics deletes the topics that exist and waits until they are
// gone, so that they can be created afresh.
func deleteTopics(t *testing.T, adm *kadm.Client, topics ...string) {
	t.Helper()
	existing := func() []string {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		listed, err := adm.ListTopics(ctx, topics...)
		if err != nil {
			t.Fatalf("list topics: %v", err)
		}
		var names []string
		for _, d := range listed.Sorted() {
			if d.Err == nil {
				names = append(names, d.Topic)
			}
		}
		return names
	}
	names := existing()
	if len(names) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := adm.DeleteTopics(ctx, names...); err != nil {
		t.Fatalf("delete topics %v: %v", names, err)
	}
	testkafka.Await(t, 30*time.Second, fmt.Sprintf("topics %v deleted", names), func() bool { return len(existing()) == 0 })
}

// TestCDCPseudoColumnsPull: a Debezium table's pseudo columns describe
// the change that made the current row in the queries that read the
// table's changes, so a push query answers the inserted row's op c, the
// database's time and its source position; a pull query, which reads the
// table's store of rows, refuses them as it refuses ROWPARTITION. The
// server answers both and stays up.
func TestCDCPseudoColumnsPull(t *testing.T) {
	brokers := testkafka.Brokers(t)
	topic := testkafka.Name(t, "accounts")
	srv := startServer(t, "--brokers", brokers, "--data-dir", t.TempDir(), "--service-id", testkafka.Name(t, "svc"))
	defer srv.stop(t, 30*time.Second)
	create := `{"ksql":"CREATE SOURCE TABLE accounts (id INT PRIMARY KEY, owner STRING, balance INT) WITH (KAFKA_TOPIC='` + topic +
		`', KEY_FORMAT='JSON', VALUE_FORMAT='JSON', VALUE_ENVELOPE='DEBEZIUM', PARTITIONS=1);"}`
	if code, body := srv.post(t, "/ksql", create); code != 200 {
		t.Fatalf("create: %d %s", code, body)
	}
	sample := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(repoRoot, "format", "testdata", "debezium", "plain", name))
		if err != nil {
			t.Fatal(err)
		}
		return []byte(strings.TrimSpace(string(b)))
	}
	// Debezium's insert of (3, 'cat', 10), as JsonConverter wrote it
	// without schemas: source.ts_ms 1796537292994, lsn 26389328.
	testkafka.Produce(t, brokers, &kgo.Record{Topic: topic, Key: sample("c.key.json"), Value: sample("c.value.json")})
	srv.pullUntil(t, "SELECT * FROM accounts;", `[3,"cat",10]`)
	code, body := srv.post(t, "/query-stream", `{"sql":"SELECT id, CDC_OP, CDC_TS_MS, CDC_SOURCE['lsn'] AS lsn FROM accounts EMIT CHANGES LIMIT 1;",`+
		`"properties":{"auto.offset.reset":"earliest"}}`)
	want := `{"queryId":"transient_ACCOUNTS_…","columnNames":["ID","CDC_OP","CDC_TS_MS","LSN"],"columnTypes":["INTEGER","STRING","BIGINT","STRING"]}` + "\n" +
		`[3,"c",1796537292994,"26389328"]` + "\n"
	if got := cdcQueryID.ReplaceAllString(body, `"queryId":"${1}…"`); code != 200 || got != want {
		t.Errorf("push query of the pseudo columns: %d (-want +got):\n%s", code, cmp.Diff(want, got))
	}
	code, body = srv.post(t, "/query-stream", `{"sql":"SELECT id, CDC_OP, CDC_SOURCE['lsn'] AS lsn FROM accounts;"}`)
	if want := "Pull queries don't support the following columns in SELECT clauses: `CDC_OP`, `CDC_SOURCE`"; code != 400 || !strings.Contains(body, want) {
		t.Errorf("pull query of the pseudo columns: %d %s, want 400 with %q", code, body, want)
	}
	if code, body := srv.post(t, "/ksql", `{"ksql":"SHOW TABLES;"}`); code != 200 {
		t.Errorf("after the pull query the server answers %d %s", code, body)
	}
}
