package engine_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/internal/testkafka"
	"github.com/sluice-sql/sluice/planner"
)

// TestCheckSet checks which SET statements the property table refuses,
// and in which words: ksqlDB's for its properties and unknown names,
// Sluice's own for its properties.
func TestCheckSet(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		err         string // "" when accepted
	}{
		{"commit.interval.ms", "500", ""},
		// Names are case-sensitive, as ksqlDB's.
		{"Commit.Interval.MS", "500", "Not recognizable as ksql, streams, consumer, or producer property: 'Commit.Interval.MS' (names are case-sensitive: did you mean 'commit.interval.ms'?)"},
		{"ksql.streams.commit.interval.ms", "250", ""},
		{"commit.interval.ms", "abc", "Invalid value abc for configuration commit.interval.ms: Not a number of type LONG"},
		{"ksql.streams.commit.interval.ms", "0", "Invalid value 0 for configuration ksql.streams.commit.interval.ms: Value must be at least 1"},
		{"processing.guarantee", "exactly_once_v2", ""},
		{"processing.guarantee", "at_least_once", ""},
		{"processing.guarantee", "twice", "Invalid value twice for configuration processing.guarantee: String must be one of: at_least_once, exactly_once, exactly_once_beta, exactly_once_v2"},
		{"auto.offset.reset", "EARLIEST", ""},
		{"auto.offset.reset", "middle", "Invalid value middle for configuration auto.offset.reset: String must be one of: latest, earliest"},
		{"num.stream.threads", "4", ""},
		{"num.stream.threads", "99999999999", "Invalid value 99999999999 for configuration num.stream.threads: Not a number of type INT"},
		{"num.standby.replicas", "-1", "Invalid value -1 for configuration num.standby.replicas: Value must be at least 0"},
		{"ksql.query.pull.table.scan.enabled", "False", ""},
		{"ksql.query.pull.table.scan.enabled", "no", "Invalid value no for configuration ksql.query.pull.table.scan.enabled: Expected value to be either true or false"},
		{"sluice.compat", "ksqldb", ""},
		{"sluice.compat", "flink", "Invalid value flink for configuration sluice.compat: String must be one of: sluice, ksqldb"},
		{"sluice.idle.timeout", "1s", ""},
		{"sluice.idle.timeout", "soon", `invalid statement: 'sluice.idle.timeout' must be a duration such as '24h', '30m', '7d' or '24 HOURS'; "soon" needs a number before its unit`},
		{"sluice.stall.timeout", "2s", ""},
		{"sluice.stall.timeout", "5000", ""},
		{"sluice.stall.timeout", "0", `invalid statement: 'sluice.stall.timeout' is "0": want a positive duration`},
		{"sluice.hot.key.share", "2", `invalid statement: sluice.hot.key.share is "2": want a share above 0 and at most 1`},
		{"sluice.state.min.free.bytes", "-1", ""},
		{"sluice.state.min.free.bytes", "lots", `invalid statement: 'sluice.state.min.free.bytes' must be a number of bytes, or -1 to turn the check off, not "lots"`},
		{"ksql.assert.topic.default.timeout.ms", "soon", `invalid statement: 'ksql.assert.topic.default.timeout.ms' is "soon": want milliseconds`},
		{"ksql.query.pull.max.allowed.offset.lag", "-5", `invalid statement: ksql.query.pull.max.allowed.offset.lag must be a number of offsets, 0 or more: "-5"`},
		{"ksql.persistence.default.format.value", "json", ""},
		{"sluice.query.push.v2.buffer.records", "none", `invalid statement: sluice.query.push.v2.buffer.records: "none" is not a positive number of records`},
		{"no.such.property", "1", "Not recognizable as ksql, streams, consumer, or producer property: 'no.such.property'"},
		{"unknown", "1", "Not recognizable as ksql, streams, consumer, or producer property: 'unknown'"},
		{"ksql.streams.no.such.property", "1", "Not recognizable as ksql, streams, consumer, or producer property: 'ksql.streams.no.such.property'"},
		// Kafka Streams, consumer and producer configs the table does not
		// declare: accepted with a value of their Kafka type, in Kafka's
		// words naming the config a prefixed name resolves to, as ksqlDB.
		{"cache.max.bytes.buffering", "0", ""},
		{"ksql.streams.cache.max.bytes.buffering", "0", ""},
		{"CACHE.MAX.BYTES.BUFFERING", "10000000", "Not recognizable as ksql, streams, consumer, or producer property: 'CACHE.MAX.BYTES.BUFFERING' (names are case-sensitive: did you mean 'cache.max.bytes.buffering'?)"},
		{"KSQL.STREAMS.NO.SUCH", "1", "Not recognizable as ksql, streams, consumer, or producer property: 'KSQL.STREAMS.NO.SUCH'"},
		// Kafka's validators: ranges, chosen strings, non-empty values.
		{"max.poll.records", "0", "Invalid value 0 for configuration max.poll.records: Value must be at least 1"},
		{"consumer.max.poll.records", " 007 ", ""},
		{"producer.acks", "ALL", "Invalid value ALL for configuration acks: String must be one of: all, -1, 0, 1"},
		{"security.protocol", "sasl_ssl", ""},
		{"compression.zstd.level", "23", "Invalid value 23 for configuration compression.zstd.level: Value must be no more than 22"},
		{"sasl.login.refresh.window.factor", "2", "Invalid value 2.0 for configuration sasl.login.refresh.window.factor: Value must be no more than 1.0"},
		{"rack.aware.assignment.tags", "a,b,c,d,e,f", "Invalid value [a, b, c, d, e, f] for configuration rack.aware.assignment.tags: exceeds maximum list size of [5]."},
		{"cache.max.bytes.buffering", "lots", "Invalid value lots for configuration cache.max.bytes.buffering: Not a number of type LONG"},
		{"ksql.streams.cache.max.bytes.buffering", "lots", "Invalid value lots for configuration cache.max.bytes.buffering: Not a number of type LONG"},
		{"statestore.cache.max.bytes", "10485760", ""},
		{"max.poll.records", "abc", "Invalid value abc for configuration max.poll.records: Not a number of type INT"},
		{"consumer.max.poll.records", "500", ""},
		{"ksql.streams.consumer.max.poll.records", "500", ""},
		{"consumer.max.poll.records", "3000000000", "Invalid value 3000000000 for configuration max.poll.records: Not a number of type INT"},
		{"producer.linger.ms", "5", ""},
		{"producer.linger.ms", "x", "Invalid value x for configuration linger.ms: Not a number of type LONG"},
		{"enable.idempotence", "maybe", "Invalid value maybe for configuration enable.idempotence: Expected value to be either true or false"},
		{"producer.enable.idempotence", "TRUE", ""},
		{"sasl.login.refresh.buffer.seconds", "70000", "Invalid value 70000 for configuration sasl.login.refresh.buffer.seconds: Not a number of type SHORT"},
		{"sasl.login.refresh.window.factor", "0.8", ""},
		{"sasl.login.refresh.window.factor", "most", "Invalid value most for configuration sasl.login.refresh.window.factor: Not a number of type DOUBLE"},
		{"security.protocol", "SASL_SSL", ""},
		{"ssl.key.password", "secret", ""},
		{"default.key.serde", "org.apache.kafka.common.serialization.Serdes$StringSerde", ""},
		{"bootstrap.servers", "a:9092,b:9092", ""},
		// A client prefix resolves only to a config of that client, and
		// only consumer. and producer. do (not Streams' main.consumer.,
		// restore.consumer., global.consumer. or admin.).
		{"consumer.nope", "1", "Not recognizable as ksql, streams, consumer, or producer property: 'consumer.nope'"},
		{"producer.max.poll.records", "1", "Not recognizable as ksql, streams, consumer, or producer property: 'producer.max.poll.records'"},
		{"ksql.streams.producer.nope", "1", "Not recognizable as ksql, streams, consumer, or producer property: 'ksql.streams.producer.nope'"},
		{"main.consumer.max.poll.records", "500", "Not recognizable as ksql, streams, consumer, or producer property: 'main.consumer.max.poll.records'"},
		{"admin.retries", "1", "Not recognizable as ksql, streams, consumer, or producer property: 'admin.retries'"},
		// ksqlDB's own configs Sluice does not implement: accepted.
		{"ksql.query.pull.max.qps", "10", ""},
		{"ksql.functions.substring.legacy.args", "true", ""},
	} {
		err := engine.CheckSet(tc.name, tc.value)
		got := ""
		if err != nil {
			got = err.Error()
			if !errors.Is(err, planner.ErrInvalid) {
				t.Errorf("SET '%s'='%s': %v is not planner.ErrInvalid", tc.name, tc.value, err)
			}
		}
		if got != tc.err {
			t.Errorf("SET '%s'='%s': error %q, want %q", tc.name, tc.value, got, tc.err)
		}
	}
}

