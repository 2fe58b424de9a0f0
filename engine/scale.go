package engine

import (
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/parser"
)

// HotKeyShareProperty is the share of a query's records (0 to 1) one key
// may carry on an instance before DESCRIBE EXTENDED and EXPLAIN warn that
// its partition's task bounds the query. Default 0.2.
const HotKeyShareProperty = "sluice.hot.key.share"

const defaultHotKeyShare = 0.2

// hotKeyMinRecords is how many records a sub-topology's tasks on this
// instance must have read before a key's share means something: a
// freshly started query's first records say little about skew.
const hotKeyMinRecords = 1000

// scaleWarnings says why adding instances would not make q faster on
// this instance: a key carrying more than the hot-key share of the
// records of one of its sub-topologies (one task handles all of a key's
// records), or fewer input partitions than live instances (the extra
// instances get no partition). Each warning is one line.
func (e *Engine) scaleWarnings(q *Query, props map[string]string) ([]string, error) {
	share, err := hotKeyShare(props)
	if err != nil {
		return nil, err
	}
	var out []string
	sketches := map[string][]*exec.HotKeys{}
	for _, ti := range q.Tasks() {
		if ti.HotKeys != nil {
			sketches[ti.Topic] = append(sketches[ti.Topic], ti.HotKeys)
		}
	}
	warned := map[string]bool{}
	for _, sub := range q.Plan.Topology.Subs {
		top, records := exec.MergeHotKeys(sketches[sub.Source.Topic])
		if records < hotKeyMinRecords || len(top) == 0 || float64(top[0].Count) <= share*float64(records) {
			continue
		}
		key := showKey(top[0].Key)
		if warned[key] {
			continue
		}
		warned[key] = true
		out = append(out, fmt.Sprintf("WARNING: key %s carries %d%% of the records of %s on this instance: its partition's task is the bottleneck; adding instances will not help",
			key, top[0].Count*100/records, q.ID))
	}
	instances := 1
	if e.cfg.LiveInstances != nil {
		instances = e.cfg.LiveInstances()
	}
	if parts := e.inputPartitions(q.Plan.Topology); parts > 0 && int(parts) < instances {
		out = append(out, fmt.Sprintf("WARNING: %s has fewer input partitions than the service has instances; adding instances will not help: %d partitions, %d instances",
			q.ID, parts, instances))
	}
	return out, nil
}

// inputPartitions is the fewest partitions any sub-topology of topo reads:
// the stage that can spread over the fewest instances. 0 when unknown.
func (e *Engine) inputPartitions(topo *exec.Topology) int32 {
	var fewest int32
	for _, sub := range topo.Subs {
		n := e.partitionsOf(topo, sub.Source.Topic)
		if n > 0 && (fewest == 0 || n < fewest) {
			fewest = n
		}
	}
	return fewest
}

// partitionsOf knows a topic's partitions from the plan (repartition
// topics) or the catalog (streams and tables), without asking Kafka.
func (e *Engine) partitionsOf(topo *exec.Topology, topic string) int32 {
	for _, it := range topo.Internal {
		if it.Name == topic {
			return it.Partitions
		}
	}
	for _, kind := range []parser.SourceKind{parser.KindStream, parser.KindTable} {
		for _, s := range e.cat.Sources(kind) {
			if s.Topic == topic {
				return s.Partitions
			}
		}
	}
	return 0
}

// showKey prints a record key in a warning: quoted when it is printable
// text (KAFKA and DELIMITED string keys), hex otherwise, NULL for none.
func showKey(k []byte) string {
	if k == nil {
		return "NULL"
	}
	printable := utf8.Valid(k)
	for _, r := range string(k) {
		printable = printable && unicode.IsPrint(r)
	}
	if printable {
		return "'" + string(k) + "'"
	}
	return fmt.Sprintf("0x%x", k)
}
