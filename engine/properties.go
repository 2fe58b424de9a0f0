package engine

import (
	"context"
	"fmt"
	"maps"
	"math"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/planner"
	"github.com/sluice-sql/sluice/state"
	"github.com/sluice-sql/sluice/udf"
)

// The property table: every property the engine, the planner's options
// and the runner's configuration read is declared once below, with its
// default, and read only through it, so SET, SHOW PROPERTIES and what
// runs agree.

// PropertyScope says what a property configures, and so whether the
// command log carries it.
type PropertyScope int

const (
	// ScopeSession properties shape the statements of the session that
	// sets them: pull and push queries, ASSERT, EXPLAIN's warnings.
	ScopeSession PropertyScope = iota
	// ScopeQuery properties shape the persistent queries a statement
	// creates: read when a query is planned and started.
	ScopeQuery
	// ScopeInstance properties configure this process, not a query: a
	// command never carries them, so a replay elsewhere runs with that
	// instance's own.
	ScopeInstance
)

func (s PropertyScope) String() string {
	switch s {
	case ScopeQuery:
		return "query"
	case ScopeInstance:
		return "instance"
	}
	return "session"
}

// PropertyDef declares one property.
type PropertyDef struct {
	// Name is the lower-case name SHOW PROPERTIES lists.
	Name string
	// Aliases are other names of the same property, read when Name is
	// not set: ksqlDB's ksql.streams. forms of Kafka Streams configs.
	Aliases []string
	Scope   PropertyScope
	// Type names the value's type as Kafka's configs do (BOOLEAN, INT,
	// LONG, DOUBLE, STRING) or DURATION.
	Type string
	Doc  string
	// def is the value in force when the property is not set; it may
	// depend on other properties (commit.interval.ms on the guarantee).
	def func(props map[string]string) string
	// check refuses a malformed value.
	check func(name, value string) error
	// defaultDoc describes a default that is not one fixed text.
	defaultDoc string
	// strict says the property's readers fail a statement on a malformed
	// value rather than run it with the default.
	strict bool
}

// DefaultDoc describes the default for people: the fixed value, or how
// it is worked out, "" for none.
func (p *PropertyDef) DefaultDoc() string {
	if p.defaultDoc != "" {
		return p.defaultDoc
	}
	return p.def(nil)
}

// Default is the value in force when the property is not set among props.
func (p *PropertyDef) Default(props map[string]string) string { return p.def(props) }

// Check returns why value is not one the property takes, nil when it is.
func (p *PropertyDef) Check(value string) error { return p.check(p.Name, value) }

// lookup is the value set for p under its name or an alias, in that order.
func (p *PropertyDef) lookup(props map[string]string) (string, bool) {
	if v, ok := props[p.Name]; ok {
		return v, true
	}
	for _, a := range p.Aliases {
		if v, ok := props[a]; ok {
			return v, true
		}
	}
	return "", false
}

// value is the value in force among props: the one set when it is
// valid, else the default. A malformed value can arrive only with a
// request's or the configuration's properties (SET refuses it); such a
// value of a property whose reader cannot fail runs with the default.
func (p *PropertyDef) value(props map[string]string) string {
	if v, ok := p.lookup(props); ok && p.check(p.Name, v) == nil {
		return strings.TrimSpace(v)
	}
	return p.def(props)
}

// shown is the value SHOW PROPERTIES lists: the one in force, or, of a
// strict property, a malformed value as it was set (its readers refuse it).
func (p *PropertyDef) shown(props map[string]string) string {
	if p.strict {
		return p.raw(props)
	}
	return p.value(props)
}

// raw is the value set among props, as it was set, or the default: for
// readers that check it themselves (the planner's durations).
func (p *PropertyDef) raw(props map[string]string) string {
	if v, ok := p.lookup(props); ok {
		return v
	}
	return p.def(props)
}

// checked is the value set among props, or the default; a malformed one
// is an error, for readers that fail the statement on it.
func (p *PropertyDef) checked(props map[string]string) (string, error) {
	v, ok := p.lookup(props)
	if !ok || strings.TrimSpace(v) == "" {
		return p.def(props), nil
	}
	if err := p.check(p.Name, v); err != nil {
		return "", err
	}
	return strings.TrimSpace(v), nil
}

// PropertyError is a property name or value SET refuses, in ksqlDB's
// words. It wraps planner.ErrInvalid.
type PropertyError struct{ msg string }

func (e *PropertyError) Error() string { return e.msg }
func (e *PropertyError) Unwrap() error { return planner.ErrInvalid }

// invalidValue is Kafka's ConfigException text, which ksqlDB answers.
func invalidValue(name, value, why string) error {
	return &PropertyError{msg: fmt.Sprintf("Invalid value %s for configuration %s: %s", value, name, why)}
}

