package broker

import (
	"fmt"
	"net"
	"os"

	"github.com/twmb/franz-go/pkg/kfake"
)

// Config configures the embedded broker.
type Config struct {
	// Listen is the address to listen on. Default "127.0.0.1:0" (any free
	// port).
	Listen string
	// DataDir persists topics and groups; "" keeps everything in memory.
	DataDir string
	// Partitions is the default partition count of auto-created topics
	// (default 1).
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
	if cfg.Partitions > 0 {
		opts = append(opts, kfake.DefaultNumPartitions(cfg.Partitions))
	}
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
	return &Broker{cluster: c, addr: addrs[0]}, nil
}

// Addr is the bootstrap address, host:port.
func (b *Broker) Addr() string { return b.addr }

// Cluster exposes the underlying kfake cluster (tests use it to force
// compaction).
func (b *Broker) Cluster() *kfake.Cluster { return b.cluster }

// Close stops the broker, persisting its data when it has a directory.
func (b *Broker) Close() { b.cluster.Close() }
