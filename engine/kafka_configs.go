package engine

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// SET takes more than the property table: like ksqlDB, any Kafka Streams,
// consumer or producer config, with a value that config's ConfigDef
// parses and validates, so that scripts written for ksqlDB
// (SET 'cache.max.bytes.buffering'='0') run. The keys, types and checks
// come from Kafka's own config definitions (kafka_configs_gen.go, written
// by scripts/gen-kafka-configs with testdata/kafka_config_probes.tsv,
// Kafka's own answers to values on the edges of each check). Sluice's
// runner reads only the configs the table declares; the others are kept
// in the session, listed by SHOW PROPERTIES and carried with commands,
// and change nothing.

const (
	ksqlPrefix        = "ksql."
	ksqlStreamsPrefix = "ksql.streams."
	consumerPrefix    = "consumer."
	producerPrefix    = "producer."
)

// kafkaConfig is what Kafka's ConfigDef says of one config key: its type
// and what its validator checks (the ConfigDef validators Sluice knows;
// custom describes one of Kafka's own code, which Sluice does not run).
type kafkaConfig struct {
	typ string
	// min and max bound a number (ConfigDef.Range), as Kafka prints them.
	min, max string
	// oneOf are the strings a value must be one of (ValidString), in any
	// case when foldCase (CaseInsensitiveValidString), in Kafka's order.
	oneOf    []string
	foldCase bool
	// nonEmpty refuses an empty string (NonEmptyString) or list (ValidList).
	nonEmpty bool
	// maxItems is a list's largest size (ListSize), 0 for any.
	maxItems int
	custom   string
}

// checkUndeclared returns why SET name=value of a name the table does not
// declare is refused, resolving the name as ksqlDB does, case-sensitively
// (Kafka's and ksqlDB's config names are lower case):
//   - a ksql. name (not ksql.streams.) is ksqlDB's own config: accepted,
//     as Sluice does not know all of ksqlDB's (ksqlDB refuses a ksql. name
//     it does not know, but for ksql.functions.);
//   - after an optional ksql.streams. prefix, consumer.X and producer.X
//     name the client's config X, and a bare name a consumer, producer or
//     Kafka Streams config; its value must be one that config's ConfigDef
//     parses and validates, and a malformed one is refused naming the
//     config resolved to;
//   - anything else (Streams' main.consumer., restore.consumer.,
//     global.consumer. and admin. prefixes included: ksqlDB does not
//     resolve them) is not recognizable.
func checkUndeclared(name, value string) error {
	n := strings.TrimSpace(name)
	if strings.HasPrefix(n, ksqlPrefix) && !strings.HasPrefix(n, ksqlStreamsPrefix) {
		return nil
	}
	key, cfg, ok := resolveKafkaConfig(strings.TrimPrefix(n, ksqlStreamsPrefix))
	if !ok {
		return &PropertyError{msg: fmt.Sprintf("Not recognizable as ksql, streams, consumer, or producer property: '%s'", name) + caseHint(n)}
	}
	return cfg.check(key, value)
}

// caseHint points at the lower-case name a name in another case means,
// when SET knows that one.
func caseHint(name string) string {
	lower := strings.ToLower(name)
	if lower == name {
		return ""
	}
	_, declared := LookupProperty(lower)
	ksql := strings.HasPrefix(lower, ksqlPrefix) && !strings.HasPrefix(lower, ksqlStreamsPrefix)
	_, _, kafka := resolveKafkaConfig(strings.TrimPrefix(lower, ksqlStreamsPrefix))
	if declared || ksql || kafka {
		return fmt.Sprintf(" (names are case-sensitive: did you mean '%s'?)", lower)
	}
	return ""
}

// resolveKafkaConfig finds the Kafka config key names: a prefixed client
// config first, then a consumer, producer or Streams config of that name
// (ksqlDB's order).
func resolveKafkaConfig(key string) (name string, cfg kafkaConfig, ok bool) {
	if k, found := strings.CutPrefix(key, consumerPrefix); found {
		if c, ok := kafkaConsumerConfigs[k]; ok {
			return k, c, true
		}
	}
	if k, found := strings.CutPrefix(key, producerPrefix); found {
		if c, ok := kafkaProducerConfigs[k]; ok {
			return k, c, true
		}
	}
	for _, configs := range []map[string]kafkaConfig{kafkaConsumerConfigs, kafkaProducerConfigs, kafkaStreamsConfigs} {
		if c, ok := configs[key]; ok {
			return key, c, true
		}
	}
	return "", kafkaConfig{}, false
}