func fixed(v string) func(map[string]string) string {
	return func(map[string]string) string { return v }
}

func boolean(name, v string) error {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "false":
		return nil
	}
	return invalidValue(name, v, "Expected value to be either true or false")
}

// number accepts a whole number of bits bits (32: INT, 64: LONG), at least min.
func number(bits int, min int64) func(name, v string) error {
	typ := "LONG"
	if bits == 32 {
		typ = "INT"
	}
	return func(name, v string) error {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, bits)
		if err != nil {
			return invalidValue(name, v, "Not a number of type "+typ)
		}
		if n < min {
			return invalidValue(name, v, fmt.Sprintf("Value must be at least %d", min))
		}
		return nil
	}
}

// oneOf accepts values, in any case (Sluice always has).
func oneOf(values ...string) func(name, v string) error {
	return func(name, v string) error {
		for _, w := range values {
			if strings.EqualFold(strings.TrimSpace(v), w) {
				return nil
			}
		}
		return invalidValue(name, v, "String must be one of: "+strings.Join(values, ", "))
	}
}

func anyString(string, string) error { return nil }

func duration(name, v string) error {
	_, err := planner.ParseDuration("'"+name+"'", v)
	return err
}

// consumerAliases are a consumer config's other names: with the consumer.
// prefix, ksqlDB's ksql.streams. form, and both.
func consumerAliases(name string) []string {
	return []string{"consumer." + name, "ksql.streams." + name, "ksql.streams.consumer." + name}
}

// streams is a Kafka Streams config's names: its own and ksqlDB's
// ksql.streams. form.
func streams(name string) (string, []string) { return name, []string{"ksql.streams." + name} }

const (
	autoOffsetResetProperty     = "auto.offset.reset"
	processingGuaranteeProperty = "processing.guarantee"
	commitIntervalProperty      = "commit.interval.ms"
	numStreamThreadsProperty    = "num.stream.threads"
	transactionTimeoutProperty  = "transaction.timeout.ms"
	sessionTimeoutProperty      = "session.timeout.ms"
	compressionTypeProperty     = "compression.type"
	fetchMaxWaitProperty        = "fetch.max.wait.ms"
	fetchMinBytesProperty       = "fetch.min.bytes"
	fetchMaxBytesProperty       = "fetch.max.bytes"
	maxPartitionFetchProperty   = "max.partition.fetch.bytes"

	// Sluice commits every second, and every 100 ms under exactly-once,
	// where results become visible to read_committed consumers only when
	// their transaction commits (Kafka Streams' defaults are 30 s and 100 ms).
	defaultCommitInterval            = time.Second
	defaultExactlyOnceCommitInterval = 100 * time.Millisecond
)

func declare(name string, aliases []string, scope PropertyScope, typ string, def func(map[string]string) string, check func(string, string) error, doc string) *PropertyDef {
	return &PropertyDef{Name: name, Aliases: aliases, Scope: scope, Type: typ, def: def, check: check, Doc: doc}
}

// failsOnMalformed marks p strict.
func (p *PropertyDef) failsOnMalformed() *PropertyDef {
	p.strict = true
	return p
}

// describeDefault sets how DefaultDoc describes a default that depends
// on other properties or on the machine.
func (p *PropertyDef) describeDefault(doc string) *PropertyDef {
	p.defaultDoc = doc
	return p
}

