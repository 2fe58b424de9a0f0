package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

// TestRegistry runs two registries of one service on a broker, plus a
// status record of a third instance that stopped heartbeating a minute
// ago: each registry sees the other alive with its partitions, the third
// stale and owning nothing; a change reaches the other side without
// waiting for a heartbeat; Close removes an instance at once.
func TestRegistry(t *testing.T) {
	brokers := testkafka.Brokers(t)
	svc := testkafka.Name(t, "svc")
	conn := []kgo.Opt{kgo.SeedBrokers(strings.Split(brokers, ",")...)}
	ctx := context.Background()
	const q, topic = "CTAS_T", "in"

	// A crashed instance's last word, written long ago.
	old, _ := json.Marshal(Status{Version: statusVersion, ID: "c", URL: "http://c:3", HeartbeatMs: time.Now().Add(-time.Minute).UnixMilli(),
		Queries: map[string][]Partition{q: {{Topic: topic, Partition: 4, State: "RUNNING"}}}})
	testkafka.CreateTopic(t, brokers, TopicName(svc), 1)
	testkafka.Produce(t, brokers, &kgo.Record{Topic: TopicName(svc), Key: []byte("c"), Value: old, Timestamp: time.Now().Add(-time.Minute)})

	var mu sync.Mutex
	bParts := []Partition{{Topic: topic, Partition: 2, State: "RUNNING"}, {Topic: topic, Partition: 3, State: "RESTORING"}}
	start := func(id, url string, local func() map[string][]Partition) *Registry {
		r, err := Start(ctx, Config{ConnOpts: conn, ServiceID: svc, InstanceID: id, URL: url, Local: local, Interval: 200 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	a := start("a", "http://a:1", func() map[string][]Partition {
		return map[string][]Partition{q: {{Topic: topic, Partition: 0, State: "RUNNING"}, {Topic: topic, Partition: 1, State: "RUNNING"}}}
	})
	defer a.Close()
	b := start("b", "http://b:2", func() map[string][]Partition {
		mu.Lock()
		defer mu.Unlock()
		return map[string][]Partition{q: append([]Partition(nil), bParts...)}
	})

	// view renders what r knows: instances (self marked *, stale ~) and
	// the owner of each partition 0…5.
	view := func(r *Registry) string {
		var sb strings.Builder
		for _, in := range r.Instances() {
			mark := ""
			if in.Self {
				mark = "*"
			}
			if !in.Alive {
				mark = "~"
			}
			fmt.Fprintf(&sb, "%s%s%v ", mark, in.ID, in.Queries[q])
		}
		for p := int32(0); p < 6; p++ {
			o, ok := r.Owner(q, topic, p)
			if !ok {
				fmt.Fprintf(&sb, "%d:- ", p)
				continue
			}
			fmt.Fprintf(&sb, "%d:%s ", p, o.URL)
		}
		return strings.TrimSpace(sb.String())
	}
	await := func(what string, r *Registry, want string) {
		t.Helper()
		var got string
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if got = view(r); got == want {
				return
			}
		}
		t.Fatalf("%s:\n got %s\nwant %s", what, got, want)
	}
	steps := []struct {
		name   string
		change func()
		r      *Registry
		want   string
	}{
		{"a sees b; c is stale", nil, a,
			"*a[{in 0 RUNNING} {in 1 RUNNING}] b[{in 2 RUNNING} {in 3 RESTORING}] ~c[{in 4 RUNNING}] 0:http://a:1 1:http://a:1 2:http://b:2 3:http://b:2 4:- 5:-"},
		{"b sees a", nil, b,
			"a[{in 0 RUNNING} {in 1 RUNNING}] *b[{in 2 RUNNING} {in 3 RESTORING}] ~c[{in 4 RUNNING}] 0:http://a:1 1:http://a:1 2:http://b:2 3:http://b:2 4:- 5:-"},
		{"b takes partition 5", func() {
			mu.Lock()
			bParts = append(bParts, Partition{Topic: topic, Partition: 5, State: "RUNNING"})
			mu.Unlock()
			b.Changed()
		}, a,
			"*a[{in 0 RUNNING} {in 1 RUNNING}] b[{in 2 RUNNING} {in 3 RESTORING} {in 5 RUNNING}] ~c[{in 4 RUNNING}] 0:http://a:1 1:http://a:1 2:http://b:2 3:http://b:2 4:- 5:http://b:2"},
		{"b closes", func() {
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
		}, a,
			"*a[{in 0 RUNNING} {in 1 RUNNING}] ~c[{in 4 RUNNING}] 0:http://a:1 1:http://a:1 2:- 3:- 4:- 5:-"},
	}
	for _, s := range steps {
		if s.change != nil {
			s.change()
		}
		await(s.name, s.r, s.want)
	}
}