// check refuses a value Kafka's ConfigDef would not parse as the
// config's type or its validator would not take, in Kafka's words (what
// ksqlDB answers). STRING, PASSWORD and LIST take any text but what the
// validator refuses; a CLASS names a Java class Sluice cannot load, so
// any text too.
func (c kafkaConfig) check(name, value string) error {
	v := strings.TrimSpace(value)
	switch c.typ {
	case "BOOLEAN":
		return boolean(name, value)
	case "SHORT", "INT", "LONG":
		n, err := strconv.ParseInt(v, 10, map[string]int{"SHORT": 16, "INT": 32, "LONG": 64}[c.typ])
		if err != nil {
			return invalidValue(name, value, "Not a number of type "+c.typ)
		}
		return c.checkRange(name, strconv.FormatInt(n, 10), float64(n))
	case "DOUBLE":
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return invalidValue(name, value, "Not a number of type DOUBLE")
		}
		return c.checkRange(name, javaDouble(f), f)
	case "STRING":
		if c.nonEmpty && v == "" {
			return invalidValue(name, v, "String must be non-empty")
		}
		if len(c.oneOf) > 0 && !c.takes(v) {
			why := "String must be one of: "
			if c.foldCase {
				why = "String must be one of (case insensitive): "
			}
			return invalidValue(name, v, why+strings.ReplaceAll(strings.Join(c.oneOf, ", "), javaNull, "null"))
		}
	case "LIST":
		var items []string
		if v != "" {
			items = listItem.Split(v, -1)
		}
		if c.nonEmpty && len(items) == 0 {
			return &PropertyError{msg: fmt.Sprintf("Configuration '%s' must not be empty. Valid values include: any non-empty value", name)}
		}
		if c.maxItems > 0 && len(items) > c.maxItems {
			return invalidValue(name, "["+strings.Join(items, ", ")+"]", fmt.Sprintf("exceeds maximum list size of [%d].", c.maxItems))
		}
	}
	return nil
}

// javaNull stands in oneOf for a Java null among a validator's strings:
// Kafka lists it, and no value SET gives is it.
const javaNull = "\x00null"

// listItem separates a LIST value's items, as Kafka splits them.
var listItem = regexp.MustCompile(`\s*,\s*`)

// takes reports whether v is one of the strings the config takes.
func (c kafkaConfig) takes(v string) bool {
	for _, w := range c.oneOf {
		if w != javaNull && (v == w || c.foldCase && strings.EqualFold(v, w)) {
			return true
		}
	}
	return false
}

// checkRange refuses a number outside the config's Range; shown is the
// number as Kafka prints the parsed value.
func (c kafkaConfig) checkRange(name, shown string, n float64) error {
	if c.min != "" {
		if lo, err := strconv.ParseFloat(c.min, 64); err == nil && n < lo {
			return invalidValue(name, shown, "Value must be at least "+c.min)
		}
	}
	if c.max != "" {
		if hi, err := strconv.ParseFloat(c.max, 64); err == nil && n > hi {
			return invalidValue(name, shown, "Value must be no more than "+c.max)
		}
	}
	return nil
}

// javaDouble prints f as Java's Double.toString does, which Kafka's
// messages show: at least one digit after the point, and powers of ten
// from 10^7 and below 10^-3 as 1.0E20.
func javaDouble(f float64) string {
	if a := math.Abs(f); a != 0 && (a >= 1e7 || a < 1e-3) && !math.IsInf(f, 0) {
		mant, exp, _ := strings.Cut(strconv.FormatFloat(f, 'E', -1, 64), "E")
		if !strings.Contains(mant, ".") {
			mant += ".0"
		}
		return mant + "E" + strings.TrimPrefix(strings.TrimPrefix(exp, "+"), "0")
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".NI") {
		s += ".0"
	}
	return s
}

// KafkaConfigsVersion is the Kafka version whose Streams, consumer and
// producer config keys SET takes.
const KafkaConfigsVersion = kafkaConfigsVersion

// KafkaConfigType is the Kafka type (INT, LONG, …) of the Kafka Streams,
// consumer or producer config name resolves to, as SET resolves it;
// false when name is none.
func KafkaConfigType(name string) (string, bool) {
	n := strings.TrimSpace(name)
	if strings.HasPrefix(n, ksqlPrefix) && !strings.HasPrefix(n, ksqlStreamsPrefix) {
		return "", false
	}
	_, cfg, ok := resolveKafkaConfig(strings.TrimPrefix(n, ksqlStreamsPrefix))
	return cfg.typ, ok
}

// UncheckedKafkaConfigs lists, sorted, the Kafka configs whose validator
// is Kafka code of its own that SET does not run: any value of their type
// passes.
func UncheckedKafkaConfigs() []string {
	var out []string
	for _, configs := range []map[string]kafkaConfig{kafkaConsumerConfigs, kafkaProducerConfigs, kafkaStreamsConfigs} {
		for name, c := range configs {
			if c.custom != "" && !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	slices.Sort(out)
	return out
}