var (
	propAutoOffsetReset = declare(autoOffsetResetProperty, []string{"ksql.streams." + autoOffsetResetProperty}, ScopeQuery, "STRING",
		fixed("latest"), oneOf("latest", "earliest"),
		"Where a query without committed offsets starts reading its inputs.")
	propProcessingGuarantee = declare(processingGuaranteeProperty, []string{"ksql.streams." + processingGuaranteeProperty}, ScopeQuery, "STRING",
		fixed("at_least_once"), oneOf("at_least_once", "exactly_once", "exactly_once_beta", "exactly_once_v2"),
		"at_least_once, or exactly-once (any exactly_once form): a Kafka transaction per commit interval.")
	propCommitInterval = declare(commitIntervalProperty, []string{"ksql.streams." + commitIntervalProperty}, ScopeQuery, "LONG",
		func(props map[string]string) string {
			if exactlyOnce(props) {
				return strconv.FormatInt(defaultExactlyOnceCommitInterval.Milliseconds(), 10)
			}
			return strconv.FormatInt(defaultCommitInterval.Milliseconds(), 10)
		}, number(64, 1),
		"How often, in milliseconds, a query flushes its outputs and commits its state and offsets.").
		describeDefault("1000; 100 under exactly-once")
	propTransactionTimeout = declare(transactionTimeoutProperty,
		[]string{"ksql.streams." + transactionTimeoutProperty, "producer." + transactionTimeoutProperty, "ksql.streams.producer." + transactionTimeoutProperty},
		ScopeQuery, "INT", fixed(strconv.FormatInt(exec.DefaultTransactionTimeout.Milliseconds(), 10)), number(32, 1),
		"Under exactly-once, how long, in milliseconds, a query's transaction may stay open before its coordinator aborts it: how long an instance that crashed or was cut off can hold back read_committed readers and the instance taking over its partitions. A commit of a query behind its input waits at most a quarter of it. Kafka refuses more than its brokers' transaction.max.timeout.ms (15 minutes by default).")
	propSessionTimeout = declare(sessionTimeoutProperty,
		consumerAliases(sessionTimeoutProperty),
		ScopeQuery, "INT", fixed(strconv.FormatInt(exec.DefaultSessionTimeout.Milliseconds(), 10)), number(32, 1),
		"How long, in milliseconds, an instance that stopped heartbeating keeps a query's partitions before its group gives them to the others (Kafka's default is 45000). Kafka refuses a value outside its brokers' group.min.session.timeout.ms and group.max.session.timeout.ms (6 s and 30 min by default).")
	propCompressionType = declare(compressionTypeProperty,
		[]string{"ksql.streams." + compressionTypeProperty, "producer." + compressionTypeProperty, "ksql.streams.producer." + compressionTypeProperty},
		ScopeQuery, "STRING", fixed(exec.DefaultCompression), oneOf(exec.Compressions...),
		"How a query's producer compresses the batches it writes to its outputs, repartition topics and changelogs: none (Kafka's producer default), gzip, snappy, lz4 or zstd. Compression spends the query's CPU (and the broker's, which checks each batch) to save network and disk.")
	propFetchMaxWait = declare(fetchMaxWaitProperty, consumerAliases(fetchMaxWaitProperty), ScopeQuery, "INT",
		func(props map[string]string) string {
			return strconv.FormatInt(min(commitInterval(props), 500*time.Millisecond).Milliseconds(), 10)
		}, number(32, 0),
		"How long, in milliseconds, a query's fetch waits at the broker for fetch.min.bytes of data (at least 10).").
		describeDefault("500, or the commit interval when shorter")
	propFetchMinBytes = declare(fetchMinBytesProperty, consumerAliases(fetchMinBytesProperty), ScopeQuery, "INT",
		fixed("1"), number(32, 0),
		"How many bytes a query's fetch waits for (up to fetch.max.wait.ms) before the broker answers.")
	propFetchMaxBytes = declare(fetchMaxBytesProperty, consumerAliases(fetchMaxBytesProperty), ScopeQuery, "INT",
		fixed("52428800"), number(32, 1),
		"At most how many bytes one fetch of a query returns, over all its partitions (the first batch goes whole).")
	// Unset, a query that keeps state reads half as much
	// (exec.statefulPartitionFetch).
	propMaxPartitionFetch = declare(maxPartitionFetchProperty, consumerAliases(maxPartitionFetchProperty), ScopeQuery, "INT",
		fixed("1048576"), number(32, 1),
		"At most how many bytes one fetch of a query returns of one partition (the first batch goes whole): with fetch.max.bytes, what a query holds of its input as it reads ahead.").
		describeDefault("1048576 (Kafka's); 524288 for a query that keeps state (an aggregation, a join)")
	propNumStreamThreads = declare(numStreamThreadsProperty, []string{"ksql.streams." + numStreamThreadsProperty}, ScopeQuery, "INT",
		func(map[string]string) string { return strconv.Itoa(runtime.GOMAXPROCS(0)) }, number(32, 1),
		"How many of a query's tasks process records at once on this instance.").
		describeDefault("one per CPU")
	propStandbyReplicas = declare(StandbyReplicasProperty, []string{"ksql.streams." + StandbyReplicasProperty}, ScopeQuery, "INT",
		fixed("0"), number(32, 0),
		"How many instances besides a partition's owner keep a standby copy of its state.")
	propTableRetention = declare(planner.TableRetentionProperty, nil, ScopeQuery, "DURATION",
		fixed(""), duration,
		"The default RETENTION of aggregate tables (none: keys are kept).").failsOnMalformed()
	propIdleTimeout = declare(planner.IdleTimeoutProperty, nil, ScopeQuery, "DURATION",
		fixed(""), duration,
		"The default IDLE_TIMEOUT of queries (none).").failsOnMalformed()
	propCompat = declare(planner.CompatProperty, nil, ScopeQuery, "STRING",
		fixed("sluice"), oneOf("sluice", planner.CompatKsqlDB),
		"ksqldb reproduces ksqlDB where Sluice deliberately differs: EMIT FINAL drops a closed window already past retention; a push query reading ROWPARTITION or ROWOFFSET is not a scalable one.")
	propTimestampThrow = declare(planner.TimestampThrowOnInvalidProperty, nil, ScopeQuery, "BOOLEAN",
		fixed("false"), boolean,
		"true fails a query on a record whose event time cannot be read, instead of skipping it.")
	propDefaultKeyFormat = declare(planner.DefaultKeyFormatProperty, nil, ScopeQuery, "STRING",
		fixed(format.Kafka), anyString,
		"The key format of a CREATE without KEY_FORMAT or FORMAT.")
	propDefaultValueFormat = declare(planner.DefaultValueFormatProperty, nil, ScopeQuery, "STRING",
		fixed(""), anyString,
		"The value format of a CREATE without VALUE_FORMAT or FORMAT (none: the statement must name one).")
	propNewQueryPlanner = declare(planner.NewQueryPlannerProperty, nil, ScopeQuery, "BOOLEAN",
		fixed("false"), boolean,
		"ksqlDB's new planner: accepted for its tests; Sluice plans alike.")
	propPushV2Registry = declare(PushV2RegistryProperty, nil, ScopeQuery, "BOOLEAN",
		fixed("true"), boolean,
		"false creates persistent queries without the registry scalable push queries subscribe to.")
	propStallTimeout = declare(StallTimeoutProperty, nil, ScopeQuery, "DURATION",
		fixed(exec.DefaultStallTimeout.String()), checkStallTimeout,
		"How long a partition with input may go without committed progress before its query counts as stalled (a duration or milliseconds).").failsOnMalformed()
	propHotKeyShare = declare(HotKeyShareProperty, nil, ScopeSession, "DOUBLE",
		fixed(strconv.FormatFloat(defaultHotKeyShare, 'g', -1, 64)), checkHotKeyShare,
		"The share of a query's records on an instance one key may carry before DESCRIBE EXTENDED and EXPLAIN warn.").failsOnMalformed()
	propPullTableScan = declare(planner.PullTableScanProperty, nil, ScopeSession, "BOOLEAN",
		fixed("true"), boolean,
		"false limits pull queries on tables to key lookups.")
	propPullRangeScan = declare(planner.PullRangeScanProperty, nil, ScopeSession, "BOOLEAN",
		fixed("true"), boolean,
		"false answers a pull query bounding the key with <, <=, >, >= or BETWEEN by a table scan instead of reading the key range.")
	propPullLimit = declare(planner.PullLimitProperty, nil, ScopeSession, "BOOLEAN",
		fixed("true"), boolean,
		"false refuses LIMIT in pull queries.")
	propPushV2Enabled = declare(PushV2EnabledProperty, nil, ScopeSession, "BOOLEAN",
		fixed("false"), boolean,
		"true runs an eligible push query from a persistent query's output instead of a consumer of its own.")
	propPushV2Buffer = declare(PushV2BufferProperty, nil, ScopeSession, "INT",
		fixed(strconv.Itoa(exec.PushBufferSize)), checkPushBuffer,
		"How many records a scalable push query may fall behind before it is dropped.").failsOnMalformed()
	propStandbyReads = declare(PullStandbyReadsProperty, nil, ScopeSession, "BOOLEAN",
		fixed("false"), boolean,
		"true lets a pull query read a standby's state when the owner cannot answer.")
	propMaxOffsetLag = declare(PullMaxOffsetLagProperty, nil, ScopeSession, "LONG",
		fixed(strconv.FormatInt(math.MaxInt64, 10)), checkMaxOffsetLag,
		"How many offsets a standby's store may lag its changelog and still answer pull queries.").failsOnMalformed()
	propAssertTopicTimeout = declare(AssertTopicTimeoutProperty, nil, ScopeSession, "LONG",
		fixed(strconv.FormatInt(defaultAssertTimeout.Milliseconds(), 10)), checkMillis,
		"ASSERT TOPIC's timeout, in milliseconds, when the statement gives none.").failsOnMalformed()
	propAssertSchemaTimeout = declare(AssertSchemaTimeoutProperty, nil, ScopeSession, "LONG",
		fixed(strconv.FormatInt(defaultAssertTimeout.Milliseconds(), 10)), checkMillis,
		"ASSERT SCHEMA's timeout, in milliseconds, when the statement gives none.").failsOnMalformed()
	propStateCacheBytes = declare(planner.StateCacheBytesProperty, []string{"ksql.streams." + planner.StateCacheBytesProperty}, ScopeQuery, "LONG",
		fixed(strconv.FormatInt(exec.DefaultAggCacheBytes, 10)), number(64, 0),
		"Bytes of decoded state each partition of an aggregation (time windows or none) keeps cached, written to its store once per commit; 0 turns the cache off. A COUNT_DISTINCT's values, each a state entry of its own, are remembered as stored in up to 16 times as many bytes beside it. Per partition, where Kafka Streams' bound is for all threads; it never holds an update back (nor does cache.max.bytes.buffering, which Sluice does not read).")
	propUDFTimeout = declare(UDFTimeoutProperty, nil, ScopeQuery, "DURATION",
		fixed(udf.DefaultTimeout.String()), checkUDFTimeout,
		"How long one call of a user-defined function may run (a duration or milliseconds; 0: no limit, which saves the time limit's cost of about a microsecond a call but lets a looping function stall its query); a call past it fails its record as a bad record.").failsOnMalformed()
	propUDFMemory = declare(UDFMemoryProperty, nil, ScopeQuery, "LONG",
		fixed(strconv.FormatInt(udf.DefaultMemoryBytes, 10)), number(64, 65536),
		"Bytes of linear memory each instance of a user-defined function's WebAssembly module may grow to (rounded down to 64 KiB pages); a call that runs out fails its record as a bad record.").failsOnMalformed()
	propWrapSingleValues = declare(planner.WrapSingleValuesProperty, nil, ScopeQuery, "BOOLEAN",
		fixed(""), boolean,
		"The WRAP_SINGLE_VALUE of a CREATE or CREATE … AS SELECT whose WITH clause sets none and whose value has one column, where its format supports it (none: each format's own, wrapped but for DELIMITED and KAFKA).").failsOnMalformed()
	propOutputTopicPrefix = declare(planner.OutputTopicPrefixProperty, nil, ScopeQuery, "STRING",
		fixed(""), anyString,
		"What a CREATE … AS SELECT naming no KAFKA_TOPIC puts before its name to name its topic.")
	propCollectListLimit = declare(expr.CollectListLimitProperty, nil, ScopeQuery, "INT",
		fixed("1000"), number(32, math.MinInt32),
		"The most values COLLECT_LIST keeps per group; later ones are left out. Negative: no cap (ksqlDB's default).").failsOnMalformed()
	propCollectSetLimit = declare(expr.CollectSetLimitProperty, nil, ScopeQuery, "INT",
		fixed("1000"), number(32, math.MinInt32),
		"The most distinct values COLLECT_SET keeps per group; later ones are left out. Negative: no cap (ksqlDB's default).").failsOnMalformed()
	propMinFreeBytes = declare(MinFreeBytesProperty, nil, ScopeInstance, "LONG",
		fixed(strconv.FormatInt(state.DefaultMinFreeBytes, 10)), checkMinFree,
		"Free disk space state commits leave untouched; below it stateful queries fail with \"disk full\"; -1 turns the check off.").failsOnMalformed()
)

