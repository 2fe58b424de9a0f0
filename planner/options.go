package planner

// The session settings planning reads.

import (
	"time"

	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/udf"
)

// Options are the service-wide settings planning needs.
type Options struct {
	// ServiceID prefixes internal topic names. Default "default".
	ServiceID string
	// TableRetention is the session property sluice.table.retention
	// (TableRetentionProperty): the retention of persistent non-windowed
	// aggregations whose statement sets no WITH (RETENTION=…). Same
	// syntax as RETENTION. Default "": keys are kept forever.
	TableRetention string
	// PlanVersion is the planner version a persistent query's command was
	// issued under (PlanVersionProperty): 1 plans as Sluice did before
	// version 2 (a GROUP BY repartition keyed by fields named
	// KSQL_INTERNAL_GROUP_n), so that a query whose state was partitioned
	// that way keeps its partitioning when its command is replayed; 2
	// plans a join's WHERE whole above the join (no predicate-pushdown
	// rule), so that a query whose repartition topics and join stores hold
	// unfiltered rows keeps filtering them after the join; 3 keeps a
	// HOPPING EMIT FINAL aggregation's state per window (no slices), so
	// that a query whose store holds windows keeps reading windows; 0 or
	// CurrentPlanVersion plans as today.
	PlanVersion int
	// Compat is the session property sluice.compat (CompatProperty):
	// "ksqldb" reproduces ksqlDB behaviour where Sluice deliberately
	// differs; "" or "sluice" is Sluice's own.
	Compat string
	// TimestampThrowOnInvalid is ksqlDB's session property
	// ksql.timestamp.throw.on.invalid (TimestampThrowOnInvalidProperty):
	// a record whose event time cannot be read fails the query instead of
	// being counted and skipped. Default false.
	TimestampThrowOnInvalid bool
	// IdleTimeout is the session property sluice.idle.timeout
	// (IdleTimeoutProperty): the idle timeout of queries whose statement
	// sets no WITH (IDLE_TIMEOUT=…). Same syntax. Default "": stream
	// time moves only with records.
	IdleTimeout string
	// DefaultKeyFormat and DefaultValueFormat are ksqlDB's session
	// properties ksql.persistence.default.format.key and .value
	// (DefaultKeyFormatProperty, DefaultValueFormatProperty): the formats
	// of a CREATE with columns whose WITH clause names none. Defaults
	// KAFKA and "" (the statement must name a value format).
	DefaultKeyFormat   string
	DefaultValueFormat string
	// NewQueryPlanner is ksqlDB's session property
	// ksql.new.query.planner.enabled (NewQueryPlannerProperty). With it a
	// stream's CREATE STREAM AS SELECT of a plain projection may leave the
	// source's key columns out: the result then has no key. Default
	// false: each key column must be selected.
	NewQueryPlanner bool
	// PullKeyLookupsOnly is ksqlDB's session property
	// ksql.query.pull.table.scan.enabled (PullTableScanProperty) set to
	// false: a pull query on a table must look its keys up or read a key
	// range, every disjunct of its WHERE pinning each key column with = or
	// IN, or bounding it once with <, <=, > or >=, to values it can
	// compute (the pull checks); a range that would need a table scan
	// (PullRangeScansDisabled, a windowed table) is refused. Default
	// false: any WHERE, answered by a scan of the table's store when it
	// pins no key.
	PullKeyLookupsOnly bool
	// PullRangeScansDisabled is ksqlDB's session property
	// ksql.query.pull.range.scan.enabled (PullRangeScanProperty) set to
	// false: a pull query whose WHERE bounds the key with <, <=, >, >=
	// or BETWEEN scans the table's store instead of reading the range.
	// Default false: ranges are read by ordered key ranges.
	PullRangeScansDisabled bool
	// PullLimitDisabled is ksqlDB's session property
	// ksql.query.pull.limit.clause.enabled (PullLimitProperty) set to
	// false: the pull checks refuse LIMIT in pull queries. Default false.
	PullLimitDisabled bool
	// NoStreamScans says the engine cannot scan a stream's topic (an
	// offline engine, as `sluice test` runs): a SELECT without EMIT on a
	// stream is then a push query, which the pull checks leave alone.
	// Default false: such a SELECT is a pull query scanning the topic.
	NoStreamScans bool
	// SkipRules names rules the planning leaves out. Only tests set it:
	// to plan a query as an older Sluice did, before a rule existed, and
	// check what the new plan does with what the old one left.
	SkipRules []string
	// TableStore, when set, names the state store keeping a table for
	// pull queries (the store of the query keeping it, which only the
	// engine knows), or refuses a pull query on a table no query keeps
	// with the error it returns. A pull query on a table asks it after
	// the pull checks, before the rest of its planning, and its store
	// read names the store. Default nil: nothing is asked and the store
	// read names no store.
	TableStore func(table string) (store string, err error)
	// StateCacheBytes is the property statestore.cache.max.bytes
	// (StateCacheBytesProperty): how many bytes of decoded state an
	// aggregate keeps cached per partition (exec.AggregateNode.CacheBytes).
	// Default 0: exec.DefaultAggCacheBytes; below 0: no cache.
	StateCacheBytes int64
	// UDFLimits bound each call of a user-defined function the query
	// makes (sluice.udf.timeout, sluice.udf.memory). Default zero: no
	// time limit, udf.DefaultMemoryBytes of memory.
	UDFLimits udf.Limits
	// FunctionConfig holds the properties named ksql.functions.* that
	// configure built-in functions (COLLECT_LIST's and COLLECT_SET's caps),
	// as ksqlDB hands them to its functions. Default nil: each function's
	// defaults.
	FunctionConfig expr.FunctionConfig
	// WrapSingleValues is ksqlDB's property ksql.persistence.wrap.single.values
	// (WrapSingleValuesProperty): the WRAP_SINGLE_VALUE of a CREATE, CREATE
	// … AS SELECT or INSERT INTO's new sink whose WITH clause sets none and
	// whose value has one column, where its format supports the setting
	// (format.ValueWrapping). Default nil: each format's own default.
	WrapSingleValues *bool
	// OutputTopicPrefix is ksqlDB's property ksql.output.topic.name.prefix
	// (OutputTopicPrefixProperty): what a CREATE … AS SELECT that names no
	// KAFKA_TOPIC puts before its name to name its topic. Default "".
	OutputTopicPrefix string
}

