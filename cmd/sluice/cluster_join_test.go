package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

// joinOwners reads /clusterStatus of s until every instance in live owns
// some partitions of query and each partition of every topic is owned
// exactly once (see owners), then returns, per instance URL, the sorted
// partitions it owns of each topic.
func (s *serverProc) joinOwners(t *testing.T, query string, topics []string, n int32, live []*serverProc) map[string]map[string][]int32 {
	t.Helper()
	s.owners(t, query, topics, n, live)
	_, _, body := s.authed(t, "GET", "/clusterStatus", "")
	var cs clusterStatus
	if err := json.Unmarshal([]byte(body), &cs); err != nil {
		t.Fatalf("clusterStatus: %v: %s", err, body)
	}
	out := map[string]map[string][]int32{}
	for _, h := range cs.ClusterStatus {
		if !h.HostAlive {
			continue
		}
		byTopic := map[string][]int32{}
		for _, p := range h.ActiveStandbyPerQuery[query].ActivePartitions {
			byTopic[p.Topic] = append(byTopic[p.Topic], p.Partition)
		}
		for _, ps := range byTopic {
			slices.Sort(ps)
		}
		out[h.URL] = byTopic
	}
	return out
}

// enrichedRecord is one output record of the join: key and JSON value.
type enrichedRecord struct {
	Key, Value string
}