// propertyTable is every declared property, sorted by name.
var propertyTable = sortedProperties(
	propAutoOffsetReset, propProcessingGuarantee, propCommitInterval, propTransactionTimeout, propSessionTimeout, propCompressionType, propFetchMaxWait, propFetchMinBytes, propFetchMaxBytes, propMaxPartitionFetch, propNumStreamThreads, propStandbyReplicas,
	propTableRetention, propIdleTimeout, propCompat, propTimestampThrow, propDefaultKeyFormat, propDefaultValueFormat,
	propNewQueryPlanner, propPushV2Registry, propStallTimeout, propHotKeyShare, propPullTableScan, propPullRangeScan, propPullLimit,
	propPushV2Enabled, propPushV2Buffer, propStandbyReads, propMaxOffsetLag, propAssertTopicTimeout,
	propAssertSchemaTimeout, propMinFreeBytes, propStateCacheBytes, propUDFTimeout, propUDFMemory,
	propCollectListLimit, propCollectSetLimit, propWrapSingleValues, propOutputTopicPrefix,
)

// Properties of user-defined functions.
const (
	UDFTimeoutProperty = "sluice.udf.timeout"
	UDFMemoryProperty  = "sluice.udf.memory"
)

func parseUDFTimeout(v string) (time.Duration, error) {
	if ms, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
		if ms < 0 {
			return 0, fmt.Errorf("%w: '%s' is %q: want a duration of 0 or more", planner.ErrInvalid, UDFTimeoutProperty, v)
		}
		return time.Duration(ms) * time.Millisecond, nil
	}
	return planner.ParseDuration("'"+UDFTimeoutProperty+"'", v)
}

