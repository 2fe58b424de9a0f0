// Package metrics exposes a running engine in Prometheus' text format, for
// the server's GET /metrics: per-query counters read from exec.Metrics at
// scrape time (records in and out, late records, errors by kind, state
// bytes, restores, consumer lag), and franz-go's own client metrics
// through its kprom plugin, one collector per Kafka client.
//
// It sits beside the engine, not inside it: the engine only offers a hook
// to add options to the Kafka clients it makes (engine.Config.ClientOpts).
package metrics
