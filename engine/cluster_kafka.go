package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/planner"
)

// kafkaCluster runs queries on Kafka: topics through the admin client,
// a persistent query in an exec.KafkaRunner of its own consumer group.
type kafkaCluster struct {
	e   *Engine
	cl  *kgo.Client
	adm *kadm.Client
}

var _ cluster = (*kafkaCluster)(nil)

// topicPartitions returns the partition count of an existing topic, or 0
// when it does not exist.
func (k *kafkaCluster) topicPartitions(ctx context.Context, topic string) (int32, error) {
	tds, err := k.e.describeTopics(ctx, topic)
	if err != nil {
		return 0, err
	}
	td, ok := tds[topic]
	if !ok || errors.Is(td.Err, kerr.UnknownTopicOrPartition) {
		return 0, nil
	}
	if td.Err != nil {
		return 0, fmt.Errorf("describe topic %s: %w", topic, td.Err)
	}
	return int32(len(td.Partitions)), nil
}

// createTopic creates a topic unless it exists, with configs; replicas 0
// means the broker's default.replication.factor.
func (k *kafkaCluster) createTopic(ctx context.Context, topic string, partitions int32, replicas int16, configs map[string]string) error {
	cfg := map[string]*string{}
	for name, v := range configs {
		cfg[name] = &v
	}
	rf := int16(-1)
	if replicas > 0 {
		rf = replicas
	}
	_, err := k.adm.CreateTopic(ctx, partitions, rf, cfg, topic)
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	return k.waitTopicReady(ctx, topic)
}

// topicReadyTimeout bounds how long a CREATE waits for its new topic to
// show in the brokers' metadata.
const topicReadyTimeout = 15 * time.Second

