package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

// TestConfluentKafkaInterop: Python's confluent-kafka, through its
// SchemaRegistryClient and the format's serializer, writes records that a
// `sluice run` query reads with columns taken from the registered schema;
// the query's output, registered by Sluice, is read back by the matching
// deserializer. Both directions go through one registry, the one `sluice
// broker --schema-registry-listen` serves. The Python side is
// testdata/interop.py, in the venv scripts/install-python-kafka makes.
func TestConfluentKafkaInterop(t *testing.T) {
	python := interopPython(t)
	for _, format := range []string{"avro", "protobuf", "json"} {
		t.Run(format, func(t *testing.T) {
			brokers, reg := startBrokerWithRegistry(t)
			// Topics of their own: against an external cluster an earlier
			// run's records (with another registry's ids) would be read.
			suffix := fmt.Sprintf("%d", time.Now().UnixNano())
			in, out := "interop_"+format+"_"+suffix, "interop_"+format+"_out_"+suffix
			py := func(args ...string) string {
				return runInterop(t, python, append(args, "--format", format, "--bootstrap", brokers, "--registry", reg)...)
			}
			py("produce", "--topic", in)
			if format == "protobuf" {
				// confluent-kafka registered the schema serialized; its
				// registry client reads it back as .proto source.
				got := runInterop(t, python, "schema", "--registry", reg, "--subject", in+"-value")
				if want := strings.Join(golden(t, filepath.Join("testdata", "interop-protobuf.proto")), "\n") + "\n"; got != want {
					t.Errorf("registered schema as SchemaRegistryClient reads it:\n%s\nwant:\n%s", got, want)
				}
			}

			sql := expandFile(t, filepath.Join("testdata", "interop-"+format+".sql"), map[string]string{"IN": in, "OUT": out})
			r := startSluice(t, "run", sql, "--brokers", brokers, "--schema-registry", reg, "--data-dir", t.TempDir())
			defer func() {
				if t.Failed() {
					t.Logf("sluice run stderr:\n%s", r.stderr.String())
				}
			}()
			// The consumer waits for the topic the query creates.
			got := py("consume", "--topic", out, "--count", "3")
			r.stop(t, 30*time.Second)

			if diff := cmp.Diff(golden(t, filepath.Join("testdata", "interop-"+format+".golden")), strings.Split(strings.TrimSuffix(got, "\n"), "\n")); diff != "" {
				t.Errorf("records read back (-want +got):\n%s", diff)
			}
		})
	}
}

// interopPython is the venv's python from scripts/install-python-kafka
// ($SLUICE_PYENV, default ~/.cache/sluice/pyenv). Without it the test
// skips, except in CI, where .ci/run installs it and its absence fails.
func interopPython(t *testing.T) string {
	t.Helper()
	venv := os.Getenv("SLUICE_PYENV")
	if venv == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			t.Fatal(err)
		}
		venv = filepath.Join(home, ".cache", "sluice", "pyenv")
	}
	python := filepath.Join(venv, "bin", "python")
	err := exec.Command(python, "-c", "import confluent_kafka.schema_registry.avro").Run()
	switch {
	case err == nil:
		return python
	case os.Getenv("CI") != "":
		t.Fatalf("%s with confluent-kafka: %v (scripts/install-python-kafka makes it; .ci/run calls it)", python, err)
	default:
		t.Skipf("no %s with confluent-kafka (%v): run scripts/install-python-kafka", python, err)
	}
	return ""
}

