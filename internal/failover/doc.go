// Package failover retries the Kafka lookups Sluice makes outside the
// client's own retry loops — the offsets a restore, the command topic and
// the instance registry start from — while a broker dies and its
// partitions get new leaders.
//
// Place in the flow: below state/ (changelog restores), engine/ (the
// command topic, pull queries on streams) and cluster/ (the instance
// registry). franz-go retries produce and fetch across a leader change by
// itself, but a sharded admin request (ListOffsets) sent to a leader that
// just died fails at once with the dial error; without this package a
// restore that begins in that moment fails its query (seen on the
// three-node cluster of docs/faults.md).
//
// Example:
//
//	ends, err := failover.Offsets(ctx, "end offsets of "+topic, func(ctx context.Context) (kadm.ListedOffsets, error) {
//		return adm.ListEndOffsets(ctx, topic)
//	})
package failover
