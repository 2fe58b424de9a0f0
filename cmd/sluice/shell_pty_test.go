package main

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

// ptyProc is the real binary on a pseudo-terminal, as a person at a
// terminal runs it: line editing, raw mode, Ctrl-C as a key.
type ptyProc struct {
	cmd  *exec.Cmd
	tty  *os.File
	mu   sync.Mutex
	out  bytes.Buffer
	seen int // expect looks only at output after the last match
	done chan error
}

func startPty(t *testing.T, env []string, args ...string) *ptyProc {
	t.Helper()
	p := &ptyProc{cmd: exec.Command(sluiceBin, args...), done: make(chan error, 1)}
	p.cmd.Dir = repoRoot
	p.cmd.Env = append(os.Environ(), env...)
	tty, err := pty.StartWithSize(p.cmd, &pty.Winsize{Rows: 50, Cols: 200})
	if err != nil {
		t.Fatalf("start on a pseudo-terminal: %v", err)
	}
	p.tty = tty
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := tty.Read(buf)
			p.mu.Lock()
			p.out.Write(buf[:n])
			p.mu.Unlock()
			if err != nil {
				break
			}
		}
		p.done <- p.cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		_ = tty.Close()
	})
	return p
}

func (p *ptyProc) send(t *testing.T, keys string) {
	t.Helper()
	if _, err := io.WriteString(p.tty, keys); err != nil {
		t.Fatalf("type %q: %v", keys, err)
	}
}

