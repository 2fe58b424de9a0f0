package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	sexec "github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/internal/testkafka"
)

// standbys reads /clusterStatus of s until every partition 0…n-1 of
// topic in query has a standby on an alive instance other than its owner
// (owner: partition → URL) and returns partition → standby URL.
func (s *serverProc) standbys(t *testing.T, query, topic string, n int32, owner map[int32]string) map[int32]string {
	t.Helper()
	var last string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		code, _, body := s.authed(t, "GET", "/clusterStatus", "")
		last = body
		if code != 200 {
			continue
		}
		var cs struct {
			ClusterStatus map[string]struct {
				HostAlive             bool   `json:"hostAlive"`
				URL                   string `json:"url"`
				ActiveStandbyPerQuery map[string]struct {
					StandByPartitions []struct {
						Topic     string `json:"topic"`
						Partition int32  `json:"partition"`
					} `json:"standByPartitions"`
				} `json:"activeStandbyPerQuery"`
			} `json:"clusterStatus"`
		}
		if err := json.Unmarshal([]byte(body), &cs); err != nil {
			t.Fatalf("clusterStatus: %v: %s", err, body)
		}
		standby := map[int32]string{}
		for _, h := range cs.ClusterStatus {
			if !h.HostAlive {
				continue
			}
			for _, p := range h.ActiveStandbyPerQuery[query].StandByPartitions {
				if p.Topic == topic && owner[p.Partition] != h.URL {
					standby[p.Partition] = h.URL
				}
			}
		}
		if len(standby) == int(n) {
			return standby
		}
	}
	t.Fatalf("%s /clusterStatus never showed a standby for each of the %d partitions of %s; last:\n%s", s.base, n, topic, last)
	return nil
}

// pullOnce sends one pull query with properties and returns status,
// headers, rows (sorted, without the header line; the body when not 200)
// and how long the answer took. A client timeout gives status 0.
func (s *serverProc) pullOnce(t *testing.T, sql string, props map[string]string, hdr map[string]string, timeout time.Duration) (int, http.Header, []string, time.Duration) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"sql": sql, "properties": props})
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "POST", s.base+"/query-stream", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("alice", "secret")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, []string{err.Error()}, time.Since(start)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	took := time.Since(start)
	if err != nil {
		return 0, nil, []string{err.Error()}, took
	}
	if resp.StatusCode != 200 {
		return resp.StatusCode, resp.Header, []string{string(b)}, took
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	rows := append([]string{}, lines[1:]...)
	sort.Strings(rows)
	return resp.StatusCode, resp.Header, rows, took
}

