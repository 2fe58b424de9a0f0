package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/internal/netns"
	"github.com/sluice-sql/sluice/internal/testkafka"
)

// startServerOn starts `sluice server` in host h's network namespace,
// listening on h's address (which it advertises to the others).
func startServerOn(t *testing.T, h *netns.Host, args ...string) *serverProc {
	t.Helper()
	argv := append([]string{"server", "--listen", h.IP() + ":8088"}, args...)
	return waitServer(t, startCmd(t, h.Command(sluiceBin, argv...)))
}

// standbyReads are the pull query properties of a client that accepts an
// answer from a standby when an owner cannot answer (ksqlDB's name).
const standbyReads = `{"ksql.query.pull.enable.standby.reads":"true"}`

// pulled is one answer of a full pull query on the table of counts.
type pulled struct {
	code   int
	counts map[string]int64 // by page, when code is 200
	body   string
	took   time.Duration
	// standbyOf names the partitions a standby answered for.
	standbyOf string
}

// pullCounts runs a full pull query on the table of counts, accepting
// answers from standbys.
func (s *serverProc) pullCounts(t *testing.T, table string) pulled {
	t.Helper()
	start := time.Now()
	code, hdr, body := s.authed(t, "POST", "/query-stream", `{"sql":"SELECT * FROM `+table+`;","properties":`+standbyReads+`}`)
	p := pulled{code: code, body: body, took: time.Since(start), standbyOf: hdr.Get("X-Sluice-Standby-Of")}
	if code != 200 {
		return p
	}
	counts := map[string]int64{}
	lines := strings.Split(strings.TrimSpace(body), "\n")
	for _, l := range lines[1:] {
		var row []any
		if err := json.Unmarshal([]byte(l), &row); err != nil || len(row) != 2 {
			return p
		}
		page, _ := row[0].(string)
		n, _ := row[1].(float64)
		counts[page] = int64(n)
	}
	p.counts = counts
	return p
}