// runInterop runs testdata/interop.py to completion and returns its
// stdout.
func runInterop(t *testing.T, python string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, append([]string{filepath.Join("testdata", "interop.py")}, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("interop.py %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out.String(), errOut.String())
	}
	return out.String()
}

var registryListening = regexp.MustCompile(`^schema registry listening on (http://127\.0\.0\.1:\d+)$`)

// startBrokerWithRegistry starts `sluice broker` with its Schema Registry
// and returns the brokers to use (SLUICE_TEST_BROKERS when set: then only
// the registry of the process is used) and the registry's URL.
func startBrokerWithRegistry(t *testing.T) (brokers, registryURL string) {
	t.Helper()
	b := startSluice(t, "broker", "--listen", "127.0.0.1:0", "--schema-registry-listen", "127.0.0.1:0", "--data-dir", t.TempDir())
	b.waitFor(t, 30*time.Second, "listening lines", func(lines []string) bool { return len(lines) >= 2 })
	reg, brk := registryListening.FindStringSubmatch(b.all[0]), listening.FindStringSubmatch(b.all[1])
	if reg == nil || brk == nil {
		t.Fatalf("first lines %q, want %q then %q", b.all[:2], "schema registry listening on URL", "broker listening on 127.0.0.1:PORT")
	}
	if testkafka.External() {
		return os.Getenv(testkafka.EnvBrokers), reg[1]
	}
	return brk[1], reg[1]
}

// golden returns the lines of file but its comments (lines starting "#").
func golden(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	return lines
}

// expandFile writes file with ${NAME} replaced by vars[NAME] to a
// temporary file and returns its absolute path.
func expandFile(t *testing.T, file string, vars map[string]string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s := os.Expand(string(b), func(name string) string {
		v, ok := vars[name]
		if !ok {
			t.Fatalf("%s: no value for ${%s}", file, name)
		}
		return v
	})
	out := filepath.Join(t.TempDir(), filepath.Base(file))
	if err := os.WriteFile(out, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestConfluentKafkaProducesToNewTopic: Python's confluent-kafka producer
// writes to a topic that does not exist on a `sluice broker`, with no
// admin call first. The broker creates the topic as Kafka does
// (auto.create.topics.enable, num.partitions=1), every record is
// delivered, and the topic and its records are still there after the
// broker is SIGKILLed and started again on the same data directory.
// It always uses its own broker: auto-creation is the embedded broker's.
func TestConfluentKafkaProducesToNewTopic(t *testing.T) {
	python := interopPython(t)
	dir := t.TempDir()
	b := startSluice(t, "broker", "--listen", "127.0.0.1:0", "--data-dir", dir)
	addr := brokerAddr(t, b)
	topic := testkafka.Name(t, "auto_created")
	got := runInterop(t, python, "produce-new", "--bootstrap", addr, "--topic", topic)
	want := "o-1 -> partition 0 offset 0\no-2 -> partition 0 offset 1\no-3 -> partition 0 offset 2\n"
	if got != want {
		t.Errorf("deliveries:\n%s\nwant:\n%s", got, want)
	}

	check := func(stage, addr string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		tds, err := kadm.NewClient(testkafka.Client(t, addr)).ListTopics(ctx)
		if err != nil {
			t.Fatalf("%s: list topics: %v", stage, err)
		}
		parts := map[string]int{}
		for _, td := range tds.Sorted() {
			parts[td.Topic] = len(td.Partitions)
		}
		if diff := cmp.Diff(map[string]int{topic: 1}, parts); diff != "" {
			t.Errorf("%s: topics and partitions (-want +got):\n%s", stage, diff)
		}
		var recs []string
		for _, r := range testkafka.ReadAll(t, addr, topic) {
			recs = append(recs, fmt.Sprintf("%s=%s@%d", r.Key, r.Value, r.Offset))
		}
		if diff := cmp.Diff([]string{"o-1=o-1@0", "o-2=o-2@1", "o-3=o-3@2"}, recs); diff != "" {
			t.Errorf("%s: records (-want +got):\n%s", stage, diff)
		}
	}
	check("after producing", addr)

	b.kill(t)
	b = startSluice(t, "broker", "--listen", "127.0.0.1:0", "--data-dir", dir)
	check("after a SIGKILL and a restart", brokerAddr(t, b))
}

// brokerAddr waits for `sluice broker`'s listening line and returns its
// address.
func brokerAddr(t *testing.T, b *proc) string {
	t.Helper()
	b.waitFor(t, 30*time.Second, "listening line", func(lines []string) bool { return len(lines) > 0 })
	m := listening.FindStringSubmatch(b.all[0])
	if m == nil {
		t.Fatalf("first line %q, want %q", b.all[0], "broker listening on 127.0.0.1:PORT")
	}
	return m[1]
}