// waitTopicReady returns once topic's metadata lists it with a leader for
// every partition. Kafka answers CreateTopics when the controller has
// the topic; a broker learns of it a moment later, and until then a
// statement after the CREATE (another CREATE over the same topic, an
// INSERT, a query's consumer) would find no topic there.
func (k *kafkaCluster) waitTopicReady(ctx context.Context, topic string) error {
	ctx, cancel := context.WithTimeout(ctx, topicReadyTimeout)
	defer cancel()
	for delay := 5 * time.Millisecond; ; delay = min(2*delay, 200*time.Millisecond) {
		tds, err := k.e.describeTopics(ctx, topic)
		if err == nil {
			if td, ok := tds[topic]; ok && td.Err == nil && len(td.Partitions) > 0 && allLed(td) {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("topic %s created, but not in the brokers' metadata after %s", topic, topicReadyTimeout)
		case <-time.After(delay):
		}
	}
}

func allLed(td kadm.TopicDetail) bool {
	for _, p := range td.Partitions {
		if p.Leader < 0 || p.Err != nil {
			return false
		}
	}
	return true
}

func (k *kafkaCluster) deleteTopic(ctx context.Context, topic string) error {
	resp, err := k.adm.DeleteTopics(ctx, topic)
	if err != nil {
		return fmt.Errorf("delete topic %s: %w", topic, err)
	}
	if r, ok := resp[topic]; ok && r.Err != nil && !errors.Is(r.Err, kerr.UnknownTopicOrPartition) {
		// Unknown: another instance applying the same DROP from the
		// command topic deleted it first.
		return fmt.Errorf("delete topic %s: %w", topic, r.Err)
	}
	return nil
}

func (k *kafkaCluster) userTopics(ctx context.Context) ([]TopicSummary, error) {
	tds, err := k.e.describeTopics(ctx)
	if err != nil {
		return nil, fmt.Errorf("list topics: %w", err)
	}
	var out []TopicSummary
	for _, td := range tds.Sorted() {
		if td.IsInternal || td.Err != nil || strings.HasPrefix(td.Topic, "_") {
			continue
		}
		ts := TopicSummary{Name: td.Topic}
		for _, p := range td.Partitions.Sorted() {
			ts.Replicas = append(ts.Replicas, len(p.Replicas))
		}
		out = append(out, ts)
	}
	return out, nil
}

// fitSource refuses a missing topic without PARTITIONS and a topic
// whose partition count differs from PARTITIONS, as ksqlDB does, unless
// the statement was accepted before the topic changed: a topic that has
// since gained partitions must not make a replay forget the source, so
// the count is taken as it is now.
func (k *kafkaCluster) fitSource(ctx context.Context, src *planner.Source, accepted bool) (bool, error) {
	parts, err := k.topicPartitions(ctx, src.Topic)
	if err != nil {
		return false, err
	}
	switch {
	case parts == 0 && src.Partitions == 0:
		return false, fmt.Errorf("%w: topic '%s' does not exist. If you want to create a new topic for the %s please re-run the statement providing the required 'PARTITIONS' configuration in the WITH clause (and optionally 'REPLICAS')", planner.ErrInvalid, src.Topic, strings.ToLower(src.Kind.String()))
	case parts == 0:
		return true, nil
	case src.Partitions != 0 && src.Partitions != parts && accepted:
		k.e.log.Warn("the topic's partition count changed since the source was created", "source", src.Name, "topic", src.Topic, "partitions", parts, "created with", src.Partitions)
		src.Partitions = parts
	case src.Partitions != 0 && src.Partitions != parts:
		return false, fmt.Errorf("%w: a Kafka topic with the name '%s' already exists, with different partition count. Partition count: %d, requested: %d", planner.ErrInvalid, src.Topic, parts, src.Partitions)
	default:
		src.Partitions = parts
	}
	return false, nil
}

func (k *kafkaCluster) sinkPartitions(n int32) int32 { return n }

func (k *kafkaCluster) produce(ctx context.Context, rec *exec.Record) error {
	kr := &kgo.Record{Topic: rec.Topic, Key: rec.Key, Value: rec.Value, Timestamp: time.UnixMilli(rec.Timestamp)}
	if err := k.cl.ProduceSync(ctx, kr).FirstErr(); err != nil {
		return fmt.Errorf("insert into %s: %w", rec.Topic, err)
	}
	return nil
}

// startQuery waits with the start while the command topic is replayed
// (startPending).
func (k *kafkaCluster) startQuery(q *Query, props map[string]string) error {
	q.Metrics = &exec.Metrics{}
	k.e.mu.Lock()
	deferred := k.e.deferStarts
	k.e.mu.Unlock()
	if deferred {
		q.pending = props
		return nil
	}
	return k.e.run(q, props)
}

func (k *kafkaCluster) stopped(*Query) {}

func (k *kafkaCluster) terminated(ctx context.Context, q *Query) { k.e.removeLeftovers(ctx, q) }

func (k *kafkaCluster) startTransient(ctx context.Context, plan *planner.Query, props map[string]string) (func(), error) {
	for _, it := range plan.Topology.Internal {
		if err := k.createTopic(ctx, it.Name, it.Partitions, 0, it.Configs); err != nil {
			return nil, err
		}
	}
	group := planner.InternalPrefix(k.e.cfg.ServiceID, plan.ID)
	if autoOffsetReset(props) == "latest" {
		if err := k.startAtEnd(ctx, group, plan.Topology.SourceTopics()); err != nil {
			return nil, err
		}
	}
	r, err := exec.StartKafka(plan.Topology, k.e.kafkaConfig(group, true, nil, props), &exec.Metrics{})
	if err != nil {
		return nil, err
	}
	return func() {
		_ = r.Stop()
		// The group was the query's alone: its offsets go with it.
		dctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		if err := k.e.deleteOwnGroup(dctx, group); err != nil {
			k.e.log.Debug("push query's consumer group not deleted", "query", plan.ID, "err", err)
		}
	}, nil
}

// startAtEnd commits, for the new consumer group of a transient query
// that reads from latest, the end of each of its topics now (the last
// stable offset: it reads committed records only). Left to
// auto.offset.reset, the end would be read when the group's consumer first
// fetches, after joining the group, and a record produced between the
// query's answer starting and that moment would be missed; so a client
// that has the answer's header can rely on every record produced after
// it. The group is the query's own, new and empty, so the commit needs no
// membership.
func (k *kafkaCluster) startAtEnd(ctx context.Context, group string, topics []string) error {
	ends, err := k.adm.ListCommittedOffsets(ctx, topics...)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return fmt.Errorf("push query: end offsets of %s: %w", strings.Join(topics, ", "), err)
	}
	resp, err := k.adm.CommitOffsets(ctx, group, ends.Offsets())
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		return fmt.Errorf("push query: start offsets of group %s: %w", group, err)
	}
	return nil
}

