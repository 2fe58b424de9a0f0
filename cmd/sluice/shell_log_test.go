package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

// TestShellLogKeepsPrompt runs the interactive shell with an engine of its
// own on a pseudo-terminal and has a query log a WARN (a record that is
// not JSON) while a statement is half typed at the prompt. The entry must
// start on a line of its own (readline clears the prompt line first), the
// prompt and the half-typed text come back below it, and finishing the
// statement runs it. Before, the entry was written after the typed text,
// on the prompt's line.
func TestShellLogKeepsPrompt(t *testing.T) {
	brokers := testkafka.Brokers(t)
	topic := testkafka.Name(t, "logs_in")
	testkafka.CreateTopic(t, brokers, topic, 1)
	env := []string{"XDG_STATE_HOME=" + t.TempDir(), "TERM=xterm"}
	sh := startPty(t, env, "shell", "--brokers", brokers, "--data-dir", t.TempDir(), "--service-id", testkafka.Name(t, "svc"))
	sh.expect(t, "sluice> ")
	sh.send(t, "SET 'auto.offset.reset'='earliest';\r")
	sh.expect(t, "Successfully changed local property 'auto.offset.reset' to 'earliest'.")
	sh.expect(t, "sluice> ")
	sh.send(t, "CREATE STREAM logs_in (id VARCHAR KEY, v INT) WITH (KAFKA_TOPIC='"+topic+"', VALUE_FORMAT='JSON');\r")
	sh.expect(t, "Stream created")
	sh.expect(t, "sluice> ")
	sh.send(t, "CREATE STREAM logs_out AS SELECT id, v FROM logs_in;\r")
	sh.expect(t, "Created query with ID CSAS_LOGS_OUT")
	sh.expect(t, "sluice> ")

	sh.send(t, "SHOW STR")
	sh.expect(t, "SHOW STR")
	testkafka.Produce(t, brokers, &kgo.Record{Topic: topic, Key: []byte("a"), Value: []byte("not json")})
	const entry = `level=WARN msg="skipping bad record" query=CSAS_LOGS_OUT topic=` // the entry's start after its time
	sh.expect(t, entry)
	sh.expect(t, "\n")
	sh.expect(t, "sluice> SHOW STR")
	sh.mu.Lock()
	all := sh.out.String()
	sh.mu.Unlock()
	at := strings.Index(all, entry)
	start := strings.LastIndex(all[:at], "time=")
	// What the terminal shows on the entry's line before it: the text
	// after the last carriage return or newline.
	before := all[:start]
	before = before[strings.LastIndexAny(before, "\r\n")+1:]
	if before != "" {
		t.Errorf("the WARN entry starts after %q on its line, want it on a line of its own:\n%q", before, all[start-80:])
	}
	if re := regexp.MustCompile(`^time=\S+ ` + regexp.QuoteMeta(entry)); !re.MatchString(all[start:]) {
		t.Errorf("the entry reads %q", all[start:min(len(all), start+200)])
	}

	sh.send(t, "EAMS;\r")
	sh.expect(t, "| LOGS_IN ")
	sh.expect(t, "sluice> ")
	sh.send(t, "\x04")
	sh.exit(t)
}