func checkUDFTimeout(_, v string) error {
	_, err := parseUDFTimeout(v)
	return err
}

// udfLimits reads sluice.udf.timeout and sluice.udf.memory; malformed
// values were refused by SET, so the defaults stand in for them here.
func udfLimits(props map[string]string) udf.Limits {
	l := udf.Limits{Timeout: udf.DefaultTimeout, MemoryBytes: udf.DefaultMemoryBytes}
	if d, err := parseUDFTimeout(propUDFTimeout.value(props)); err == nil {
		l.Timeout = d
	}
	if n, err := strconv.ParseInt(strings.TrimSpace(propUDFMemory.value(props)), 10, 64); err == nil {
		l.MemoryBytes = n
	}
	return l
}

func sortedProperties(ps ...*PropertyDef) []*PropertyDef {
	sort.Slice(ps, func(i, j int) bool { return ps[i].Name < ps[j].Name })
	return ps
}

// Properties returns the declared properties, sorted by name.
func Properties() []*PropertyDef { return append([]*PropertyDef(nil), propertyTable...) }

// LookupProperty finds a property by its name or an alias. Names are
// case-sensitive, as ksqlDB's and Kafka's: all are lower case.
func LookupProperty(name string) (*PropertyDef, bool) {
	name = strings.TrimSpace(name)
	for _, p := range propertyTable {
		if p.Name == name {
			return p, true
		}
		for _, a := range p.Aliases {
			if a == name {
				return p, true
			}
		}
	}
	return nil, false
}

