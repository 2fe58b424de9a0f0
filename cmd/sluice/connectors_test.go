package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/internal/testcdc"
	"github.com/sluice-sql/sluice/internal/testkafka"
)

// TestConnectorFileReruns runs, with the real binary on a real Kafka
// Connect, a SQL file that creates a connector IF NOT EXISTS twice, as
// `sluice run` does on each start: the first run creates it, the second
// is told it exists and goes on. The Connect URL comes from
// --connect-url, then from SLUICE_CONNECT_URL; a server reads it from
// ksql.connect.url in its --config file, says which Connect it uses,
// skips the CREATE of its --file for the connector Connect has, and
// drops the connector.
func TestConnectorFileReruns(t *testing.T) {
	testcdc.Require(t)
	brokers := testkafka.Brokers(t)
	url := testcdc.StartConnect(t, brokers).URL
	topic := testkafka.Name(t, "lines")
	testkafka.CreateTopic(t, brokers, topic, 1)
	name := strings.ToUpper(testkafka.Name(t, "file_src"))
	dir := t.TempDir()
	sqlFile := filepath.Join(dir, "pipeline.sql")
	sql := fmt.Sprintf("CREATE SOURCE CONNECTOR IF NOT EXISTS %s WITH ('connector.class'='FileStreamSource', 'file'='%s', 'topic'='%s');\n",
		name, filepath.Join(dir, "in.txt"), topic)
	if err := os.WriteFile(sqlFile, []byte(sql), 0o644); err != nil {
		t.Fatal(err)
	}
	awaitStderr := func(p *proc, want string) {
		t.Helper()
		testkafka.Await(t, time.Minute, want, func() bool { return strings.Contains(p.stderr.String(), want) })
	}
	announce := "connector statements use Kafka Connect at " + url
	first := startSluice(t, "run", sqlFile, "--brokers", brokers, "--data-dir", t.TempDir(), "--connect-url", url)
	awaitStderr(first, "Created connector "+name)
	awaitStderr(first, announce)
	first.stop(t, 30*time.Second)

	cmd := exec.Command(sluiceBin, "run", sqlFile, "--brokers", brokers, "--data-dir", t.TempDir())
	cmd.Env = append(os.Environ(), "SLUICE_CONNECT_URL="+url)
	second := startCmd(t, cmd)
	awaitStderr(second, "Connector "+name+" already exists")
	second.stop(t, 30*time.Second)
	if strings.Contains(second.stderr.String(), "Created connector") {
		t.Errorf("second run created the connector again:\n%s", second.stderr.String())
	}

	// A server's --file runs once per service: a connector Connect
	// already has is skipped, as a stream the catalog has is.
	cfg := filepath.Join(dir, "server.json")
	if err := os.WriteFile(cfg, []byte(`{"ksql.connect.url": "`+url+`"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	serverFile := filepath.Join(dir, "server.sql")
	if err := os.WriteFile(serverFile, []byte(strings.Replace(sql, " IF NOT EXISTS", "", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, "--config", cfg, "--file", serverFile, "--brokers", brokers, "--data-dir", t.TempDir(), "--service-id", testkafka.Name(t, "svc"))
	awaitStderr(srv.proc, announce)
	body, _ := json.Marshal(map[string]string{"ksql": "DROP CONNECTOR " + name + ";"})
	status, got := srv.post(t, "/ksql", string(body))
	want := `[{"@type":"drop_connector","statementText":"DROP CONNECTOR ` + name + `;","connectorName":"` + name + `","warnings":[]}]` + "\n"
	if status != 200 || got != want {
		t.Errorf("DROP through the server: %d %s, want 200 %s", status, got, want)
	}
	srv.stop(t, 30*time.Second)
}
