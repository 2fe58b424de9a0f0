package engine

import (
	"fmt"
	"strconv"
	"strings"
)

// SET takes more than the property table: like ksqlDB, any Kafka Streams,
// consumer or producer config, with a value of that config's Kafka type,
// so that scripts written for ksqlDB (SET 'cache.max.bytes.buffering'='0')
// run. The keys and types come from Kafka's own config definitions
// (kafka_configs_gen.go, written by scripts/gen-kafka-configs). Sluice's
// runner reads only the configs the table declares; the others are kept
// in the session, listed by SHOW PROPERTIES and carried with commands,
// and change nothing.

const (
	ksqlPrefix        = "ksql."
	ksqlStreamsPrefix = "ksql.streams."
	consumerPrefix    = "consumer."
	producerPrefix    = "producer."
)

// checkUndeclared returns why SET name=value of a name the table does not
// declare is refused, resolving the name as ksqlDB does:
//   - a ksql. name (not ksql.streams.) is ksqlDB's own config: accepted,
//     as Sluice does not know all of ksqlDB's (ksqlDB refuses a ksql. name
//     it does not know, but for ksql.functions.);
//   - after an optional ksql.streams. prefix, consumer.X and producer.X
//     name the client's config X, and a bare name a consumer, producer or
//     Kafka Streams config; its value must parse as that config's type,
//     and a malformed one is refused naming the config resolved to;
//   - anything else (Streams' main.consumer., restore.consumer.,
//     global.consumer. and admin. prefixes included: ksqlDB does not
//     resolve them) is not recognizable.
func checkUndeclared(name, value string) error {
	n := strings.ToLower(strings.TrimSpace(name))
	if strings.HasPrefix(n, ksqlPrefix) && !strings.HasPrefix(n, ksqlStreamsPrefix) {
		return nil
	}
	key, typ, ok := resolveKafkaConfig(strings.TrimPrefix(n, ksqlStreamsPrefix))
	if !ok {
		return &PropertyError{msg: fmt.Sprintf("Not recognizable as ksql, streams, consumer, or producer property: '%s'", name)}
	}
	return checkKafkaType(key, typ, value)
}

// resolveKafkaConfig finds the Kafka config key names, and its type: a
// prefixed client config first, then a consumer, producer or Streams
// config of that name (ksqlDB's order; a name in several has one type).
func resolveKafkaConfig(key string) (name, typ string, ok bool) {
	if k, found := strings.CutPrefix(key, consumerPrefix); found {
		if t, ok := kafkaConsumerConfigs[k]; ok {
			return k, t, true
		}
	}
	if k, found := strings.CutPrefix(key, producerPrefix); found {
		if t, ok := kafkaProducerConfigs[k]; ok {
			return k, t, true
		}
	}
	for _, configs := range []map[string]string{kafkaConsumerConfigs, kafkaProducerConfigs, kafkaStreamsConfigs} {
		if t, ok := configs[key]; ok {
			return key, t, true
		}
	}
	return "", "", false
}

// checkKafkaType refuses a value Kafka's ConfigDef would not parse as typ,
// in its words. STRING, PASSWORD and LIST take any text; a CLASS names a
// Java class Sluice cannot load, so any text too.
func checkKafkaType(name, typ, value string) error {
	v := strings.TrimSpace(value)
	var err error
	switch typ {
	case "BOOLEAN":
		return boolean(name, value)
	case "SHORT":
		_, err = strconv.ParseInt(v, 10, 16)
	case "INT":
		_, err = strconv.ParseInt(v, 10, 32)
	case "LONG":
		_, err = strconv.ParseInt(v, 10, 64)
	case "DOUBLE":
		_, err = strconv.ParseFloat(v, 64)
	}
	if err != nil {
		return invalidValue(name, value, "Not a number of type "+typ)
	}
	return nil
}

// KafkaConfigsVersion is the Kafka version whose Streams, consumer and
// producer config keys SET takes.
const KafkaConfigsVersion = kafkaConfigsVersion

// KafkaConfigType is the Kafka type (INT, LONG, …) of the Kafka Streams,
// consumer or producer config name resolves to, as SET resolves it;
// false when name is none.
func KafkaConfigType(name string) (string, bool) {
	n := strings.ToLower(strings.TrimSpace(name))
	if strings.HasPrefix(n, ksqlPrefix) && !strings.HasPrefix(n, ksqlStreamsPrefix) {
		return "", false
	}
	_, typ, ok := resolveKafkaConfig(strings.TrimPrefix(n, ksqlStreamsPrefix))
	return typ, ok
}
