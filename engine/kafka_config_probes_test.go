package engine_test

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/engine"
)

// TestKafkaConfigChecksAsKafka holds SET's answer for Kafka's configs to
// Kafka's own: testdata/kafka_config_probes.tsv has, for every config
// whose checks Sluice knows, values on and past the edges of its type and
// validator, with what Kafka 4.4's ConfigDef answered for each (written
// by scripts/gen-kafka-configs, which runs Kafka's code). Names the
// property table declares are left out: their checks are Sluice's own
// (TestCheckSet).
func TestKafkaConfigChecksAsKafka(t *testing.T) {
	f, err := os.Open("testdata/kafka_config_probes.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	probes, declared := 0, 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Split(line, "\t")
		if len(fields) != 3 {
			t.Fatalf("malformed probe %q", line)
		}
		name, value, want := fields[0], fields[1], fields[2]
		if _, ok := engine.LookupProperty(name); ok {
			declared++
			continue
		}
		probes++
		got := "ok"
		if err := engine.CheckSet(name, value); err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("SET '%s'='%s':\n got %s\nwant %s", name, value, got, want)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	// Every config of the three clients has probes; a file cut short fails.
	if probes < 1000 {
		t.Errorf("%d probes (%d of declared properties): the file is incomplete", probes, declared)
	}
}
