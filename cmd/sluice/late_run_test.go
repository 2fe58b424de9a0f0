package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

// TestRunLateRecords runs a windowed count under `sluice run
// --log-level info` over records of which two arrive after their windows'
// grace period. The first drop is logged once at INFO with its topic,
// partition, offset, how late it was and the grace; the second is only
// counted; on exit one line sums the query's drops. franz-go's own INFO
// lines (group joins, assignments) are at DEBUG, so every INFO line is
// Sluice's.
func TestRunLateRecords(t *testing.T) {
	brokers := testkafka.Brokers(t)
	in, out := testkafka.Name(t, "late_in"), testkafka.Name(t, "late_counts")
	testkafka.CreateTopic(t, brokers, in, 1)
	rec := func(ts int64) *kgo.Record {
		return &kgo.Record{Topic: in, Key: []byte("a"), Value: []byte(`{"v":1}`), Timestamp: time.UnixMilli(ts)}
	}
	// Stream time reaches 200 s; the records at 150 s and 120 s are 50 s
	// and 80 s behind it, their windows closed 5 s after they ended.
	testkafka.Produce(t, brokers, rec(100_000), rec(200_000), rec(150_000), rec(120_000), rec(201_000))
	file := filepath.Join(t.TempDir(), "late.sql")
	if err := os.WriteFile(file, []byte(fmt.Sprintf(`SET 'auto.offset.reset'='earliest';
CREATE STREAM late_in (id VARCHAR KEY, v INT) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON');
CREATE TABLE late_counts WITH (KAFKA_TOPIC='%s') AS
  SELECT id, COUNT(*) AS n FROM late_in WINDOW TUMBLING (SIZE 10 SECONDS, GRACE PERIOD 5 SECONDS) GROUP BY id;
`, in, out)), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startSluice(t, "run", file, "--brokers", brokers, "--data-dir", t.TempDir(), "--service-id", testkafka.Name(t, "svc"), "--log-level", "info")
	// Three counts: the windows at 100 s and 200 s, then 200 s again.
	testkafka.Await(t, time.Minute, "three counts in "+out, func() bool { return len(testkafka.ReadAll(t, brokers, out)) == 3 })
	p.stop(t, 30*time.Second)

	stderr := p.stderr.String()
	first := regexp.MustCompile(`^time=\S+ level=INFO msg="late record dropped: it arrived after its windows' grace period; later ones are only counted" ` +
		`query=CTAS_LATE_COUNTS topic=` + regexp.QuoteMeta(in) + ` partition=0 offset=2 late_by=50s grace=5s$`)
	var late, summary, infos []string
	for _, line := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
		switch {
		case strings.Contains(line, `msg="late record`):
			late = append(late, line)
		case strings.HasPrefix(line, "query ") && strings.Contains(line, " dropped "):
			summary = append(summary, line)
		case strings.Contains(line, "level=INFO"):
			infos = append(infos, line)
		}
	}
	if len(late) != 1 || !first.MatchString(late[0]) {
		t.Errorf("late-record lines %q, want one matching %s", late, first)
	}
	if want := []string{"query CTAS_LATE_COUNTS dropped 2 late records (after the grace period)"}; !slices.Equal(summary, want) {
		t.Errorf("summary lines %q, want %q", summary, want)
	}
	// Sluice's own INFO lines name the query; franz-go's never do.
	for _, line := range infos {
		if !strings.Contains(line, " query=") {
			t.Errorf("INFO line not Sluice's: %s", line)
		}
	}
	if t.Failed() {
		t.Logf("stderr:\n%s", stderr)
	}
}
