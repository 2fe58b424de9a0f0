package testkafka

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// EnvCluster names the environment variable that switches on the tests
// that start their own three-node Apache Kafka cluster (SLUICE_TEST_CLUSTER=1).
// They are heavy (three JVMs), so CI runs them once, in a step of their own.
const EnvCluster = "SLUICE_TEST_CLUSTER"

// Cluster is a multi-node Apache Kafka cluster started by scripts/kafka
// (start --nodes N) for one test, stopped when the test ends.
type Cluster struct {
	// Brokers is the comma-separated bootstrap list.
	Brokers string
	dir     string
	script  string
}

// StartCluster starts an n-node cluster in its own run dir, or skips the
// test when SLUICE_TEST_CLUSTER is not 1 or java/mvn are missing (a clear
// message says which). host is the address the listeners bind and advertise
// ("" for 127.0.0.1).
func StartCluster(t testing.TB, nodes int, host string) *Cluster {
	t.Helper()
	if os.Getenv(EnvCluster) != "1" {
		t.Skipf("set %s=1 to run the tests on a %d-node Apache Kafka cluster (scripts/kafka start --nodes %d)", EnvCluster, nodes, nodes)
	}
	for _, tool := range []string{"java", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found: scripts/kafka needs it to run Apache Kafka", tool)
		}
	}
	script, err := repoScript()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "sluice-kafka-cluster-")
	if err != nil {
		t.Fatalf("run dir for the cluster: %v", err)
	}
	c := &Cluster{dir: dir, script: script}
	t.Cleanup(func() {
		if out, err := c.run("stop"); err != nil {
			// Keep the run dir: its pid files let SLUICE_KAFKA_DIR=dir scripts/kafka stop finish the job.
			t.Errorf("scripts/kafka stop (run dir %s kept): %v\n%s", dir, err, out)
			return
		}
		os.RemoveAll(dir)
		os.Remove(dir + ".lock")
	})
	env := []string{}
	if host != "" {
		env = append(env, "SLUICE_KAFKA_HOST="+host)
	}
	out, err := c.run("start", append([]string{"--nodes", fmt.Sprint(nodes)}, env...)...)
	if err != nil {
		t.Fatalf("scripts/kafka start --nodes %d: %v\n%s", nodes, err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	c.Brokers = strings.TrimSpace(lines[len(lines)-1])
	return c
}

// StopNode SIGKILLs node n (1-based). t is the running (sub)test, which
// a failure stops.
func (c *Cluster) StopNode(t testing.TB, n int) {
	t.Helper()
	if out, err := c.run("stop-node", fmt.Sprint(n)); err != nil {
		t.Fatalf("scripts/kafka stop-node %d: %v\n%s", n, err, out)
	}
}

// StartNode restarts node n with its data and waits until it answers.
func (c *Cluster) StartNode(t testing.TB, n int) {
	t.Helper()
	if out, err := c.run("start-node", fmt.Sprint(n)); err != nil {
		t.Fatalf("scripts/kafka start-node %d: %v\n%s", n, err, out)
	}
}

// run runs scripts/kafka cmd args...; arguments of the form K=V are
// passed as environment instead. It returns stdout, and stderr on failure.
func (c *Cluster) run(cmd string, args ...string) (string, error) {
	var argv, env []string
	for _, a := range args {
		if strings.Contains(a, "=") && !strings.HasPrefix(a, "-") {
			env = append(env, a)
			continue
		}
		argv = append(argv, a)
	}
	x := exec.Command(c.script, append([]string{cmd}, argv...)...)
	x.Env = append(append(os.Environ(), "SLUICE_KAFKA_DIR="+c.dir), env...)
	var stdout, stderr bytes.Buffer
	x.Stdout, x.Stderr = &stdout, &stderr
	if err := x.Run(); err != nil {
		return stdout.String() + stderr.String(), fmt.Errorf("run %s %s: %w", c.script, cmd, err)
	}
	return stdout.String(), nil
}

// repoScript finds scripts/kafka above the working directory.
func repoScript() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find scripts/kafka: %w", err)
	}
	for {
		p := filepath.Join(dir, "scripts", "kafka")
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			if _, err := os.Stat(p); err != nil {
				return "", fmt.Errorf("find scripts/kafka: %w", err)
			}
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("find scripts/kafka: no go.mod above the working directory")
		}
		dir = parent
	}
}