// OutputTopicPrefixProperty names the property behind
// Options.OutputTopicPrefix.
const OutputTopicPrefixProperty = "ksql.output.topic.name.prefix"

// WrapSingleValuesProperty names the property behind
// Options.WrapSingleValues.
const WrapSingleValuesProperty = "ksql.persistence.wrap.single.values"

// StateCacheBytesProperty names the property behind
// Options.StateCacheBytes (Kafka Streams' name for its record cache).
const StateCacheBytesProperty = "statestore.cache.max.bytes"

// DefaultKeyFormatProperty and DefaultValueFormatProperty name the
// session properties behind Options.DefaultKeyFormat and
// Options.DefaultValueFormat.
const (
	DefaultKeyFormatProperty   = "ksql.persistence.default.format.key"
	DefaultValueFormatProperty = "ksql.persistence.default.format.value"
)

// NewQueryPlannerProperty names the session property behind
// Options.NewQueryPlanner.
const NewQueryPlannerProperty = "ksql.new.query.planner.enabled"

// TableRetentionProperty names the session property behind
// Options.TableRetention.
const TableRetentionProperty = "sluice.table.retention"

// PlanVersionProperty names the command property behind
// Options.PlanVersion: the engine stamps every new command with
// CurrentPlanVersion, and a command replayed without one was issued under
// version 1. Version 2 names a GROUP BY repartition's key fields as
// ksqlDB does (the grouped column's name, or a generated KSQL_COL_n), so
// a key lands in the partition ksqlDB's would. Version 3 moves the parts
// of a join's WHERE that read one stream input onto that input
// (predicatePushdownRule): the rows its repartition topic and join store
// hold change. Version 4 keeps a HOPPING EMIT FINAL aggregation's state
// per slice of the advance (slicedWindows): its store holds slices, not
// windows.
const (
	PlanVersionProperty = "sluice.plan.version"
	CurrentPlanVersion  = 4
)

// CompatProperty names the session property behind Options.Compat, and
// CompatKsqlDB its value that follows ksqlDB. The differences today:
// with EMIT FINAL, ksqlDB drops a closed time window whose start is more
// than the retention behind the newest window start (its window store
// expired it before the result was emitted); Sluice emits every window.
// A push query reading ROWPARTITION or ROWOFFSET is never a scalable one
// in ksqlDB; Sluice serves it from the registry, which keeps where each
// output record went.
const (
	CompatProperty = "sluice.compat"
	CompatKsqlDB   = "ksqldb"
)

// TimestampThrowOnInvalidProperty names the session property behind
// Options.TimestampThrowOnInvalid.
const TimestampThrowOnInvalidProperty = "ksql.timestamp.throw.on.invalid"

// DefaultGrace bounds the grace period of an EMIT CHANGES window that
// states none: ksqlDB's 24 hours, less the window's size.
const DefaultGrace = 24 * time.Hour
