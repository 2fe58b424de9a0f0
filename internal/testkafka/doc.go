// Package testkafka gives integration tests a Kafka cluster and helpers
// to produce and read records over real TCP.
//
// Place in the flow: test-only support for engine/, cmd/sluice and
// server/ tests. By default every test gets its own embedded broker
// (kfake) on loopback; with SLUICE_TEST_BROKERS=host:port set, tests use
// that cluster instead (for example Apache Kafka started by scripts/kafka),
// and Name makes topic and service names unique so tests never collide.
//
// Example:
//
//	brokers := testkafka.Brokers(t)
//	topic := testkafka.Name(t, "bookings")
//	testkafka.Produce(t, brokers, &kgo.Record{Topic: topic, Value: []byte(`{}`)})
package testkafka
