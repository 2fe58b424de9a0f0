// Package broker runs the embedded Kafka-protocol broker (franz-go's
// kfake) that lets every Sluice command work on a fresh machine.
//
// Place in the flow: cmd/sluice starts it when no --brokers are given
// (`sluice run`, `sluice server`) or on its own (`sluice broker`), and the
// integration tests start it in-process. Clients reach it over loopback
// TCP exactly as they reach Kafka. With a data directory its topics,
// offsets and groups survive a restart.
//
// It behaves as a Kafka broker with default settings where clients notice:
// a topic created without a partition count gets one (num.partitions), and
// a producer's metadata request creates a topic it names that does not
// exist yet (auto.create.topics.enable), saved to the data directory at
// once. Sluice's own franz-go clients never ask for auto-creation.
//
// Example:
//
//	b, _ := broker.Start(broker.Config{Listen: "127.0.0.1:0", DataDir: "sluice-data/broker"})
//	defer b.Close()
//	kgo.NewClient(kgo.SeedBrokers(b.Addr()))
package broker
