package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	sexec "github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/internal/testkafka"
)

// clusterStatus is the part of /clusterStatus the test reads.
type clusterStatus struct {
	ClusterStatus map[string]struct {
		HostAlive             bool   `json:"hostAlive"`
		URL                   string `json:"url"`
		ActiveStandbyPerQuery map[string]struct {
			ActiveStores     []string `json:"activeStores"`
			ActivePartitions []struct {
				Topic     string `json:"topic"`
				Partition int32  `json:"partition"`
			} `json:"activePartitions"`
			StandByPartitions []struct {
				Topic     string `json:"topic"`
				Partition int32  `json:"partition"`
			} `json:"standByPartitions"`
		} `json:"activeStandbyPerQuery"`
	} `json:"clusterStatus"`
}

// authed sends an authenticated request and returns the response's
// status, headers and body.
func (s *serverProc) authed(t *testing.T, method, path, body string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, s.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("alice", "secret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// serverArgs gives the flags of one more `sluice server` of service svc
// on brokers, each call with a data directory of its own.
func serverArgs(t *testing.T, brokers, svc string) func() []string {
	return func() []string {
		return []string{"--brokers", brokers, "--service-id", svc, "--data-dir", t.TempDir(), "--auth", "alice:secret"}
	}
}

// keysPerPartition returns the first keys fmt.Sprintf(format, i), i = 0,
// 1, …, that put exactly per of them in each of the n partitions of topic
// (murmur2 of the key, as the producer and the repartition write them).
func keysPerPartition(topic, format string, n int32, per int) []string {
	var keys []string
	count := map[int32]int{}
	for i := 0; len(keys) < per*int(n); i++ {
		k := fmt.Sprintf(format, i)
		if p := sexec.KeyPartition(topic, []byte(k), n); count[p] < per {
			count[p]++
			keys = append(keys, k)
		}
	}
	return keys
}

// owners reads /clusterStatus of s until every instance in want is
// listed alive, no other is, each owns some partition of query (so the
// group has settled after instances came or went), and the partitions of
// each of topics add up to 0…n-1 exactly once; it returns partition →
// owner URL for the first topic.
func (s *serverProc) owners(t *testing.T, query string, topics []string, n int32, want []*serverProc) map[int32]string {
	t.Helper()
	var last string
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		owner, ok, body := s.ownership(t, query, topics, n, want)
		if ok {
			return owner
		}
		last = body
	}
	t.Fatalf("%s /clusterStatus never showed %d instances owning the %d partitions of %v once each; last:\n%s", s.base, len(want), n, topics, last)
	return nil
}

// ownersNow is one look of owners: whether the group has settled on want.
func (s *serverProc) ownersNow(t *testing.T, query string, topics []string, n int32, want []*serverProc) bool {
	t.Helper()
	_, ok, _ := s.ownership(t, query, topics, n, want)
	return ok
}

// ownership reads /clusterStatus once and reports whether it shows what
// owners waits for, with the owners of the first topic and the body.
func (s *serverProc) ownership(t *testing.T, query string, topics []string, n int32, want []*serverProc) (map[int32]string, bool, string) {
	t.Helper()
	cs, body, ok := s.clusterStatus(t)
	if !ok {
		return nil, false, body
	}
	var alive []string
	for hp, h := range cs.ClusterStatus {
		if h.HostAlive {
			alive = append(alive, hp)
		}
	}
	var wantHosts []string
	for _, w := range want {
		u, _ := url.Parse(w.base)
		wantHosts = append(wantHosts, u.Host)
	}
	sort.Strings(alive)
	sort.Strings(wantHosts)
	if !slices.Equal(alive, wantHosts) {
		return nil, false, body
	}
	owner := map[string]map[int32]string{}
	settled := true
	for _, h := range cs.ClusterStatus {
		if !h.HostAlive {
			continue // what a stale instance last said it owned
		}
		ps := h.ActiveStandbyPerQuery[query].ActivePartitions
		if len(ps) == 0 {
			settled = false
		}
		for _, p := range ps {
			if owner[p.Topic] == nil {
				owner[p.Topic] = map[int32]string{}
			}
			if _, dup := owner[p.Topic][p.Partition]; dup {
				settled = false
			}
			owner[p.Topic][p.Partition] = h.URL
		}
	}
	for _, topic := range topics {
		settled = settled && len(owner[topic]) == int(n)
	}
	return owner[topics[0]], settled && len(owner) == len(topics), body
}

// clusterStatus reads and decodes s's /clusterStatus once.
func (s *serverProc) clusterStatus(t *testing.T) (clusterStatus, string, bool) {
	t.Helper()
	code, _, body := s.authed(t, "GET", "/clusterStatus", "")
	var cs clusterStatus
	if code != 200 {
		return cs, body, false
	}
	if err := json.Unmarshal([]byte(body), &cs); err != nil {
		t.Fatalf("clusterStatus: %v: %s", err, body)
	}
	return cs, body, true
}

// waitStandbys waits until /clusterStatus of s shows every one of the n
// partitions of query's input kept as a standby by some live instance.
func (s *serverProc) waitStandbys(t *testing.T, query string, n int32, live []*serverProc) {
	t.Helper()
	var last string
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		cs, body, ok := s.clusterStatus(t)
		last = body
		if !ok {
			continue
		}
		standby := map[string]map[int32]bool{}
		for _, h := range cs.ClusterStatus {
			if !h.HostAlive {
				continue
			}
			for _, p := range h.ActiveStandbyPerQuery[query].StandByPartitions {
				if standby[p.Topic] == nil {
					standby[p.Topic] = map[int32]bool{}
				}
				standby[p.Topic][p.Partition] = true
			}
		}
		full := len(standby) > 0
		for _, ps := range standby {
			full = full && len(ps) == int(n)
		}
		if full {
			return
		}
	}
	t.Fatalf("%s /clusterStatus never showed a standby for each of the %d partitions of query %s on %d instances; last:\n%s", s.base, n, query, len(live), last)
}

