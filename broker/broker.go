package broker

import (
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Config configures the embedded broker.
type Config struct {
	// Listen is the address to listen on. Default "127.0.0.1:0" (any free
	// port).
	Listen string
	// DataDir persists topics and groups; "" keeps everything in memory.
	DataDir string
	// Partitions is the partition count of a topic created without one:
	// auto-created, or by a CreateTopics asking for the default (-1).
	// Default 1, Kafka's num.partitions.
	Partitions int
}

// Broker is a running embedded broker.
type Broker struct {
	cluster *kfake.Cluster
	addr    string
}

// Start starts a single-node broker.
func Start(cfg Config) (*Broker, error) {
	listen := cfg.Listen
	if listen == "" {
		listen = "127.0.0.1:0"
	}
	opts := []kfake.Opt{
		kfake.NumBrokers(1),
		kfake.Ports(0),
		// kfake asks for 127.0.0.1:<port>; we listen where the user said.
		kfake.ListenFn(func(network, _ string) (net.Listener, error) { return net.Listen(network, listen) }),
		kfake.BrokerConfigs(map[string]string{
			// Compaction keeps changelog topics small in long local runs;
			// kfake compacts inside its single request loop, stalling every
			// client for a moment per large topic, so once a minute.
			"log.cleaner.backoff.ms": "60000",
		}),
	}
	// kfake's own default is 10; clients written for Kafka expect 1.
	partitions := 1
	if cfg.Partitions > 0 {
		partitions = cfg.Partitions
	}
	opts = append(opts, kfake.DefaultNumPartitions(partitions))
	if cfg.DataDir != "" {
		if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
			return nil, fmt.Errorf("broker data dir: %w", err)
		}
		opts = append(opts, kfake.DataDir(cfg.DataDir))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, fmt.Errorf("start embedded broker on %s: %w", listen, err)
	}
	addrs := c.ListenAddrs()
	if len(addrs) == 0 {
		c.Close()
		return nil, fmt.Errorf("embedded broker has no listener")
	}
	autoCreateTopics(c)
	return &Broker{cluster: c, addr: addrs[0]}, nil
}

// autoCreateTopics makes c create topics on first use as Kafka does with
// its default auto.create.topics.enable=true: a metadata request that
// allows auto-creation (producers send one before writing to a topic they
// do not know; franz-go clients only with kgo.AllowAutoTopicCreation, which
// Sluice never sets) creates every topic it names that does not exist,
// with the default partition count and replication.
//
// kfake's own AllowAutoTopicCreation creates such a topic without writing
// the data directory's topic list, which it then saves only at an orderly
// Close: after a crash the topic and its records would be gone. Creating
// it through Cluster.CreateTopic saves it as a CreateTopics request does.
// The control runs before kfake answers the request, which then finds the
// topics; it never handles the request itself, so it stays installed.
func autoCreateTopics(c *kfake.Cluster) {
	c.ControlKey(int16(kmsg.Metadata), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		req, ok := kreq.(*kmsg.MetadataRequest)
		// Before v4 the request has no flag and Kafka always creates.
		if !ok || (req.Version >= 4 && !req.AllowAutoTopicCreation) {
			return nil, nil, false
		}
		for _, t := range req.Topics {
			if t.Topic == nil || t.TopicID != [16]byte{} || !legalTopicName(*t.Topic) {
				continue
			}
			// An existing topic is the common case: kfake refuses with
			// TopicAlreadyExists and nothing changes. Any refusal leaves
			// the metadata answer as kfake gives it.
			_ = c.CreateTopic(*t.Topic, 0, nil)
		}
		return nil, nil, false
	})
}

// legalTopicName is Kafka's rule for topic names: 1 to 249 of ASCII
// letters, digits, '.', '_' and '-', and neither "." nor "..". kfake
// checks none of it, and a topic's name becomes a directory name under
// the data directory.
func legalTopicName(name string) bool {
	if name == "" || len(name) > 249 || name == "." || name == ".." {
		return false
	}
	return strings.IndexFunc(name, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-')
	}) < 0
}

// Addr is the bootstrap address, host:port.
func (b *Broker) Addr() string { return b.addr }

// Cluster exposes the underlying kfake cluster (tests use it to force
// compaction).
func (b *Broker) Cluster() *kfake.Cluster { return b.cluster }

// Close stops the broker, persisting its data when it has a directory.
func (b *Broker) Close() { b.cluster.Close() }
