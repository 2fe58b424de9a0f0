package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

// streamFile writes a SQL file creating one stream on topic s.
func streamFile(t *testing.T) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "stream.sql")
	sql := "CREATE STREAM s (id VARCHAR KEY, v INT) WITH (kafka_topic='s', value_format='JSON', partitions=1);\n"
	if err := os.WriteFile(file, []byte(sql), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// awaitStreamCreated waits until p's stderr has the line "Stream created",
// or an error of the command's ("sluice: …"), and returns its stderr so
// far.
func awaitStreamCreated(t *testing.T, p *proc) string {
	t.Helper()
	testkafka.Await(t, 60*time.Second, "Stream created on stderr", func() bool {
		s := p.stderr.String()
		return strings.Contains(s, "Stream created\n") || strings.Contains(s, "sluice: ")
	})
	return p.stderr.String()
}

// hasTopic asks the broker at addr whether topic exists.
func hasTopic(t *testing.T, addr, topic string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tds, err := kadm.NewClient(testkafka.Client(t, addr)).ListTopics(ctx)
	if err != nil {
		t.Fatalf("list topics at %s: %v", addr, err)
	}
	return tds.Has(topic)
}

// TestEmbeddedBrokerListen: run and shell start their embedded broker
// where --broker-listen says, at every start, so clients configured for
// it keep working across restarts, and they say where on stderr. A named
// address that is taken stops the command with an error naming it.
func TestEmbeddedBrokerListen(t *testing.T) {
	file, dataDir := streamFile(t), t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	want := regexp.MustCompile(`^embedded broker on ` + regexp.QuoteMeta(addr) + ` \(data in ` + regexp.QuoteMeta(filepath.Join(dataDir, "broker")) + `\)\n` +
		`embedded schema registry on http://127\.0\.0\.1:\d+\nStream created\n$`)
	for start := 1; start <= 2; start++ {
		p := startSluice(t, "run", file, "--data-dir", dataDir, "--broker-listen", addr, "--schema-registry-listen", "127.0.0.1:0")
		got := awaitStreamCreated(t, p)
		if !want.MatchString(got) {
			t.Fatalf("start %d: stderr %q, want it to match %q", start, got, want)
		}
		if !hasTopic(t, addr, "s") {
			t.Errorf("start %d: no topic s at %s", start, addr)
		}
		p.stop(t, 30*time.Second)
	}

	out, stderr, code := runSluice(t, "shell", "--data-dir", dataDir, "--broker-listen", addr, "--schema-registry-listen", "127.0.0.1:0", "-e", "SHOW TOPICS;")
	requireExit(t, code, 0, stderr)
	// A script's stderr stays empty (the interactive banner names the
	// broker); the topic run created shows the shell reached the pinned one.
	if stderr != "" || !strings.Contains(out, "| s           | 1          |") {
		t.Errorf("shell on %s: stdout:\n%s\nstderr:\n%s", addr, out, stderr)
	}

	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	busy := held.Addr().String()
	_, stderr, code = runSluice(t, "run", file, "--data-dir", t.TempDir(), "--broker-listen", busy, "--schema-registry-listen", "127.0.0.1:0")
	requireExit(t, code, 1, stderr)
	wantErr := fmt.Sprintf("sluice: start embedded broker on %[1]s: listen tcp %[1]s: bind: address already in use (choose another address with --broker-listen, or a running Kafka with --brokers)\n", busy)
	if stderr != wantErr {
		t.Errorf("stderr with %s taken:\n%q\nwant:\n%q", busy, stderr, wantErr)
	}
}

// TestEmbeddedBrokerDefaultTaken: without --broker-listen the embedded
// broker listens on Kafka's 127.0.0.1:9092; when that is taken it listens
// on a free port and says so, naming both.
func TestEmbeddedBrokerDefaultTaken(t *testing.T) {
	// Held by this test, or already by someone else: taken either way.
	if ln, err := net.Listen("tcp", "127.0.0.1:9092"); err == nil {
		defer ln.Close()
	}
	cmd := exec.Command(sluiceBin, "run", streamFile(t), "--data-dir", t.TempDir(), "--schema-registry-listen", "127.0.0.1:0")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SLUICE_BROKER_LISTEN=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	p := startCmd(t, cmd)
	got := awaitStreamCreated(t, p)
	m := regexp.MustCompile(`^embedded broker: 127\.0\.0\.1:9092 is in use; listening on (127\.0\.0\.1:\d+) instead \(pin an address with --broker-listen\)\n` +
		`embedded broker on (127\.0\.0\.1:\d+) \(`).FindStringSubmatch(got)
	if m == nil || m[1] != m[2] || m[1] == "127.0.0.1:9092" {
		t.Fatalf("stderr %q: want the fallback line and the broker's address on a free port", got)
	}
	if !hasTopic(t, m[1], "s") {
		t.Errorf("no topic s at %s", m[1])
	}
	p.stop(t, 30*time.Second)
}
