package engine_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/internal/testkafka"
)

// TestScaleWarnings runs queries over skewed and even input on the
// embedded broker and checks the warnings DESCRIBE EXTENDED and EXPLAIN
// give about scaling out: a key carrying more than sluice.hot.key.share
// of a query's records (the input key of a stateless query, the group key
// after a repartition), and fewer input partitions than live instances.
func TestScaleWarnings(t *testing.T) {
	brokers := testkafka.Brokers(t)
	bookings, visits := testkafka.Name(t, "bookings"), testkafka.Name(t, "visits")
	testkafka.CreateTopic(t, brokers, bookings, 4)
	testkafka.CreateTopic(t, brokers, visits, 4)
	const n = 1250
	var recs []*kgo.Record
	for i := range n {
		// 16 of every 25 bookings are at the ritz: 64%.
		hotel := fmt.Sprintf("h%03d", i)
		if i%25 < 16 {
			hotel = "ritz"
		}
		recs = append(recs, &kgo.Record{Topic: bookings, Key: []byte(hotel), Value: fmt.Appendf(nil, `{"price":%d}`, i)})
		// Every visit has its own user; 20 of every 25 are of home: 80%.
		page := fmt.Sprintf("p%02d", i%50)
		if i%25 < 20 {
			page = "home"
		}
		recs = append(recs, &kgo.Record{Topic: visits, Key: fmt.Appendf(nil, "u%04d", i), Value: fmt.Appendf(nil, `{"page":%q}`, page)})
	}
	testkafka.Produce(t, brokers, recs...)

	var live atomic.Int64
	live.Store(1)
	e, err := engine.Open(context.Background(), engine.Config{
		ConnOpts:      []kgo.Opt{kgo.SeedBrokers(strings.Split(brokers, ",")...)},
		DataDir:       t.TempDir(),
		ServiceID:     testkafka.Name(t, "svc"),
		Properties:    map[string]string{"auto.offset.reset": "earliest", "commit.interval.ms": "100"},
		Log:           quiet,
		LiveInstances: func() int { return int(live.Load()) },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer closeEngine(t, e)
	execute(t, e, fmt.Sprintf(`
CREATE STREAM bookings (hotel VARCHAR KEY, price INT) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON');
CREATE STREAM visits (user VARCHAR KEY, page VARCHAR) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON');
CREATE STREAM cheap AS SELECT * FROM bookings WHERE price < 100000;
CREATE TABLE page_views AS SELECT page, COUNT(*) AS n FROM visits GROUP BY page;
CREATE STREAM visits_copy AS SELECT * FROM visits;`, bookings, visits))
	// Each query reads every record once per sub-topology.
	want := map[string]int64{"CSAS_CHEAP": n, "CTAS_PAGE_VIEWS": 2 * n, "CSAS_VISITS_COPY": n}
	testkafka.Await(t, 60*time.Second, "every record read", func() bool {
		for _, q := range e.Queries() {
			if q.Metrics.RecordsIn.Load() != want[q.ID] {
				return false
			}
		}
		return len(e.Queries()) == len(want)
	})

	const (
		ritz  = "WARNING: key 'ritz' carries 64% of the records of CSAS_CHEAP on this instance: its partition's task is the bottleneck; adding instances will not help"
		home  = "WARNING: key 'home' carries 80% of the records of CTAS_PAGE_VIEWS on this instance: its partition's task is the bottleneck; adding instances will not help"
		parts = "WARNING: CSAS_VISITS_COPY has fewer input partitions than the service has instances; adding instances will not help: 4 partitions, 6 instances"
	)
	tests := []struct {
		name      string
		stmt      string
		instances int64
		props     map[string]string
		want      []string
	}{
		{"hot input key", "DESCRIBE cheap EXTENDED;", 1, nil, []string{ritz}},
		{"hot input key, EXPLAIN", "EXPLAIN CSAS_CHEAP;", 1, nil, []string{ritz}},
		{"hot group key after the repartition", "EXPLAIN CTAS_PAGE_VIEWS;", 1, nil, []string{home}},
		{"hot group key, as many instances as partitions", "DESCRIBE page_views EXTENDED;", 4, nil, []string{home}},
		{"even keys", "DESCRIBE visits_copy EXTENDED;", 1, nil, nil},
		{"more instances than partitions", "DESCRIBE visits_copy EXTENDED;", 6, nil, []string{parts}},
		{"share above the key's", "EXPLAIN CSAS_CHEAP;", 1, map[string]string{engine.HotKeyShareProperty: "0.7"}, nil},
		{"share below the key's", "EXPLAIN CSAS_CHEAP;", 1, map[string]string{engine.HotKeyShareProperty: "0.5"}, []string{ritz}},
		{"not extended", "DESCRIBE cheap;", 1, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			live.Store(tt.instances)
			res, err := e.ExecuteWith(context.Background(), tt.stmt, tt.props)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			switch d := res[0].Entity.(type) {
			case *engine.SourceDescription:
				got = d.Warnings
			case *engine.QueryDescription:
				got = d.Warnings
			default:
				t.Fatalf("entity %T", d)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
			// The text ends with the same lines.
			text := strings.TrimSuffix(shown(res[0]), "\n")
			lines := strings.Split(text, "\n")
			var tailWarnings []string
			for i := len(lines) - 1; i >= 0 && strings.HasPrefix(lines[i], "WARNING: "); i-- {
				tailWarnings = append([]string{lines[i]}, tailWarnings...)
			}
			if diff := cmp.Diff(tt.want, tailWarnings); diff != "" {
				t.Errorf("warnings at the end of the text (-want +got):\n%s\ntext:\n%s", diff, shown(res[0]))
			}
		})
	}

	if _, err := e.ExecuteWith(context.Background(), "EXPLAIN CSAS_CHEAP;", map[string]string{engine.HotKeyShareProperty: "2"}); err == nil ||
		err.Error() != `explain CSAS_CHEAP: invalid statement: sluice.hot.key.share is "2": want a share above 0 and at most 1` {
		t.Errorf("share 2: %v", err)
	}
}