// warnUncompacted logs when a table a join reads keeps its topic with
// cleanup.policy=delete: the join restores the table from that topic, so
// rows older than the topic's retention are gone after a restore, as
// they would be for any new reader of the table.
func (k *kafkaCluster) warnUncompacted(ctx context.Context, query, topic string) {
	rc, err := k.adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		return
	}
	c, err := rc.On(topic, nil)
	if err != nil || c.Err != nil {
		return
	}
	for _, cfg := range c.Configs {
		if cfg.Key == "cleanup.policy" && cfg.Value != nil && !strings.Contains(*cfg.Value, "compact") {
			k.e.log.Warn("a joined table's topic is not compacted: the join restores the table from it, so rows older than its retention are lost on a restore",
				"query", query, "topic", topic, "cleanup.policy", *cfg.Value)
		}
	}
}

func (k *kafkaCluster) scansTopics() bool { return true }

func (k *kafkaCluster) clusterID(ctx context.Context) (string, error) {
	md, err := k.adm.BrokerMetadata(ctx)
	if err != nil {
		return "", fmt.Errorf("cluster id: %w", err)
	}
	return md.Cluster, nil
}

func (k *kafkaCluster) ping(ctx context.Context) error {
	if err := k.cl.Ping(ctx); err != nil {
		return fmt.Errorf("ping Kafka: %w", err)
	}
	return nil
}

func (k *kafkaCluster) connOpts() []kgo.Opt { return append([]kgo.Opt(nil), k.e.cfg.ConnOpts...) }

func (k *kafkaCluster) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var err error
	if ferr := k.cl.Flush(ctx); ferr != nil {
		err = fmt.Errorf("flush inserts: %w", ferr)
	}
	k.cl.Close()
	return err
}

// describeTopics asks the cluster for the named topics (all with none).
// It bypasses the client's metadata cache, which can answer from up to
// 5 s ago: a topic just created (CREATE STREAM … PARTITIONS, then another
// CREATE over the same topic) or deleted (DROP … DELETE TOPIC) must show
// as it is now.
func (e *Engine) describeTopics(ctx context.Context, topics ...string) (kadm.TopicDetails, error) {
	req := kmsg.NewPtrMetadataRequest()
	for _, t := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(t)
		req.Topics = append(req.Topics, rt)
	}
	if len(topics) == 0 {
		req.Topics = nil // all topics
	}
	resp, err := req.RequestWith(ctx, e.cl)
	if err != nil {
		return nil, fmt.Errorf("describe topics: %w", err)
	}
	out := kadm.TopicDetails{}
	for _, t := range resp.Topics {
		if t.Topic == nil {
			continue
		}
		td := kadm.TopicDetail{Topic: *t.Topic, IsInternal: t.IsInternal, Partitions: kadm.PartitionDetails{}, Err: kerr.ErrorForCode(t.ErrorCode)}
		for _, p := range t.Partitions {
			td.Partitions[p.Partition] = kadm.PartitionDetail{Topic: *t.Topic, Partition: p.Partition, Leader: p.Leader, Replicas: p.Replicas, ISR: p.ISR}
		}
		out[*t.Topic] = td
	}
	return out, nil
}
