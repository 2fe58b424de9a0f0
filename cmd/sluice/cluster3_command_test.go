package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/internal/testkafka"
)

// cluster3CommandLeaderKill is fault (4) of docs/faults.md: two `sluice
// server` instances of one service; the node leading the service's
// command topic is SIGKILLed just before, and just after, a CREATE STREAM
// … AS SELECT is sent to one of them. Each statement either succeeds and
// then both instances list the stream and run its query, or it fails
// with an error that says what failed, and then neither has it. Finally
// every created query copies all of the input.
func cluster3CommandLeaderKill(t *testing.T, c *testkafka.Cluster) {
	brokers := c.Brokers
	svc := testkafka.Name(t, "c3cmd_svc")
	in := testkafka.Name(t, "c3cmd_in")
	testkafka.CreateTopic(t, brokers, in, 2)
	args := serverArgs(t, brokers, svc)
	a := startServer(t, args()...)
	defer a.stop(t, 30*time.Second)
	b := startServer(t, args()...)
	defer b.stop(t, 30*time.Second)
	defer func() {
		if t.Failed() {
			for _, s := range []*serverProc{a, b} {
				t.Logf("%s stderr (tail):\n%s", s.base, tail(s.stderr.String(), 40))
			}
		}
	}()
	src := testkafka.Name(t, "c3cmd_src")
	if code, _, body := a.authed(t, "POST", "/ksql", `{"ksql":"CREATE STREAM `+src+` (id VARCHAR KEY, n BIGINT) WITH (KAFKA_TOPIC='`+in+`', VALUE_FORMAT='JSON');"}`); code != 200 {
		t.Fatalf("create %s: %d %s", src, code, body)
	}
	adm := kadm.NewClient(testkafka.Client(t, brokers, kgo.MetadataMinAge(50*time.Millisecond)))
	topic := engine.CommandTopicName(svc)

	var created []string
	for round, killAfter := range []time.Duration{-1, 10 * time.Millisecond, 60 * time.Millisecond} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		md, err := adm.Metadata(ctx, topic)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		leader := md.Topics[topic].Partitions[0].Leader
		name := testkafka.Name(t, fmt.Sprintf("c3cmd_copy%d", round))
		stmt := fmt.Sprintf(`{"ksql":"CREATE STREAM %s AS SELECT id, n FROM %s;","streamsProperties":{"auto.offset.reset":"earliest"}}`, name, src)
		type answer struct {
			code int
			body string
			at   time.Time
		}
		answered := make(chan answer, 1)
		var killed time.Time
		kill := func() {
			killed = time.Now()
			c.StopNode(t, int(leader))
		}
		if killAfter < 0 {
			kill()
		}
		go func() {
			code, _, body := a.authed(t, "POST", "/ksql", stmt)
			answered <- answer{code, body, time.Now()}
		}()
		if killAfter >= 0 {
			time.Sleep(killAfter)
			kill()
		}
		var ans answer
		select {
		case ans = <-answered:
		case <-time.After(2 * time.Minute):
			t.Fatalf("round %d: CREATE not answered 2 min after the kill of node %d", round, leader)
		}
		when := "before the CREATE was sent"
		if killAfter >= 0 {
			when = fmt.Sprintf("%s after the CREATE was sent", killAfter)
		}
		got := fmt.Sprintf("%s after the kill", ans.at.Sub(killed).Round(100*time.Millisecond))
		if ans.at.Before(killed) {
			got = fmt.Sprintf("%s before the kill", killed.Sub(ans.at).Round(10*time.Millisecond))
		}
		t.Logf("round %d: node %d (command topic leader) killed %s; answered %d %s", round, leader, when, ans.code, got)
		if ans.code == 200 {
			created = append(created, name)
			for _, s := range []*serverProc{a, b} {
				s.waitCatalog(t, name, true)
			}
		} else {
			// A failed CREATE says what failed, and no instance has it.
			var eb struct {
				Type    string `json:"@type"`
				Message string `json:"message"`
			}
			if err := json.Unmarshal([]byte(ans.body), &eb); err != nil || eb.Message == "" || !strings.Contains(eb.Message, topic) {
				t.Errorf("round %d: CREATE failed with %d %s; want an error object naming the command topic %s", round, ans.code, ans.body, topic)
			}
			time.Sleep(5 * time.Second)
			for _, s := range []*serverProc{a, b} {
				s.waitCatalog(t, name, false)
			}
		}
		c.StartNode(t, int(leader))
		ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
		if _, err := adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, kadm.TopicsSet{}); err != nil {
			t.Logf("preferred election: %v", err)
		}
		cancel()
	}
	if len(created) == 0 {
		t.Fatal("no CREATE succeeded")
	}
	// Every query that was created runs: it copies all of the input.
	const records = 200
	var recs []*kgo.Record
	for i := range records {
		recs = append(recs, &kgo.Record{Topic: in, Key: fmt.Appendf(nil, "id%03d", i), Value: fmt.Appendf(nil, `{"N":%d}`, i)})
	}
	testkafka.Produce(t, brokers, recs...)
	for _, name := range created {
		var ids map[string]bool
		for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
			ids = map[string]bool{}
			for _, r := range testkafka.ReadAll(t, brokers, name) {
				ids[string(r.Key)] = true
			}
			if len(ids) >= records {
				break
			}
		}
		if len(ids) != records {
			t.Errorf("%s holds %d distinct ids of the %d in the input", name, len(ids), records)
		}
	}
}

// waitCatalog waits until s lists stream name and runs its query on every
// instance (SHOW QUERIES' per-host status), or, with want false, checks
// that it lists neither.
func (s *serverProc) waitCatalog(t *testing.T, name string, want bool) {
	t.Helper()
	query := "CSAS_" + name
	var last string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		_, _, streams := s.authed(t, "POST", "/ksql", `{"ksql":"LIST STREAMS;"}`)
		_, _, queries := s.authed(t, "POST", "/ksql", `{"ksql":"SHOW QUERIES;"}`)
		last = streams + "\n" + queries
		var ls []struct {
			Streams []struct {
				Name string `json:"name"`
			} `json:"streams"`
		}
		var sq []struct {
			Queries []struct {
				ID          string         `json:"id"`
				StatusCount map[string]int `json:"statusCount"`
			} `json:"queries"`
		}
		if json.Unmarshal([]byte(streams), &ls) != nil || json.Unmarshal([]byte(queries), &sq) != nil || len(ls) != 1 || len(sq) != 1 {
			continue
		}
		hasStream := slices.ContainsFunc(ls[0].Streams, func(st struct {
			Name string `json:"name"`
		}) bool {
			return st.Name == name
		})
		running := 0
		for _, q := range sq[0].Queries {
			if q.ID == query {
				running = q.StatusCount["RUNNING"]
			}
		}
		if !want {
			if hasStream || running > 0 {
				t.Errorf("%s lists %s (stream %v, query running on %d instances) after its CREATE failed", s.base, name, hasStream, running)
			}
			return
		}
		if hasStream && running == 2 {
			return
		}
	}
	t.Fatalf("%s never listed stream %s with its query running on both instances; last:\n%s", s.base, name, last)
}