// TestServerClusterStandbyReads runs three `sluice server` processes of
// one service counting clicks per page with num.standby.replicas=1, so
// every partition of the count's state has an owner and a standby on
// another instance. Each standby's copy answers exactly when asked
// directly (X-Sluice-Standby). Then one instance is stopped with
// SIGSTOP: it neither answers HTTP nor heartbeats, like a host cut off,
// and the group has not rebalanced yet. With
// ksql.query.pull.enable.standby.reads=true the two others answer every
// key exactly within 5 s each, the stopped one's partitions from their
// standbys (X-Sluice-Standby-Of names them); without it, a key of the
// stopped instance gets a 503 naming its partition.
func TestServerClusterStandbyReads(t *testing.T) {
	began := time.Now()
	brokers := testkafka.Brokers(t)
	svc := testkafka.Name(t, "svc")
	topic := testkafka.Name(t, "clicks")
	const query, parts = "CTAS_PAGE_COUNTS", 4
	repart := "_sluice-" + svc + "-query-" + query + "-Aggregate-GroupBy-repartition"

	pages := keysPerPartition(repart, "page-%d", parts, 2)
	partitionOf := func(page string) int32 { return sexec.KeyPartition(repart, []byte(page), parts) }

	args := serverArgs(t, brokers, svc)
	a := startServer(t, args()...)
	defer a.stop(t, 30*time.Second)
	b := startServer(t, args()...)
	defer b.stop(t, 30*time.Second)
	c := startServer(t, args()...)
	all := []*serverProc{a, b, c}
	byURL := map[string]*serverProc{a.base: a, b.base: b, c.base: c}

	var ksql strings.Builder
	fmt.Fprintf(&ksql, "CREATE STREAM clicks (user VARCHAR KEY, page VARCHAR) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON', PARTITIONS=%d); ", topic, parts)
	ksql.WriteString("CREATE TABLE page_counts AS SELECT page, COUNT(*) AS n FROM clicks GROUP BY page; ")
	counts := map[string]int{}
	for i, page := range pages {
		for j := 0; j <= i; j++ {
			fmt.Fprintf(&ksql, "INSERT INTO clicks VALUES ('user-%d-%d', '%s'); ", i, j, page)
			counts[page]++
		}
	}
	if code, _, body := a.authed(t, "POST", "/ksql", `{"ksql":"`+ksql.String()+`","streamsProperties":{"auto.offset.reset":"earliest","num.standby.replicas":"1"}}`); code != 200 {
		t.Fatalf("create: %d %s", code, body)
	}
	row := func(page string) string { return fmt.Sprintf(`[%q,%d]`, page, counts[page]) }
	rowsOf := func(part int32) []string {
		var rows []string
		for _, p := range pages {
			if part < 0 || partitionOf(p) == part {
				rows = append(rows, row(p))
			}
		}
		sort.Strings(rows)
		return rows
	}

	owner := a.owners(t, query, []string{repart, topic}, parts, all)
	a.pullRows(t, "SELECT * FROM page_counts;", rowsOf(-1))
	standby := a.standbys(t, query, repart, parts, owner)
	t.Logf("owners %v, standbys %v", owner, standby)

	// Each standby holds its partition's exact counts once caught up.
	standbyProps := map[string]string{"ksql.query.pull.enable.standby.reads": "true"}
	for p := int32(0); p < parts; p++ {
		s := byURL[standby[p]]
		var rows []string
		var code int
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			code, _, rows, _ = s.pullOnce(t, "SELECT * FROM page_counts;", standbyProps,
				map[string]string{"X-Sluice-Forwarded": "1", "X-Sluice-Standby": "1", "X-Sluice-Partitions": fmt.Sprint(p)}, 5*time.Second)
			if code == 200 && slices.Equal(rows, rowsOf(p)) {
				break
			}
		}
		if code != 200 || !slices.Equal(rows, rowsOf(p)) {
			t.Fatalf("standby %s of partition %d: %d %q, want %q", s.base, p, code, rows, rowsOf(p))
		}
	}
	// An instance asked for a standby read of a partition it owns (it
	// moved there while the asking instance took it for a standby)
	// answers from its running task: that state is the newest.
	code, _, rows, _ := byURL[owner[0]].pullOnce(t, "SELECT * FROM page_counts;", standbyProps,
		map[string]string{"X-Sluice-Forwarded": "1", "X-Sluice-Standby": "1", "X-Sluice-Partitions": "0"}, 5*time.Second)
	if code != 200 || !slices.Equal(rows, rowsOf(0)) {
		t.Errorf("standby read of partition 0 on its owner %s: %d %q, want %q", owner[0], code, rows, rowsOf(0))
	}

	// The victim: c, which owns some partitions (owners checked that).
	var victimParts []string
	for p := int32(0); p < parts; p++ {
		if owner[p] == c.base {
			victimParts = append(victimParts, fmt.Sprint(p))
		}
	}
	var victimPage string
	for _, page := range pages {
		if owner[partitionOf(page)] == c.base {
			victimPage = page
			break
		}
	}
	if err := c.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// The signal takes effect when the kernel next schedules c: until its
	// state is T (stopped), c may still answer a request that reached it.
	waitStopped(t, c.cmd.Process.Pid)
	stopped := time.Now()
	defer func() {
		if err := c.cmd.Process.Signal(syscall.SIGCONT); err != nil {
			t.Error(err)
		}
		c.stop(t, 30*time.Second)
	}()

	// Without standby reads: 503 naming the partition, once the
	// registry no longer counts c alive (each attempt is cut short by
	// the client while the forward to c waits for its answer).
	noStandby := make(chan string, 1)
	go func() {
		for time.Since(stopped) < 20*time.Second {
			code, _, body, _ := b.pullOnce(t, "SELECT * FROM page_counts WHERE page = '"+victimPage+"';", nil, nil, 2*time.Second)
			if code != 0 {
				noStandby <- fmt.Sprintf("%d %s", code, body[0])
				return
			}
		}
		noStandby <- "no answer within 20 s"
	}()

	// With standby reads: every key, exact, on both live instances.
	for _, s := range []*serverProc{a, b} {
		for _, page := range pages {
			code, hdr, rows, took := s.pullOnce(t, "SELECT * FROM page_counts WHERE page = '"+page+"';", standbyProps, nil, 10*time.Second)
			p := partitionOf(page)
			if code != 200 || !slices.Equal(rows, []string{row(page)}) {
				t.Fatalf("%s, page %s (partition %d, owner %s) with standby reads, %s after SIGSTOP: %d %q, want %q", s.base, page, p, owner[p], time.Since(stopped), code, rows, row(page))
			}
			if took >= 5*time.Second {
				t.Errorf("%s, page %s: answered in %s, want < 5 s", s.base, page, took)
			}
			want := ""
			if owner[p] == c.base {
				want = fmt.Sprint(p)
			}
			if got := hdr.Get("X-Sluice-Standby-Of"); got != want {
				t.Errorf("%s, page %s (partition %d, owner %s): X-Sluice-Standby-Of %q, want %q", s.base, page, p, owner[p], got, want)
			}
		}
		code, hdr, rows, took := s.pullOnce(t, "SELECT * FROM page_counts;", standbyProps, nil, 10*time.Second)
		if code != 200 || !slices.Equal(rows, rowsOf(-1)) || took >= 5*time.Second {
			t.Fatalf("%s, scan with standby reads: %d %q in %s, want %q in < 5 s", s.base, code, rows, took, rowsOf(-1))
		}
		if got, want := hdr.Get("X-Sluice-Standby-Of"), strings.Join(victimParts, ","); got != want {
			t.Errorf("%s, scan: X-Sluice-Standby-Of %q, want %q", s.base, got, want)
		}
	}
	t.Logf("standby reads answered every key on both instances %s after SIGSTOP", time.Since(stopped))

	got := <-noStandby
	want := fmt.Sprintf("partition %d of %s", partitionOf(victimPage), repart)
	if !strings.HasPrefix(got, "503 ") || !strings.Contains(got, want) {
		t.Errorf("page %s without standby reads: %s, want 503 naming %q", victimPage, got, want)
	}
	// Once the registry judges c stale its standbys keep serving (until
	// the group gives its partitions to another instance).
	for _, s := range []*serverProc{a, b} {
		code, hdr, rows, took := s.pullOnce(t, "SELECT * FROM page_counts WHERE page = '"+victimPage+"';", standbyProps, nil, 10*time.Second)
		if code != 200 || !slices.Equal(rows, []string{row(victimPage)}) || took >= 5*time.Second {
			t.Errorf("%s, page %s with standby reads, %s after SIGSTOP: %d %q in %s, want %q in < 5 s", s.base, victimPage, time.Since(stopped), code, rows, took, row(victimPage))
		}
		t.Logf("%s, %s after SIGSTOP: answered in %s, X-Sluice-Standby-Of %q", s.base, time.Since(stopped), took, hdr.Get("X-Sluice-Standby-Of"))
	}
	t.Logf("without standby reads: %s (%s after SIGSTOP); test ran %s", got, time.Since(stopped), time.Since(began))
}

// waitStopped waits until process pid is stopped (state T in
// /proc/pid/stat).
func waitStopped(t *testing.T, pid int) {
	t.Helper()
	var stat string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			t.Fatal(err)
		}
		stat = string(b)
		// pid (comm) state …: comm may hold spaces, so read after the last ')'.
		if i := strings.LastIndexByte(stat, ')'); i >= 0 && strings.HasPrefix(stat[i+1:], " T") {
			return
		}
	}
	t.Fatalf("process %d not stopped 5 s after SIGSTOP: %s", pid, stat)
}