// CheckSet returns why SET name=value is refused, nil when it is not: a
// declared property must take the value; any other name must be one
// ksqlDB accepts, a Kafka Streams, consumer or producer config with a
// value of its type or a ksql. config (see checkUndeclared). Properties
// that reach the engine otherwise (a request's, the configuration's) are
// not checked: ksqlDB passes those through to Kafka's configs.
func CheckSet(name, value string) error {
	p, ok := LookupProperty(name)
	if !ok {
		return checkUndeclared(name, value)
	}
	return p.check(strings.TrimSpace(name), value)
}

// UnsetNames are the lower-case names UNSET name removes: all of a
// declared property's, so that no other name of it stays in force, or
// name itself.
func UnsetNames(name string) []string {
	if p, ok := LookupProperty(name); ok {
		return append([]string{p.Name}, p.Aliases...)
	}
	return []string{strings.ToLower(name)}
}

// commandProps returns the session properties a command carries: all
// but the ones that configure this instance rather than a query, so a
// replay elsewhere plans and runs the query the same way.
func commandProps(props map[string]string) map[string]string {
	for _, p := range propertyTable {
		if p.Scope == ScopeInstance {
			delete(props, p.Name)
			for _, a := range p.Aliases {
				delete(props, a)
			}
		}
	}
	return props
}

// propertyList lists the properties in force (props): every declared
// one with the value its readers use, and any other set, marking those a
// request overrode, sorted by name.
func (e *Engine) propertyList(props, overridden map[string]string) *PropertyList {
	merged := map[string]Property{}
	for k, v := range props {
		_, over := overridden[k]
		merged[k] = Property{Name: k, Value: v, Overridden: over}
	}
	for _, p := range propertyTable {
		_, over := p.lookup(overridden)
		merged[p.Name] = Property{Name: p.Name, Value: p.shown(props), Overridden: over}
	}
	l := &PropertyList{Properties: make([]Property, 0, len(merged))}
	for _, p := range merged {
		l.Properties = append(l.Properties, p)
	}
	sort.Slice(l.Properties, func(i, j int) bool { return l.Properties[i].Name < l.Properties[j].Name })
	return l
}

// Typed readers. Those that cannot fail run a malformed value with the
// default (see value); the others fail the statement on it.

func propBool(props map[string]string, p *PropertyDef) bool {
	return strings.EqualFold(p.value(props), "true")
}

func exactlyOnce(props map[string]string) bool {
	return strings.HasPrefix(strings.ToLower(propProcessingGuarantee.value(props)), "exactly_once")
}

// atLeastOnce is props with the guarantee at_least_once.
func atLeastOnce(props map[string]string) map[string]string {
	out := maps.Clone(props)
	delete(out, propProcessingGuarantee.Name)
	for _, a := range propProcessingGuarantee.Aliases {
		delete(out, a)
	}
	return out
}

// millis is the value in force of a property in milliseconds (its check
// has accepted a whole number) as a duration.
func (p *PropertyDef) millis(props map[string]string) time.Duration {
	ms, _ := strconv.ParseInt(p.value(props), 10, 64)
	return time.Duration(ms) * time.Millisecond
}

func commitInterval(props map[string]string) time.Duration { return propCommitInterval.millis(props) }

func transactionTimeout(props map[string]string) time.Duration {
	return propTransactionTimeout.millis(props)
}

func sessionTimeout(props map[string]string) time.Duration { return propSessionTimeout.millis(props) }

