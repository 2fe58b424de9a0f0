package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

// TestNodeKsqldbClient runs npm's ksqldb-client 1.0.5 (over HTTP/2, as
// ksqlDB's clients do) against `sluice server`: executeStatement creates
// a stream and a table, listStreams, insertInto (which reads its acks as
// one JSON array: it asks for application/json), streamQuery from
// earliest with LIMIT, and a pull query on the table. The client side is
// testdata/node-ksqldb-client.js, the client from
// scripts/install-node-ksqldb-client.
func TestNodeKsqldbClient(t *testing.T) {
	nodeModules := nodeKsqldbClient(t)
	s := startServer(t, "--brokers", testkafka.Brokers(t), "--service-id", testkafka.Name(t, "svc"), "--data-dir", t.TempDir())
	defer func() {
		if t.Failed() {
			t.Logf("sluice server stderr:\n%s", s.proc.stderr.String())
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join("testdata", "node-ksqldb-client.js"), s.base,
		testkafka.Name(t, "node_orders"), testkafka.Name(t, "node_totals"))
	cmd.Env = append(os.Environ(), "NODE_PATH="+nodeModules)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("node-ksqldb-client.js: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errOut.String())
	}
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if diff := cmp.Diff(golden(t, filepath.Join("testdata", "node-ksqldb-client.golden")), got); diff != "" {
		t.Errorf("client output (-want +got):\n%s\nstderr:\n%s", diff, errOut.String())
	}
	s.proc.stop(t, 30*time.Second)
}

// nodeKsqldbClient is the node_modules directory of
// scripts/install-node-ksqldb-client ($SLUICE_NODE_KSQLDB, default
// ~/.cache/sluice/node-ksqldb-client). Without node or the client the
// test skips, except in CI, where .ci/run installs both and their
// absence fails.
func nodeKsqldbClient(t *testing.T) string {
	t.Helper()
	prefix := os.Getenv("SLUICE_NODE_KSQLDB")
	if prefix == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			t.Fatal(err)
		}
		prefix = filepath.Join(home, ".cache", "sluice", "node-ksqldb-client")
	}
	nodeModules := filepath.Join(prefix, "node_modules")
	cmd := exec.Command("node", "-e", `if (require("ksqldb-client/package.json").version !== "1.0.5") process.exit(1)`)
	cmd.Env = append(os.Environ(), "NODE_PATH="+nodeModules)
	err := cmd.Run()
	switch {
	case err == nil:
		return nodeModules
	case os.Getenv("CI") != "":
		t.Fatalf("node with ksqldb-client 1.0.5 in %s: %v (scripts/install-node-ksqldb-client installs it; .ci/run calls it)", nodeModules, err)
	default:
		t.Skipf("no node with ksqldb-client 1.0.5 in %s (%v): run scripts/install-node-ksqldb-client", nodeModules, err)
	}
	return ""
}