// TestPropertyTable checks the declarations themselves: lower-case
// names found only as written, each name and alias declared once, documented, of Kafka's type
// when Kafka's config, and every default one the property's own check
// accepts.
func TestPropertyTable(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range engine.Properties() {
		for _, n := range append([]string{p.Name}, p.Aliases...) {
			if n != strings.ToLower(n) || seen[n] {
				t.Errorf("name %q: not lower case or declared twice", n)
			}
			seen[n] = true
			if got, ok := engine.LookupProperty(n); !ok || got != p {
				t.Errorf("LookupProperty(%q) does not find %s", n, p.Name)
			}
			// Names are case-sensitive, as ksqlDB's.
			if _, ok := engine.LookupProperty(strings.ToUpper(n)); ok {
				t.Errorf("LookupProperty(%q) finds %s", strings.ToUpper(n), p.Name)
			}
		}
		if p.Doc == "" || p.Type == "" {
			t.Errorf("%s: no doc or type", p.Name)
		}
		// A declared Kafka config takes values of Kafka's type for it.
		if typ, ok := engine.KafkaConfigType(p.Name); ok && typ != p.Type {
			t.Errorf("%s: declared %s, Kafka's type is %s", p.Name, p.Type, typ)
		}
		for _, props := range []map[string]string{nil, {"processing.guarantee": "exactly_once_v2"}} {
			if d := p.Default(props); d != "" {
				if err := p.Check(d); err != nil {
					t.Errorf("%s: default %q is refused: %v", p.Name, d, err)
				}
			}
		}
	}
	for _, want := range []string{"commit.interval.ms", "ksql.streams.commit.interval.ms", "sluice.stall.timeout", "sluice.state.min.free.bytes"} {
		if !seen[want] {
			t.Errorf("%s is not declared", want)
		}
	}
	p, _ := engine.LookupProperty("commit.interval.ms")
	if got := []string{p.Default(nil), p.Default(map[string]string{"ksql.streams.processing.guarantee": "exactly_once"})}; !cmp.Equal(got, []string{"1000", "100"}) {
		t.Errorf("commit.interval.ms defaults at least once, exactly once: %q, want 1000, 100", got)
	}
	if p.Scope != engine.ScopeQuery {
		t.Errorf("commit.interval.ms scope %v, want query", p.Scope)
	}
	if p, _ := engine.LookupProperty("sluice.state.min.free.bytes"); p.Scope != engine.ScopeInstance {
		t.Errorf("sluice.state.min.free.bytes scope %v, want instance", p.Scope)
	}
}