// fetchConfig is the consumer's fetch sizes as properties set them.
func fetchConfig(props map[string]string) exec.FetchConfig {
	n := func(p *PropertyDef) int32 {
		v, _ := strconv.ParseInt(p.value(props), 10, 32)
		return int32(v)
	}
	return exec.FetchConfig{
		// 0 waits as little as the client can (10 ms); a zero MaxWait
		// would mean the default.
		MaxWait:           max(propFetchMaxWait.millis(props), time.Millisecond),
		MinBytes:          n(propFetchMinBytes),
		MaxBytes:          n(propFetchMaxBytes),
		MaxPartitionBytes: partitionFetch(props),
	}
}

// partitionFetch is max.partition.fetch.bytes when set (and valid), else
// 0: the query's runner picks by its shape (exec.FetchConfig).
func partitionFetch(props map[string]string) int32 {
	if v, ok := propMaxPartitionFetch.lookup(props); ok && propMaxPartitionFetch.check(propMaxPartitionFetch.Name, v) == nil {
		n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
		return int32(n)
	}
	return 0
}

func compressionType(props map[string]string) string {
	return strings.ToLower(strings.TrimSpace(propCompressionType.value(props)))
}

func streamThreads(props map[string]string) int {
	n, _ := strconv.Atoi(propNumStreamThreads.value(props))
	return n
}

func autoOffsetReset(props map[string]string) string {
	return strings.ToLower(propAutoOffsetReset.value(props))
}

// stateCacheBytes is the aggregate cache's bound as the planner takes
// it (planner.Options.StateCacheBytes): the property's 0, no cache, is
// below 0 there, where 0 is the default.
func stateCacheBytes(props map[string]string) int64 {
	n, _ := strconv.ParseInt(propStateCacheBytes.value(props), 10, 64)
	if n == 0 {
		return -1
	}
	return n
}

func standbyReplicas(props map[string]string) int {
	n, _ := strconv.Atoi(propStandbyReplicas.value(props))
	return n
}

// stallTimeout reads StallTimeoutProperty from the session's properties.
func stallTimeout(props map[string]string) (time.Duration, error) {
	v, err := propStallTimeout.checked(props)
	if err != nil {
		return 0, err
	}
	return parseStallTimeout(v)
}

func parseStallTimeout(v string) (time.Duration, error) {
	if ms, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
		if ms <= 0 {
			return 0, fmt.Errorf("%w: '%s' is %q: want a positive duration", planner.ErrInvalid, StallTimeoutProperty, v)
		}
		return time.Duration(ms) * time.Millisecond, nil
	}
	return planner.ParseDuration("'"+StallTimeoutProperty+"'", v)
}

func checkStallTimeout(_, v string) error {
	_, err := parseStallTimeout(v)
	return err
}

// hotKeyShare reads HotKeyShareProperty from the session's properties.
func hotKeyShare(props map[string]string) (float64, error) {
	v, err := propHotKeyShare.checked(props)
	if err != nil {
		return 0, err
	}
	return strconv.ParseFloat(v, 64)
}

func checkHotKeyShare(_, v string) error {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || f <= 0 || f > 1 {
		return fmt.Errorf("%w: %s is %q: want a share above 0 and at most 1", planner.ErrInvalid, HotKeyShareProperty, v)
	}
	return nil
}

// pushBufferSize is how many records a scalable push query's buffer holds.
func pushBufferSize(props map[string]string) (int, error) {
	v, err := propPushV2Buffer.checked(props)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(v)
}

func checkPushBuffer(_, v string) error {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n <= 0 {
		return fmt.Errorf("%w: %s: %q is not a positive number of records", planner.ErrInvalid, PushV2BufferProperty, v)
	}
	return nil
}

// maxOffsetLag is props' PullMaxOffsetLagProperty: -1 for no bound
// (ksqlDB's default, the largest LONG).
func maxOffsetLag(props map[string]string) (int64, error) {
	v, err := propMaxOffsetLag.checked(props)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n == math.MaxInt64 {
		return -1, err
	}
	return n, nil
}

func checkMaxOffsetLag(_, v string) error {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < 0 {
		return fmt.Errorf("%w: %s must be a number of offsets, 0 or more: %q", planner.ErrInvalid, PullMaxOffsetLagProperty, v)
	}
	return nil
}

// assertTimeout is the statement's timeout or the default p gives.
func assertTimeout(has bool, d time.Duration, props map[string]string, p *PropertyDef) (time.Duration, error) {
	if has {
		return d, nil
	}
	v, err := p.checked(props)
	if err != nil {
		return 0, err
	}
	ms, err := strconv.ParseInt(v, 10, 64)
	return time.Duration(ms) * time.Millisecond, err
}