// pullRows repeats a pull query until it answers 200 with rows (sorted)
// equal to want, and returns the last response's headers.
func (s *serverProc) pullRows(t *testing.T, sql string, want []string) http.Header {
	t.Helper()
	var got []string
	var last string
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		code, hdr, body := s.authed(t, "POST", "/query-stream", `{"sql":"`+sql+`"}`)
		last = fmt.Sprintf("%d %s", code, body)
		if code != 200 {
			continue
		}
		lines := strings.Split(strings.TrimSpace(body), "\n")
		got = append([]string(nil), lines[1:]...)
		sort.Strings(got)
		if slices.Equal(got, want) {
			return hdr
		}
	}
	t.Fatalf("%s: %s never answered %q; last: %s", s.base, sql, want, last)
	return nil
}

// TestServerClusterForwarding runs three `sluice server` processes of one
// service on one broker, counting clicks per page over a 4-partition
// topic. Each instance owns some partitions of the count's state:
// /clusterStatus on every instance lists all three and every partition
// exactly once; a pull query by key on any instance gives the exact
// count, forwarded to the owner when the key's partition is elsewhere
// (the response names it); a full scan gives every page once. After one
// instance stops, the other two take its partitions and still answer
// exactly, including for clicks counted after the stop.
func TestServerClusterForwarding(t *testing.T) {
	brokers := testkafka.Brokers(t)
	svc := testkafka.Name(t, "svc")
	topic := testkafka.Name(t, "clicks")
	const query, parts = "CTAS_PAGE_COUNTS", 4
	repart := "_sluice-" + svc + "-query-" + query + "-Aggregate-GroupBy-repartition"

	// Two pages per partition of the count's state: the group key goes
	// to the repartition topic as a KAFKA string, partitioned by murmur2.
	pages := keysPerPartition(repart, "page-%d", parts, 2)
	partitionOf := func(page string) int32 { return sexec.KeyPartition(repart, []byte(page), parts) }

	args := serverArgs(t, brokers, svc)
	a := startServer(t, args()...)
	defer a.stop(t, 30*time.Second)
	b := startServer(t, args()...)
	defer b.stop(t, 30*time.Second)
	c := startServer(t, args()...)
	all := []*serverProc{a, b, c}

	var ksql strings.Builder
	fmt.Fprintf(&ksql, "CREATE STREAM clicks (user VARCHAR KEY, page VARCHAR) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON', PARTITIONS=%d); ", topic, parts)
	ksql.WriteString("CREATE TABLE page_counts AS SELECT page, COUNT(*) AS n FROM clicks GROUP BY page; ")
	counts := map[string]int{}
	for i, page := range pages {
		for j := 0; j <= i; j++ { // page i gets i+1 clicks from users spread over the input
			fmt.Fprintf(&ksql, "INSERT INTO clicks VALUES ('user-%d-%d', '%s'); ", i, j, page)
			counts[page]++
		}
	}
	if code, _, body := a.authed(t, "POST", "/ksql", `{"ksql":"`+ksql.String()+`","streamsProperties":{"auto.offset.reset":"earliest"}}`); code != 200 {
		t.Fatalf("create: %d %s", code, body)
	}
	row := func(page string) string { return fmt.Sprintf(`[%q,%d]`, page, counts[page]) }
	everyRow := func() []string {
		var rows []string
		for _, p := range pages {
			rows = append(rows, row(p))
		}
		sort.Strings(rows)
		return rows
	}

	check := func(t *testing.T, live []*serverProc) {
		// (a) every instance sees every live one and every partition once.
		var owner map[int32]string
		for _, s := range live {
			o := s.owners(t, query, []string{repart, topic}, parts, live)
			if owner != nil && fmt.Sprint(o) != fmt.Sprint(owner) {
				t.Fatalf("%s sees owners %v, another instance %v", s.base, o, owner)
			}
			owner = o
		}
		// (b) by key, on every instance: exact, forwarded when the owner
		// is another instance.
		forwarded := 0
		for _, s := range live {
			for _, page := range pages {
				hdr := s.pullRows(t, "SELECT * FROM page_counts WHERE page = '"+page+"';", []string{row(page)})
				want := ""
				if o := owner[partitionOf(page)]; o != s.base {
					want = o
					forwarded++
				}
				if got := hdr.Get("X-Sluice-Forwarded-To"); got != want {
					t.Errorf("%s, page %s (partition %d): forwarded to %q, want %q", s.base, page, partitionOf(page), got, want)
				}
			}
			// (c) a full scan: every page exactly once.
			s.pullRows(t, "SELECT * FROM page_counts;", everyRow())
		}
		// SHOW QUERIES tells, like ksqlDB, the query's state on every
		// instance of the service.
		for _, s := range live {
			_, _, body := s.authed(t, "POST", "/ksql", `{"ksql":"SHOW QUERIES;"}`)
			var res []struct {
				Queries []struct {
					ID          string            `json:"id"`
					StatusCount map[string]int    `json:"statusCount"`
					HostStatus  map[string]string `json:"ksqlHostQueryStatus"`
				} `json:"queries"`
			}
			if err := json.Unmarshal([]byte(body), &res); err != nil || len(res) != 1 || len(res[0].Queries) != 1 {
				t.Fatalf("SHOW QUERIES on %s: %v: %s", s.base, err, body)
			}
			q := res[0].Queries[0]
			wantHosts := map[string]string{}
			for _, l := range live {
				wantHosts[strings.TrimPrefix(l.base, "http://")] = "RUNNING"
			}
			if q.ID != query || fmt.Sprint(q.StatusCount) != fmt.Sprint(map[string]int{"RUNNING": len(live)}) || fmt.Sprint(q.HostStatus) != fmt.Sprint(wantHosts) {
				t.Errorf("SHOW QUERIES on %s: %+v, want %d RUNNING on %v", s.base, q, len(live), wantHosts)
			}
		}
		t.Logf("owners %v; %d of %d key lookups forwarded", owner, forwarded, len(live)*len(pages))
		if forwarded == 0 {
			t.Errorf("no pull query was forwarded; owners %v", owner)
		}
	}
	t.Run("three instances", func(t *testing.T) { check(t, all) })

	// (d) c stops cleanly; a and b take over its partitions.
	c.stop(t, 30*time.Second)
	more := pages[len(pages)-1]
	if code, _, body := b.authed(t, "POST", "/ksql", `{"ksql":"INSERT INTO clicks VALUES ('late-user', '`+more+`');"}`); code != 200 {
		t.Fatalf("insert: %d %s", code, body)
	}
	counts[more]++
	t.Run("after one stopped", func(t *testing.T) { check(t, []*serverProc{a, b}) })

	// A partition an instance does not hold is refused whole, with a
	// 503 naming it, never answered with what is at hand.
	req, err := http.NewRequest("POST", a.base+"/query-stream", strings.NewReader(`{"sql":"SELECT * FROM page_counts;"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("alice", "secret")
	req.Header.Set("X-Sluice-Forwarded", "1")
	req.Header.Set("X-Sluice-Partitions", "7")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var eb struct {
		Code    int    `json:"error_code"`
		Message string `json:"message"`
	}
	_ = json.Unmarshal(body, &eb)
	want := "partition not available on this instance: partition 7 of " + repart + " (query " + query + ") is not assigned here"
	if resp.StatusCode != 503 || eb.Code != 50300 || eb.Message != want {
		t.Errorf("partition 7: %d %s, want 503 with message %q", resp.StatusCode, body, want)
	}
}
