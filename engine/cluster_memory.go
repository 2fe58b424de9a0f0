package engine

import (
	"context"
	"log/slog"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/planner"
)

// memoryCluster runs queries without a broker, in an exec.MemoryRunner
// (the offline test runner, `sluice test`): every topic has one
// partition, a record sent is processed at once by the queries reading
// its topic, and nothing outlives the process.
type memoryCluster struct {
	run *exec.MemoryRunner
	log *slog.Logger

	mu sync.Mutex
	// topics are the partition counts of the topics, by name.
	topics map[string]int32
}

var _ cluster = (*memoryCluster)(nil)

func newMemoryCluster(run *exec.MemoryRunner, log *slog.Logger) *memoryCluster {
	return &memoryCluster{run: run, log: log, topics: map[string]int32{}}
}

func (m *memoryCluster) topicPartitions(_ context.Context, topic string) (int32, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.topics[topic], nil
}

func (m *memoryCluster) createTopic(_ context.Context, topic string, _ int32, _ int16, _ map[string]string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.topics[topic]; !ok {
		m.topics[topic] = 1
	}
	return nil
}

func (m *memoryCluster) deleteTopic(_ context.Context, topic string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.topics, topic)
	return nil
}

func (m *memoryCluster) userTopics(context.Context) ([]TopicSummary, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []TopicSummary
	for name, n := range m.topics {
		if !strings.HasPrefix(name, "_") {
			out = append(out, TopicSummary{Name: name, Replicas: replicas(int(n), 1)})
		}
	}
	return out, nil
}

// fitSource creates a missing topic whatever PARTITIONS says: the test
// runner's cases declare sources over topics they never create.
func (m *memoryCluster) fitSource(ctx context.Context, src *planner.Source, _ bool) (bool, error) {
	parts, err := m.topicPartitions(ctx, src.Topic)
	if err != nil {
		return false, err
	}
	src.Partitions = 1
	return parts == 0, nil
}

func (m *memoryCluster) sinkPartitions(int32) int32 { return 1 }

func (m *memoryCluster) produce(_ context.Context, rec *exec.Record) error {
	_, err := m.run.Send(*rec)
	return err
}

func (m *memoryCluster) startQuery(q *Query, _ map[string]string) error {
	topo := q.Plan.Topology
	if err := m.run.Add(topo); err != nil {
		return err
	}
	q.Metrics = m.run.Metrics(q.ID)
	m.log.Info("query started", "query", q.ID, "sources", strings.Join(q.Plan.Sources, ","), "sink", topo.SinkTopic)
	return nil
}

func (m *memoryCluster) stopped(q *Query) { m.run.Remove(q.ID) }

// terminated has nothing to remove: the stores are the runner's, gone
// with it.
func (m *memoryCluster) terminated(context.Context, *Query) {}

func (m *memoryCluster) startTransient(_ context.Context, plan *planner.Query, _ map[string]string) (func(), error) {
	if err := m.run.Add(plan.Topology); err != nil {
		return nil, err
	}
	return func() { m.run.Remove(plan.ID) }, nil
}

func (m *memoryCluster) warnUncompacted(context.Context, string, string) {}

func (m *memoryCluster) scansTopics() bool { return false }

func (m *memoryCluster) clusterID(context.Context) (string, error) { return "memory", nil }

func (m *memoryCluster) ping(context.Context) error { return nil }

func (m *memoryCluster) connOpts() []kgo.Opt { return nil }

func (m *memoryCluster) close() error { return nil }