// TestServerClusterJoin runs a stream–table LEFT JOIN on two `sluice
// server` processes of one service. The stream and the table are both
// keyed by user id, so the join reads partition p of both topics in one
// task, and the consumer group must assign partition p of clicks and
// users to the same instance (exec.CoPartitioned): else the users written
// while the join runs reach one instance and the clicks of their
// partition another, which joins them with NULL or old names. Every click
// of a known user must carry its current name. Then one instance stops
// (SIGTERM); the survivor takes all partitions, restores the users table
// of the moved ones from its topic, and joins a second batch of clicks,
// after some users were renamed, with the new names.
//
// The topics have 3 partitions: 6 partitions over two members is 3 each
// for plain cooperative-sticky, which cannot then be co-partitioned (with
// 4, it happens to give partitions 0-1 and 2-3 of both topics, and the
// test would pass without CoPartitioned); CoPartitioned gives 2 and 1
// partitions of each topic.
func TestServerClusterJoin(t *testing.T) {
	brokers := testkafka.Brokers(t)
	svc := testkafka.Name(t, "svc")
	users, clicks, enriched := testkafka.Name(t, "users"), testkafka.Name(t, "clicks"), testkafka.Name(t, "enriched")
	query := "CSAS_" + enriched
	const parts = 3
	const nUsers = 40

	args := serverArgs(t, brokers, svc)
	a := startServer(t, args()...)
	defer a.stop(t, 30*time.Second)
	var b *serverProc
	defer func() {
		if t.Failed() {
			for _, s := range []*serverProc{a, b} {
				if s == nil {
					continue
				}
				t.Logf("%s stderr (tail):\n%s", s.base, tail(s.stderr.String(), 30))
			}
		}
	}()

	// The users first: the join restores the table from its topic before
	// it joins any click.
	ddl := fmt.Sprintf("CREATE TABLE %s (id STRING PRIMARY KEY, name STRING) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON', PARTITIONS=%d); "+
		"CREATE STREAM %s (user_id STRING KEY, url STRING) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON', PARTITIONS=%d);",
		users, users, parts, clicks, clicks, parts)
	if code, _, body := a.authed(t, "POST", "/ksql", `{"ksql":"`+ddl+`"}`); code != 200 {
		t.Fatalf("create: %d %s", code, body)
	}
	names := map[string]string{}
	// setNames writes users ids[i] named prefix-i.
	setNames := func(prefix string, ids ...int) []*kgo.Record {
		var recs []*kgo.Record
		for _, i := range ids {
			id := fmt.Sprintf("u%02d", i)
			names[id] = fmt.Sprintf("%s-%02d", prefix, i)
			recs = append(recs, &kgo.Record{Topic: users, Key: []byte(id), Value: fmt.Appendf(nil, `{"NAME":%q}`, names[id])})
		}
		return recs
	}
	var early []int
	for i := range nUsers - 10 {
		early = append(early, i)
	}
	testkafka.Produce(t, brokers, setNames("name", early...)...)

	csas := fmt.Sprintf("CREATE STREAM %s AS SELECT c.user_id, url, name FROM %s c LEFT JOIN %s u ON c.user_id = u.id;", enriched, clicks, users)
	if code, _, body := a.authed(t, "POST", "/ksql", `{"ksql":"`+csas+`","streamsProperties":{"auto.offset.reset":"earliest"}}`); code != 200 {
		t.Fatalf("create join: %d %s", code, body)
	}

	// Each instance that runs the join owns the same partitions of clicks
	// as of users.
	checkCoPartitioned := func(t *testing.T, live []*serverProc) {
		t.Helper()
		var first map[string]map[string][]int32
		for _, s := range live {
			o := s.joinOwners(t, query, []string{clicks, users}, parts, live)
			for host, byTopic := range o {
				if !slices.Equal(byTopic[clicks], byTopic[users]) {
					t.Errorf("%s (seen from %s) owns partitions %v of %s but %v of %s: not co-partitioned",
						host, s.base, byTopic[clicks], clicks, byTopic[users], users)
				}
			}
			if first != nil && fmt.Sprint(first) != fmt.Sprint(o) {
				t.Errorf("%s sees owners %v, another instance %v", s.base, o, first)
			}
			first = o
		}
		t.Logf("owners: %v", first)
	}
	// a alone owns all 6 partitions; b then joins and a cooperative
	// rebalance moves some to b: partition p of both topics together,
	// where plain cooperative-sticky would move any 3 of the 6.
	checkCoPartitioned(t, []*serverProc{a})
	b = startServer(t, args()...)
	checkCoPartitioned(t, []*serverProc{a, b})

	// clickBatch produces 3 clicks per known user and 1 per unknown one,
	// with urls tagged by batch, and returns the records the join must
	// write for them.
	clickBatch := func(batch string) []enrichedRecord {
		t.Helper()
		var recs []*kgo.Record
		var want []enrichedRecord
		add := func(id string, j int) {
			u := fmt.Sprintf("/%s/%s/%d", batch, id, j)
			recs = append(recs, &kgo.Record{Topic: clicks, Key: []byte(id), Value: fmt.Appendf(nil, `{"URL":%q}`, u)})
			name := "null"
			if n, ok := names[id]; ok {
				name = fmt.Sprintf("%q", n)
			}
			want = append(want, enrichedRecord{id, fmt.Sprintf(`{"URL":%q,"NAME":%s}`, u, name)})
		}
		for i := range nUsers {
			for j := range 3 {
				add(fmt.Sprintf("u%02d", i), j)
			}
		}
		for i := range 5 {
			add(fmt.Sprintf("nobody%d", i), 0)
		}
		testkafka.Produce(t, brokers, recs...)
		sortRecords(want)
		return want
	}
	// awaitOutput reads the join's topic until it holds as many records
	// of batch as want (or the deadline passes) and compares them.
	awaitOutput := func(t *testing.T, batch string, want []enrichedRecord) {
		t.Helper()
		var got []enrichedRecord
		for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
			got = nil
			for _, r := range testkafka.ReadAll(t, brokers, enriched) {
				if strings.Contains(string(r.Value), `"/`+batch+`/`) {
					got = append(got, enrichedRecord{string(r.Key), string(r.Value)})
				}
			}
			if len(got) >= len(want) {
				break
			}
		}
		sortRecords(got)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: batch %s (-want +got):\n%s", enriched, batch, diff)
		}
	}

	// updateUsers writes recs to the users topic and waits until the live
	// instances have read them (records in of the join grow by as many),
	// so that the clicks after them find them (a click is not held back
	// for a table record with an earlier timestamp still unread).
	updateUsers := func(t *testing.T, live []*serverProc, recs []*kgo.Record) {
		t.Helper()
		in := func() (n int64) {
			for _, s := range live {
				n += s.recordsIn(t, query)
			}
			return n
		}
		before := in()
		testkafka.Produce(t, brokers, recs...)
		testkafka.Await(t, 60*time.Second, "the users' updates read", func() bool { return in() >= before+int64(len(recs)) })
	}

	// The last 10 users, and new names for some others, come while the
	// join runs: each reaches the instance that owns its users partition,
	// which must be the one that joins the clicks of that partition.
	var want1 []enrichedRecord
	t.Run("two instances", func(t *testing.T) {
		var late []int
		for i := nUsers - 10; i < nUsers; i++ {
			late = append(late, i)
		}
		recs := setNames("name", late...)
		recs = append(recs, setNames("renamed", 1, 6, 11, 16, 21, 26)...)
		updateUsers(t, []*serverProc{a, b}, recs)
		want1 = clickBatch("b1")
		awaitOutput(t, "b1", want1)
	})

	// b stops cleanly; a takes all its partitions and restores the users
	// of the moved ones from the users topic: those b read while it ran,
	// and those renamed while the partitions move.
	b.stop(t, 30*time.Second)
	var moving, renamed []int
	for i := 0; i < nUsers; i += 3 {
		moving = append(moving, i+1)
		renamed = append(renamed, i)
	}
	testkafka.Produce(t, brokers, setNames("moving", moving...)...)
	t.Run("after one stopped", func(t *testing.T) {
		checkCoPartitioned(t, []*serverProc{a})
		updateUsers(t, []*serverProc{a}, setNames("again", renamed...))
		awaitOutput(t, "b2", clickBatch("b2"))
		// b committed what it had done before it left: a did not join the
		// first batch's clicks again.
		awaitOutput(t, "b1", want1)
	})
}

func sortRecords(rs []enrichedRecord) {
	sort.Slice(rs, func(i, j int) bool {
		if rs[i].Key != rs[j].Key {
			return rs[i].Key < rs[j].Key
		}
		return rs[i].Value < rs[j].Value
	})
}
