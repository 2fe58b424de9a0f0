package testcdc

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

// EnvCDC names the environment variable that switches on the tests that
// start PostgreSQL and Kafka Connect (SLUICE_TEST_CDC=1). They need Java,
// Maven (once, to fetch Connect and Debezium), PostgreSQL (scripts/postgres
// installs Debian's) and a real broker in SLUICE_TEST_BROKERS.
const EnvCDC = "SLUICE_TEST_CDC"

// Require skips the test unless SLUICE_TEST_CDC=1 and SLUICE_TEST_BROKERS
// names a real broker, with a message that says which is missing. Call it
// first, so that a skipped test starts nothing.
func Require(t testing.TB) {
	t.Helper()
	requireCDC(t)
	if !testkafka.External() {
		t.Skipf("%s=1 is set, but Kafka Connect needs a real broker: set %s (scripts/kafka start)", EnvCDC, testkafka.EnvBrokers)
	}
	for _, tool := range []string{"java", "bash", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found: scripts/connect needs it to run Kafka Connect", tool)
		}
	}
}

func requireCDC(t testing.TB) {
	t.Helper()
	if os.Getenv(EnvCDC) != "1" {
		t.Skipf("set %s=1 (and %s to an Apache Kafka, scripts/kafka start) to run the tests on a real PostgreSQL and Kafka Connect with Debezium (scripts/postgres, scripts/connect)", EnvCDC, testkafka.EnvBrokers)
	}
}

// script is one of the repository's scripts run against one run dir.
type script struct {
	path   string
	dirEnv string // the variable naming the run dir, e.g. SLUICE_PG_DIR
	dir    string
}

// newScript finds scripts/name above the working directory and makes a run
// dir for it under the system's temporary directory (not t.TempDir: the
// postgres user must reach it, and t.TempDir's parents are private).
func newScript(t testing.TB, name, dirEnv string) *script {
	t.Helper()
	path, err := repoScript(name)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "sluice-"+name+"-")
	if err != nil {
		t.Fatalf("run dir for scripts/%s: %v", name, err)
	}
	return &script{path: path, dirEnv: dirEnv, dir: dir}
}

// run runs the script with args, stdin as its input; it returns stdout, and
// on failure an error carrying stderr.
func (s *script) run(stdin string, env []string, args ...string) (string, error) {
	x := exec.Command(s.path, args...)
	x.Env = append(append(os.Environ(), s.dirEnv+"="+s.dir), env...)
	x.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	x.Stdout, x.Stderr = &stdout, &stderr
	if err := x.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %w\n%s", s.path, strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// stopAtCleanup runs `script stop` when the test ends and removes the run
// dir; when stop fails the dir is kept, so that its pid files let a person
// finish the job (SLUICE_..._DIR=dir scripts/... stop).
func (s *script) stopAtCleanup(t testing.TB) {
	t.Cleanup(func() {
		if _, err := s.run("", nil, "stop"); err != nil {
			t.Errorf("run dir %s kept: %v", s.dir, err)
			return
		}
		os.RemoveAll(s.dir)
		os.Remove(s.dir + ".lock")
	})
}

// lastLine is the result a script prints last on stdout.
func lastLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// repoScript finds scripts/name in the module root above the working directory.
func repoScript(name string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find scripts/%s: %w", name, err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			p := filepath.Join(dir, "scripts", name)
			if _, err := os.Stat(p); err != nil {
				return "", fmt.Errorf("find scripts/%s: %w", name, err)
			}
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("find scripts/%s: no go.mod above the working directory", name)
		}
		dir = parent
	}
}