func checkMillis(name, v string) error {
	ms, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || ms < 0 {
		return fmt.Errorf("%w: '%s' is %q: want milliseconds", planner.ErrInvalid, name, v)
	}
	return nil
}

// minFreeBytes is the instance's MinFreeBytesProperty.
func minFreeBytes(props map[string]string) (int64, error) {
	v, err := propMinFreeBytes.checked(props)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(v, 10, 64)
}

func checkMinFree(_, v string) error {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < -1 {
		return fmt.Errorf("%w: '%s' must be a number of bytes, or -1 to turn the check off, not %q", planner.ErrInvalid, MinFreeBytesProperty, v)
	}
	return nil
}

// planOptions are the planner's options for a statement run with props.
func (e *Engine) planOptions(props map[string]string) planner.Options {
	return planner.Options{
		ServiceID:               e.cfg.ServiceID,
		SkipRules:               e.cfg.SkipPlannerRules,
		TableRetention:          propTableRetention.raw(props),
		TimestampThrowOnInvalid: propBool(props, propTimestampThrow),
		Compat:                  strings.ToLower(propCompat.value(props)),
		IdleTimeout:             propIdleTimeout.raw(props),
		DefaultKeyFormat:        strings.ToUpper(propDefaultKeyFormat.value(props)),
		DefaultValueFormat:      strings.ToUpper(propDefaultValueFormat.value(props)),
		NewQueryPlanner:         propBool(props, propNewQueryPlanner),
		PullKeyLookupsOnly:      !propBool(props, propPullTableScan),
		PullRangeScansDisabled:  !propBool(props, propPullRangeScan),
		PullLimitDisabled:       !propBool(props, propPullLimit),
		NoStreamScans:           !e.clu.scansTopics(),
		TableStore:              e.tableStore,
		StateCacheBytes:         stateCacheBytes(props),
		UDFLimits:               udfLimits(props),
		FunctionConfig:          functionConfig(props),
		WrapSingleValues:        optionalBool(props, propWrapSingleValues),
		OutputTopicPrefix:       propOutputTopicPrefix.raw(props),
		PlanVersion:             planVersion(props),
	}
}

// planVersion reads the plan version a command carries
// (planner.PlanVersionProperty); 0, the current one, when it has none.
func planVersion(props map[string]string) int {
	n, _ := strconv.Atoi(props[planner.PlanVersionProperty])
	return n
}

// optionalBool reads a BOOLEAN property with no default: nil when unset
// or malformed.
func optionalBool(props map[string]string, p *PropertyDef) *bool {
	switch strings.ToLower(strings.TrimSpace(p.raw(props))) {
	case "true":
		b := true
		return &b
	case "false":
		b := false
		return &b
	}
	return nil
}

// functionConfig gathers the properties that configure built-in
// functions: every ksql.functions.* one set, and the declared ones with
// the values their declarations give.
func functionConfig(props map[string]string) expr.FunctionConfig {
	cfg := expr.FunctionConfig{}
	for k, v := range props {
		if strings.HasPrefix(strings.ToLower(k), expr.FunctionPropertyPrefix) {
			cfg[strings.ToLower(k)] = v
		}
	}
	for _, p := range []*PropertyDef{propCollectListLimit, propCollectSetLimit} {
		cfg[p.Name] = p.value(props)
	}
	return cfg
}

type overridesKey struct{}

// WithProperties returns a context whose statements run with props
// overriding the engine's session properties. A server passes each
// request's properties this way (ksqlDB's streamsProperties), so one
// client's `auto.offset.reset` does not change another's queries.
// Names are matched case-insensitively.
func WithProperties(ctx context.Context, props map[string]string) context.Context {
	if len(props) == 0 {
		return ctx
	}
	m := make(map[string]string, len(props)+len(overrides(ctx)))
	for k, v := range overrides(ctx) {
		m[k] = v
	}
	for k, v := range props {
		m[strings.ToLower(k)] = v
	}
	return context.WithValue(ctx, overridesKey{}, m)
}

func overrides(ctx context.Context) map[string]string {
	m, _ := ctx.Value(overridesKey{}).(map[string]string)
	return m
}

// setProperty runs SET name=value in sess: refused when CheckSet refuses
// it; an instance property takes effect at once.
func (e *Engine) setProperty(sess *session, name, value string) error {
	if err := CheckSet(name, value); err != nil {
		return err
	}
	if p, _ := LookupProperty(name); p == propMinFreeBytes {
		n, err := minFreeBytes(map[string]string{p.Name: value})
		if err != nil {
			return err
		}
		e.db.SetMinFreeBytes(n)
	}
	sess.set(name, value)
	return nil
}