// cluster3CutOff is fault (3) of docs/faults.md: three `sluice server`
// instances of one service, each on a host of its own (a network
// namespace), count clicks per page under exactly-once with one standby
// per partition, while clicks keep arriving. One instance's host is cut
// off the network for longer than the consumer session timeout (10 s).
// The other two take its partitions; every pull query on them in the
// meantime answers 200 with every page and no count above what was
// produced (from a standby while the owner cannot answer), and once the
// input stops, the exact counts. When the host returns, the instance
// rejoins and owns partitions again, and it wrote nothing stale: the
// table's topic, read committed, holds for each page a count sequence
// that never goes down and ends at the exact count.
func cluster3CutOff(t *testing.T, c *testkafka.Cluster, hosts *netns.Net) {
	brokers := c.Brokers
	svc := testkafka.Name(t, "c3cut_svc")
	topic, table := testkafka.Name(t, "c3cut_clicks"), testkafka.Name(t, "c3cut_counts")
	query := "CTAS_" + table
	const parts, pages = 6, 12
	repart := "_sluice-" + svc + "-query-" + query + "-Aggregate-GroupBy-repartition"
	args := serverArgs(t, brokers, svc)
	if os.Getenv("SLUICE_LOG_LEVEL") == "" {
		t.Setenv("SLUICE_LOG_LEVEL", "info")
	}
	var servers []*serverProc
	var cutHost *netns.Host
	for _, name := range []string{"a", "b", "c"} {
		h := hosts.Add(t, name)
		servers = append(servers, startServerOn(t, h, args()...))
		cutHost = h
	}
	a, b, cut := servers[0], servers[1], servers[2]
	defer func() {
		if t.Failed() {
			adm := kadm.NewClient(testkafka.Client(t, brokers))
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			for _, tp := range []string{topic, repart, table} {
				ends, _ := adm.ListEndOffsets(ctx, tp)
				stable, _ := adm.ListCommittedOffsets(ctx, tp)
				var parts []string
				ends.Each(func(o kadm.ListedOffset) {
					st, _ := stable.Lookup(tp, o.Partition)
					parts = append(parts, fmt.Sprintf("%d: end %d stable %d", o.Partition, o.Offset, st.Offset))
				})
				sort.Strings(parts)
				t.Logf("%s: %s", tp, strings.Join(parts, ", "))
			}
			if offs, err := adm.FetchOffsets(ctx, "_sluice-"+svc+"-query-"+query); err == nil {
				t.Logf("group offsets: %v", offs)
			}
			if txs, err := adm.ListTransactions(ctx, nil, nil); err == nil {
				for _, tx := range txs.Sorted() {
					t.Logf("transaction %s: %s", tx.TxnID, tx.State)
				}
			}
			for i, s := range servers {
				log := filepath.Join(os.TempDir(), fmt.Sprintf("%s-%d.log", svc, i))
				_ = os.WriteFile(log, []byte(s.stderr.String()), 0o644)
				t.Logf("%s stderr (all of it in %s), tail:\n%s", s.base, log, tail(s.stderr.String(), 20))
			}
		}
	}()
	ddl := fmt.Sprintf("CREATE STREAM %s (user VARCHAR KEY, page VARCHAR) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON', PARTITIONS=%d); "+
		"CREATE TABLE %s AS SELECT page, COUNT(*) AS n FROM %s GROUP BY page;", topic, topic, parts, table, topic)
	props := `{"auto.offset.reset":"earliest","processing.guarantee":"exactly_once_v2","num.standby.replicas":"1"}`
	if code, _, body := a.authed(t, "POST", "/ksql", `{"ksql":"`+ddl+`","streamsProperties":`+props+`}`); code != 200 {
		t.Fatalf("create: %d %s", code, body)
	}

	// Clicks arrive all along, about 100 a second, until stopped.
	var mu sync.Mutex
	produced := map[string]int64{}
	snapshot := func() map[string]int64 {
		mu.Lock()
		defer mu.Unlock()
		m := make(map[string]int64, len(produced))
		for k, v := range produced {
			m[k] = v
		}
		return m
	}
	prod := testkafka.Client(t, brokers)
	stop := make(chan struct{})
	prodDone := make(chan error, 1)
	go func() {
		rng := rand.New(rand.NewPCG(23, 3))
		for i := 0; ; i++ {
			select {
			case <-stop:
				prodDone <- nil
				return
			case <-time.After(10 * time.Millisecond):
			}
			page := fmt.Sprintf("page-%02d", rng.IntN(pages))
			rec := &kgo.Record{Topic: topic, Key: fmt.Appendf(nil, "user-%d", rng.IntN(1000)), Value: fmt.Appendf(nil, `{"PAGE":%q}`, page)}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			err := prod.ProduceSync(ctx, rec).FirstErr()
			cancel()
			if err != nil {
				prodDone <- fmt.Errorf("produce click %d: %w", i, err)
				return
			}
			mu.Lock()
			produced[page]++
			mu.Unlock()
		}
	}()
	stopProducing := func() {
		close(stop)
		if err := <-prodDone; err != nil {
			t.Fatal(err)
		}
	}

	// Every instance owns some partitions and each has a standby.
	a.owners(t, query, []string{repart, topic}, parts, servers)
	a.waitStandbys(t, query, parts, servers)
	// Every page counted before the cut.
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if p := a.pullCounts(t, table); p.code == 200 && len(p.counts) == pages {
			break
		}
	}

	// Cut one host off. Until the group moves its partitions, the
	// others answer them from their standbys; after, from the tasks
	// they took over.
	cutAt := time.Now()
	cutHost.CutOff(t)
	t.Logf("cut off %s", cut.base)
	var answered, fromStandby int
	check := func(s *serverProc) {
		want := snapshot()
		p := s.pullCounts(t, table)
		answered++
		since := time.Since(cutAt).Round(100 * time.Millisecond)
		if p.code != 200 {
			t.Errorf("%s, %s after the cut: pull query answered %d %s", s.base, since, p.code, p.body)
			return
		}
		if p.standbyOf != "" {
			fromStandby++
		}
		if p.took > 5*time.Second {
			t.Errorf("%s, %s after the cut: pull query took %s", s.base, since, p.took.Round(100*time.Millisecond))
		}
		if len(p.counts) != pages {
			t.Errorf("%s, %s after the cut: %d pages, want %d: %s", s.base, since, len(p.counts), pages, p.body)
		}
		for page, n := range p.counts {
			// +1: a click the table counted before the producer's tally.
			if n > want[page]+1 || n <= 0 {
				t.Errorf("%s, %s after the cut: %s counted %d, %d produced", s.base, since, page, n, want[page])
			}
		}
	}
	var tookOver time.Duration
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline) && tookOver == 0; {
		for _, s := range []*serverProc{a, b} {
			check(s)
		}
		if a.ownersNow(t, query, []string{repart, topic}, parts, []*serverProc{a, b}) {
			tookOver = time.Since(cutAt)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if tookOver == 0 {
		t.Fatalf("the other instances never took the partitions of %s", cut.base)
	}
	t.Logf("resume after cut-off: the others own every partition %s after the cut (%d pull queries answered meanwhile, %d from a standby)",
		tookOver.Round(100*time.Millisecond), answered, fromStandby)

	// Exact once the input stops.
	time.Sleep(2 * time.Second)
	stopProducing()
	final := snapshot()
	var rows []string
	for page, n := range final {
		rows = append(rows, fmt.Sprintf(`[%q,%d]`, page, n))
	}
	sort.Strings(rows)
	for _, s := range []*serverProc{a, b} {
		s.pullRows(t, "SELECT * FROM "+table+";", rows)
	}
	t.Logf("exact on the other two %s after the cut", time.Since(cutAt).Round(100*time.Millisecond))

	// The host returns: the instance rejoins and owns partitions again.
	back := time.Now()
	cutHost.Reconnect(t)
	a.owners(t, query, []string{repart, topic}, parts, servers)
	t.Logf("resume after reconnect: %s owns partitions again %s after it came back", cut.base, time.Since(back).Round(100*time.Millisecond))
	cut.pullRows(t, "SELECT * FROM "+table+";", rows)

	// Nothing stale was committed: per page, the counts the table's
	// topic holds (read committed) never go down, and end exact.
	cl := testkafka.Client(t, brokers, kgo.ConsumeTopics(table), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	last := map[string]int64{}
	regressions := 0
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		fs := cl.PollFetches(ctx)
		cancel()
		fs.EachRecord(func(r *kgo.Record) {
			var v struct {
				N int64 `json:"N"`
			}
			if err := json.Unmarshal(r.Value, &v); err != nil {
				t.Errorf("%s record %q at %d/%d: %v", table, r.Value, r.Partition, r.Offset, err)
				return
			}
			if v.N < last[string(r.Key)] {
				regressions++
				t.Errorf("%s: page %s went from %d to %d at %d/%d: a stale result was committed", table, r.Key, last[string(r.Key)], v.N, r.Partition, r.Offset)
			}
			last[string(r.Key)] = v.N
		})
		if fmt.Sprint(last) == fmt.Sprint(final) {
			break
		}
	}
	if fmt.Sprint(last) != fmt.Sprint(final) {
		t.Errorf("%s ends at %v, want %v", table, last, final)
	}
	t.Logf("%s: %d pages, %d regressions", table, len(last), regressions)
}