// expect waits until the output after the previous match holds want.
func (p *ptyProc) expect(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		p.mu.Lock()
		all := p.out.String()
		p.mu.Unlock()
		if i := strings.Index(all[p.seen:], want); i >= 0 {
			p.seen += i + len(want)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q on the terminal within 30 s; after the last match it shows:\n%s", want, all[p.seen:])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// exit waits for the process to end and requires exit code 0.
func (p *ptyProc) exit(t *testing.T) {
	t.Helper()
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("shell exit: %v; terminal:\n%s", err, p.out.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("shell still running 30 s after Ctrl-D")
	}
}

// TestShellInteractive drives `sluice shell --server` on a pseudo-terminal
// against a `sluice server` the test starts: a two-line CREATE, tab
// completion of a keyword and of a stream name, a push query whose rows
// appear while another client inserts through the server's HTTP API,
// Ctrl-C back to the prompt, Ctrl-D out, and the history recalled with Up
// after a restart.
func TestShellInteractive(t *testing.T) {
	dir := t.TempDir()
	topic := testkafka.Name(t, "clicks")
	srv := startSluice(t, "server", "--listen", "127.0.0.1:0", "--brokers", testkafka.Brokers(t), "--data-dir", dir,
		"--service-id", testkafka.Name(t, "svc"), "--auth", "alice:secret")
	var base string
	srv.waitFor(t, time.Minute, "the listening line", func(lines []string) bool {
		for _, l := range lines {
			if a, ok := strings.CutPrefix(l, "sluice server listening on "); ok {
				base = a
				return true
			}
		}
		return false
	})
	insert := func(values string) {
		t.Helper()
		req, err := http.NewRequest("POST", base+"/ksql", strings.NewReader(`{"ksql":"INSERT INTO clicks VALUES (`+values+`);"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.SetBasicAuth("alice", "secret")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("insert: %d %s", resp.StatusCode, body)
		}
	}
	state := t.TempDir()
	env := []string{"XDG_STATE_HOME=" + state, "TERM=xterm"}
	url := strings.Replace(base, "http://", "http://alice:secret@", 1)

	sh := startPty(t, env, "shell", "--server", url)
	sh.expect(t, "sluice> ")
	sh.send(t, "CREATE STREAM clicks (id VARCHAR KEY, v INT)\r")
	sh.expect(t, "   ...> ")
	sh.send(t, "  WITH (KAFKA_TOPIC='"+topic+"', VALUE_FORMAT='JSON', PARTITIONS=1);\r")
	sh.expect(t, "Stream created")
	sh.expect(t, "sluice> ")

	// Tab completes the keyword: "SHOW STR;" alone would not parse.
	sh.send(t, "SHOW STR\t;\r")
	sh.expect(t, "| CLICKS      | "+topic+" |")
	sh.expect(t, "sluice> ")
	// … and the stream name, from the server's catalog, in its case.
	sh.send(t, "DESCRIBE cli\t;\r")
	sh.expect(t, "Kafka topic   : "+topic+" (partitions: 1)")
	sh.expect(t, "sluice> ")

	// Function entities print as they do from the embedded engine.
	sh.send(t, "DESCRIBE FUNCTION sum;\r")
	sh.expect(t, "Name          : SUM\r\nType          : AGGREGATE\r\nOverview      : The sum of the non-NULL values.\r\n")
	sh.expect(t, "sluice> ")

	// Errors show the statement's line with a caret, as the server
	// phrased them.
	sh.send(t, "SELECT * FORM clicks;\r")
	sh.expect(t, "SELECT * FORM clicks;\r\n         ^")
	sh.expect(t, "sluice> ")

	sh.send(t, "SET 'auto.offset.reset'='earliest';\r")
	sh.expect(t, "Successfully changed local property 'auto.offset.reset' to 'earliest'.")
	sh.send(t, "SELECT * FROM clicks EMIT CHANGES;\r")
	sh.expect(t, "| ID         | V          |")
	insert("'a', 1")
	sh.expect(t, "| a          | 1          |")
	insert("'b', 2")
	sh.expect(t, "| b          | 2          |")
	sh.send(t, "\x03")
	sh.expect(t, "Query terminated")
	sh.expect(t, "sluice> ")
	// Ctrl-C at the prompt drops the line typed so far.
	sh.send(t, "SHOW TAB\x03")
	sh.expect(t, "sluice> ")
	sh.send(t, "\x04")
	sh.exit(t)

	hist, err := os.ReadFile(filepath.Join(state, "sluice", "history"))
	if err != nil {
		t.Fatal(err)
	}
	wantHist := "CREATE STREAM clicks (id VARCHAR KEY, v INT) WITH (KAFKA_TOPIC='" + topic + "', VALUE_FORMAT='JSON', PARTITIONS=1);\n" +
		"SHOW STREAMS ;\nDESCRIBE CLICKS ;\nDESCRIBE FUNCTION sum;\nSELECT * FORM clicks;\nSET 'auto.offset.reset'='earliest';\nSELECT * FROM clicks EMIT CHANGES;\n"
	if string(hist) != wantHist {
		t.Errorf("history file:\n%s\nwant:\n%s", hist, wantHist)
	}

	// A new shell recalls the last statements with Up and runs one.
	sh = startPty(t, env, "shell", "--server", url)
	sh.expect(t, "sluice> ")
	sh.send(t, "\x1b[A")
	sh.expect(t, "SELECT * FROM clicks EMIT CHANGES;")
	sh.send(t, "\x1b[A\x1b[A\x1b[A\x1b[A\x1b[A")
	sh.expect(t, "SHOW STREAMS ;")
	sh.send(t, "\r")
	sh.expect(t, "| CLICKS      | "+topic+" |")
	sh.expect(t, "sluice> ")
	sh.send(t, "exit\r")
	sh.exit(t)
}

// TestShellInteractiveEmbedded drives the shell's own engine (on the
// test's Kafka via --brokers) on a pseudo-terminal: rows of a push query
// appear as another client produces to the topic, Ctrl-C stops the query
// and keeps the shell, and PRINT shows the topic's records.
func TestShellInteractiveEmbedded(t *testing.T) {
	brokers := testkafka.Brokers(t)
	topic := testkafka.Name(t, "pings")
	sh := startPty(t, []string{"XDG_STATE_HOME=" + t.TempDir(), "TERM=xterm"}, "shell", "--brokers", brokers,
		"--data-dir", t.TempDir(), "--service-id", testkafka.Name(t, "svc"))
	sh.expect(t, "sluice> ")
	sh.send(t, "CREATE STREAM pings (host VARCHAR KEY, ms INT) WITH (KAFKA_TOPIC='"+topic+"',\r")
	sh.expect(t, "   ...> ")
	sh.send(t, "  VALUE_FORMAT='JSON', PARTITIONS=1);\r")
	sh.expect(t, "Stream created")
	// From the start: the header prints before the query's consumer has
	// found the topic's end, so with latest a record produced at once
	// could be skipped on a busy machine.
	sh.send(t, "SET 'auto.offset.reset'='earliest';\r")
	sh.expect(t, "Successfully changed local property 'auto.offset.reset' to 'earliest'.")
	sh.send(t, "SELECT host, ms * 2 AS twice FROM pings EMIT CHANGES;\r")
	sh.expect(t, "| HOST       | TWICE      |")
	testkafka.Produce(t, brokers, &kgo.Record{Topic: topic, Key: []byte("a"), Value: []byte(`{"MS": 21}`)})
	sh.expect(t, "| a          | 42         |")
	testkafka.Produce(t, brokers, &kgo.Record{Topic: topic, Key: []byte("b"), Value: []byte(`{}`)})
	sh.expect(t, "| b          | NULL       |")
	sh.send(t, "\x03")
	sh.expect(t, "Query terminated")
	sh.expect(t, "sluice> ")
	sh.send(t, "PRINT '"+topic+"' FROM BEGINNING LIMIT 1;\r")
	sh.expect(t, `| 0          | a          | {"MS": 21} |`)
	sh.expect(t, "sluice> ")
	sh.send(t, "\x04")
	sh.exit(t)
}

// TestShellInteractiveEmbeddedBroker: on its own embedded broker the
// interactive shell names the broker and the embedded schema registry
// in its banner, SHOW FUNCTIONS and DESCRIBE FUNCTION print at the
// prompt as they do in scripts, and Ctrl-C clears the line even with the
// completion menu open.
func TestShellInteractiveEmbeddedBroker(t *testing.T) {
	dir := t.TempDir()
	sh := startPty(t, []string{"XDG_STATE_HOME=" + t.TempDir(), "TERM=xterm"}, "shell", "--data-dir", dir,
		"--schema-registry-listen", "127.0.0.1:0")
	sh.expect(t, "Sluice shell: embedded engine on the embedded broker 127.0.0.1:")
	sh.expect(t, " (data in "+dir+"), schema registry on http://127.0.0.1:")
	sh.expect(t, "sluice> ")
	sh.send(t, "SHOW FUNCTIONS;\r")
	sh.expect(t, "| Function Name ")
	sh.expect(t, "| ABS ")
	sh.expect(t, "| UUID ")
	sh.expect(t, "sluice> ")
	sh.send(t, "DESCRIBE FUNCTION sum;\r")
	sh.expect(t, "Name          : SUM\r\nType          : AGGREGATE\r\nOverview      : The sum of the non-NULL values.\r\n")
	sh.expect(t, "sluice> ")
	// The first Ctrl-C with the completion menu open clears the line:
	// what is typed next runs alone.
	sh.send(t, "SELECT U\t")
	sh.expect(t, "UNIX_TIMESTAMP(")
	sh.send(t, "\x03")
	sh.expect(t, "sluice> ")
	sh.send(t, "SHOW TABLES;\r")
	sh.expect(t, "| Table Name | Kafka Topic | Key Format | Value Format | Windowed |")
	sh.expect(t, "sluice> ")
	sh.send(t, "\x04")
	sh.exit(t)
}
