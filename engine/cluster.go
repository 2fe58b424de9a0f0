package engine

import (
	"context"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/planner"
)

// cluster is where the engine's topics live and its queries run: Kafka
// (kafkaCluster) or, for `sluice test`, memory (memoryCluster), as goka
// swaps its storage, consumer and producer builders for its tester. The
// engine asks the cluster rather than which one it has.
type cluster interface {
	// topicPartitions returns the partition count of topic, 0 when it
	// does not exist.
	topicPartitions(ctx context.Context, topic string) (int32, error)
	// createTopic creates topic unless it exists, with configs; replicas
	// 0 means the broker's default.
	createTopic(ctx context.Context, topic string, partitions int32, replicas int16, configs map[string]string) error
	// deleteTopic deletes topic; one already gone counts as deleted.
	deleteTopic(ctx context.Context, topic string) error
	// userTopics lists the topics users made, leaving out internal ones
	// (names starting with '_'), in no particular order.
	userTopics(ctx context.Context) ([]TopicSummary, error)
	// fitSource settles the partition count of src, a source declared
	// with columns, against its topic as it is now, and says whether the
	// topic has to be created. accepted: the statement was checked when
	// it entered the command topic.
	fitSource(ctx context.Context, src *planner.Source, accepted bool) (create bool, err error)
	// sinkPartitions is the partition count a sink planned with n
	// partitions has once its topic is created.
	sinkPartitions(n int32) int32
	// produce writes one record synchronously.
	produce(ctx context.Context, rec *exec.Record) error

	// startQuery runs a persistent query whose topics exist, setting
	// its Metrics.
	startQuery(q *Query, props map[string]string) error
	// stopped forgets a persistent query stopped for now (its runner,
	// if it had one, has stopped).
	stopped(q *Query)
	// terminated removes what a query stopped for good leaves behind.
	terminated(ctx context.Context, q *Query)
	// startTransient runs a push query's plan until stop.
	startTransient(ctx context.Context, plan *planner.Query, props map[string]string) (stop func(), err error)
	// warnUncompacted logs when topic, a table's topic a query restores
	// from, is not compacted.
	warnUncompacted(ctx context.Context, query, topic string)

	// scansTopics reports whether a query may read a topic of its own
	// accord: a pull query's scan of a stream's topic from its start,
	// a scalable push query's subscription to a running query's output.
	// Where it cannot, both run as push queries fed what is sent.
	scansTopics() bool
	// clusterID is the cluster's id ("" when it has none).
	clusterID(ctx context.Context) (string, error)
	// ping checks that the cluster answers.
	ping(ctx context.Context) error
	// connOpts are the options a reader outside queries (PRINT) connects
	// with; nil where there is nothing to connect to.
	connOpts() []kgo.Opt
	// close flushes what was produced and releases the cluster's clients.
	close() error
}