// TestSetAndShowProperties runs the two cases on an engine: SET
// refuses a commit interval that is not a number and leaves the session
// as it was, and SHOW PROPERTIES under exactly-once gives the interval an
// exactly-once query runs with (100 ms, not at-least-once's 1000), and
// lists every declared property and the Kafka configs set; UNSET removes
// a property under every name it has.
func TestSetAndShowProperties(t *testing.T) {
	brokers := testkafka.Brokers(t)
	cfg := testConfig(brokers, t.TempDir(), testkafka.Name(t, "svc"), quiet)
	delete(cfg.Properties, "commit.interval.ms")
	e := openConfig(t, cfg)
	defer closeEngine(t, e)
	ctx := context.Background()

	show := func() map[string]string {
		t.Helper()
		res := execute(t, e, "SHOW PROPERTIES;")
		got := map[string]string{}
		for _, p := range res[0].Entity.(*engine.PropertyList).Properties {
			got[p.Name] = p.Value
		}
		return got
	}

	_, err := e.Execute(ctx, "SET 'commit.interval.ms'='abc';")
	if err == nil || err.Error() != "Invalid value abc for configuration commit.interval.ms: Not a number of type LONG" {
		t.Fatalf("SET 'commit.interval.ms'='abc': %v", err)
	}
	_, err = e.Execute(ctx, "SET 'no.such.property'='1';")
	if err == nil || err.Error() != "Not recognizable as ksql, streams, consumer, or producer property: 'no.such.property'" {
		t.Fatalf("SET 'no.such.property'='1': %v", err)
	}
	_, err = e.Execute(ctx, "SET 'consumer.nope'='1';")
	if err == nil || err.Error() != "Not recognizable as ksql, streams, consumer, or producer property: 'consumer.nope'" {
		t.Fatalf("SET 'consumer.nope'='1': %v", err)
	}
	got := show()
	for _, refused := range []string{"no.such.property", "consumer.nope"} {
		if _, ok := got[refused]; ok {
			t.Errorf("a refused SET is listed: %v", got)
		}
	}
	// A Kafka config the table does not declare is taken, and listed as
	// set, under the name it was set by; unset ones are not listed.
	execute(t, e, "SET 'cache.max.bytes.buffering'='0';")
	execute(t, e, "SET 'ksql.streams.consumer.max.poll.records'='500';")
	got = show()
	for name, v := range map[string]string{"cache.max.bytes.buffering": "0", "ksql.streams.consumer.max.poll.records": "500"} {
		if got[name] != v {
			t.Errorf("%s is listed as %q, want %q", name, got[name], v)
		}
	}
	if v, ok := got["buffered.records.per.partition"]; ok {
		t.Errorf("buffered.records.per.partition is listed (%q) but was never set", v)
	}
	want := map[string]string{"commit.interval.ms": "1000", "processing.guarantee": "at_least_once", "auto.offset.reset": "earliest", "sluice.stall.timeout": "30s", "statestore.cache.max.bytes": "1048576"}
	for name, v := range want {
		if got[name] != v {
			t.Errorf("at least once: %s is %q, want %q", name, got[name], v)
		}
	}

	execute(t, e, "SET 'processing.guarantee'='exactly_once_v2';")
	if got := show()["commit.interval.ms"]; got != "100" {
		t.Errorf("exactly once: commit.interval.ms is %q, want 100", got)
	}
	execute(t, e, "SET 'ksql.streams.commit.interval.ms'='250';")
	if got := show()["commit.interval.ms"]; got != "250" {
		t.Errorf("exactly once, set by ksqlDB's name: commit.interval.ms is %q, want 250", got)
	}
	// UNSET by either name unsets the property under both.
	execute(t, e, "UNSET 'commit.interval.ms';")
	if got := show(); got["commit.interval.ms"] != "100" || got["ksql.streams.commit.interval.ms"] != "" {
		t.Errorf("exactly once, unset: commit.interval.ms is %q, ksql.streams.commit.interval.ms %q; want 100 and unlisted", got["commit.interval.ms"], got["ksql.streams.commit.interval.ms"])
	}

	got = show()
	for _, p := range engine.Properties() {
		if _, ok := got[p.Name]; !ok {
			t.Errorf("SHOW PROPERTIES does not list %s", p.Name)
		}
	}
}

var rewriteDocs = flag.Bool("rewrite-docs", false, "rewrite docs/properties.md from the property table")

// TestPropertiesDoc checks that docs/properties.md is the property table
// (go test ./engine -run TestPropertiesDoc -rewrite-docs writes it).
func TestPropertiesDoc(t *testing.T) {
	var honoured []string
	for _, p := range engine.Properties() {
		if _, ok := engine.KafkaConfigType(p.Name); ok {
			honoured = append(honoured, "`"+p.Name+"`")
		}
	}
	var b strings.Builder
	b.WriteString(`# Properties

Every property Sluice reads, from the engine's property table (` + "`engine/properties.go`" + `; this file is
written from it by ` + "`go test ./engine -run TestPropertiesDoc -rewrite-docs`" + `). Set one for the session with
` + "`SET 'name'='value';`" + ` (any of its names; UNSET removes it under all of them), for one REST request in
its ` + "`properties`" + ` or ` + "`streamsProperties`" + `, or, embedding the engine, in ` + "`engine.Config.Properties`" + `. SET refuses a value
a property below does not take, in ksqlDB's words (` + "`Invalid value abc for configuration\ncommit.interval.ms: Not a number of type LONG`" + `); a request's properties are passed through unchecked,
as ksqlDB passes them to Kafka's configs, and a malformed one there runs with the default. SHOW
PROPERTIES lists each property below with the value in force.

SET also takes the other names ksqlDB takes, so that scripts written for it run: any Kafka Streams,
consumer or producer config (of Kafka ` + engine.KafkaConfigsVersion + `, ` + "`engine/kafka_configs_gen.go`" + `, written by
` + "`scripts/gen-kafka-configs`" + `), by its name (` + "`cache.max.bytes.buffering`" + `), as ` + "`consumer.`" + ` or ` + "`producer.`" + ` and a config
of that client (` + "`consumer.max.poll.records`" + `), or either after ` + "`ksql.streams.`" + `, with a value Kafka's
definition of the config takes: of its type (` + "`Invalid value abc for configuration max.poll.records: Not a number\nof type INT`" + `)
and within its validator's bounds and choices (` + "`Invalid value 0 for configuration max.poll.records: Value must be\nat least 1`" + `;
` + "`scripts/gen-kafka-configs`" + ` also writes Kafka's own answers for values on the edges of each check, and
` + "`TestKafkaConfigChecksAsKafka`" + ` holds SET to them). The few configs whose validator is Kafka code of its own
take any value of their type: ` + "`" + strings.Join(engine.UncheckedKafkaConfigs(), "`, `") + "`" + `. SET also takes any
other ` + "`ksql.`" + ` name, ksqlDB's own configs (ksqlDB itself refuses one it does not know). Any other name is
refused (` + "`Not recognizable as ksql, streams, consumer, or producer property: 'x'`" + `); names are case-sensitive, as
ksqlDB's (all are lower case: ` + "`SET 'AUTO.OFFSET.RESET'='earliest'`" + ` is refused, pointing at the lower-case name). Such a property is kept
in the session, listed by SHOW PROPERTIES once set and carried with commands like the others, but
has no effect: of Kafka's configs, Sluice honours only those below,
` + strings.Join(honoured, ", ") + `.

Scope: *query* properties shape the persistent queries a statement creates and travel with the
statement through the command topic; *session* ones shape the session's own statements; *instance*
ones configure the process and are never carried with a command.

| Name | Other names | Scope | Type | Default | |
|---|---|---|---|---|---|
`)
	for _, p := range engine.Properties() {
		aliases := ""
		for i, a := range p.Aliases {
			if i > 0 {
				aliases += ", "
			}
			aliases += "`" + a + "`"
		}
		def := p.DefaultDoc()
		if def == "" {
			def = "none"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s |\n", p.Name, aliases, p.Scope, p.Type, def, p.Doc)
	}
	path := filepath.Join("..", "docs", "properties.md")
	if *rewriteDocs {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(b.String(), string(got)); diff != "" {
		t.Errorf("docs/properties.md is not the property table; run go test ./engine -run TestPropertiesDoc -rewrite-docs (-want +got):\n%s", diff)
	}
}
