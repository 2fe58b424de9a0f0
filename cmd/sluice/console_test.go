package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

// TestServerConsoleHeadless runs the real binary on its embedded broker with
// a windowed count and reads its console with stock headless chromium, the
// way scripts/console-screenshots does:
//
//   - --dump-dom and --screenshot with --virtual-time-budget return (a page
//     holding an event stream open never let virtual time run out), and so
//     does --screenshot without it;
//   - the queries page names the owning instance by its advertised
//     host:port, not its generated id;
//   - a running query offers Pause (not Resume), a paused one Resume (not
//     Pause), each beside Terminate;
//   - the query's page shows every node's whole label, the store's edge to
//     its operator, and no hot-key row for tasks that read nothing.
//
// It needs chromium on PATH (scripts/install-chromium); SLUICE_SKIP_BROWSER=1
// skips it.
func TestServerConsoleHeadless(t *testing.T) {
	if os.Getenv("SLUICE_SKIP_BROWSER") == "1" {
		t.Skip("SLUICE_SKIP_BROWSER=1")
	}
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("no chromium on PATH: run scripts/install-chromium (or set SLUICE_SKIP_BROWSER=1)")
	}
	dir := t.TempDir()
	p := startServer(t, "--data-dir", dir, "--service-id", testkafka.Name(t, "svc"))
	base := p.base
	hostPort := strings.TrimPrefix(base, "http://")
	ksql := func(statement string) {
		t.Helper()
		body, err := json.Marshal(map[string]any{"ksql": statement, "streamsProperties": map[string]string{}})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.Post(base+"/ksql", "application/json", strings.NewReader(string(body)))
		if err != nil {
			t.Fatalf("%s: %v", statement, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", statement, resp.StatusCode, b)
		}
	}
	ksql(`CREATE STREAM clicks (user VARCHAR KEY, page VARCHAR) WITH (KAFKA_TOPIC='console_clicks', VALUE_FORMAT='JSON', PARTITIONS=1);
CREATE TABLE counts AS SELECT user, COUNT(*) AS n FROM clicks WINDOW TUMBLING (SIZE 10 SECONDS) GROUP BY user EMIT CHANGES;`)

	// The instance registry publishes this instance's partitions within a
	// heartbeat; the page can only name an owner after that.
	type owner struct{ Instance, URL string }
	var owners []owner
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		resp, err := http.Get(base + "/console/api/queries")
		if err != nil {
			t.Fatal(err)
		}
		var qs []struct {
			ID     string
			Owners []owner
		}
		err = json.NewDecoder(resp.Body).Decode(&qs)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(qs) == 1 && len(qs[0].Owners) == 1 {
			owners = qs[0].Owners
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no owner of CTAS_COUNTS listed within 30 s: %+v", qs)
		}
	}
	if owners[0].URL != base || owners[0].Instance == "" || strings.Contains(owners[0].Instance, hostPort) {
		t.Fatalf("owner %+v, want url %s and a generated instance id", owners[0], base)
	}

	// chrome runs chromium with the stock flags (and a profile of its own,
	// so parallel runs do not share one) and fails the test unless it
	// returns within a minute.
	chrome := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		args = append([]string{"--headless", "--no-sandbox", "--user-data-dir=" + t.TempDir(), "--window-size=1400,900"}, args...)
		cmd := exec.CommandContext(ctx, chromium, args...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		start := time.Now()
		out, err := cmd.Output()
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			t.Fatalf("chromium %s did not return within a minute", strings.Join(args, " "))
		}
		if err != nil {
			t.Fatalf("chromium %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		t.Logf("chromium %s: %s", args[len(args)-2], time.Since(start).Round(time.Millisecond))
		return string(out)
	}
	tags := regexp.MustCompile(`<[^>]*>`)
	// cell is the text of the queries page's cell data-col=col (or the
	// actions cell) in the row of query id, with tags removed and spaces
	// collapsed.
	cell := func(dom, id, col string) string {
		t.Helper()
		row := regexp.MustCompile(`(?s)<tr data-query="` + id + `">(.*?)</tr>`).FindStringSubmatch(dom)
		if row == nil {
			t.Fatalf("no row of %s in the page:\n%s", id, dom)
		}
		sel := `data-col="` + col + `"`
		if col == "actions" {
			sel = `class="actions"`
		}
		m := regexp.MustCompile(`(?s)<td[^>]*` + sel + `[^>]*>(.*?)</td>`).FindStringSubmatch(row[1])
		if m == nil {
			t.Fatalf("no %s cell in the row of %s:\n%s", col, id, row[1])
		}
		return strings.Join(strings.Fields(tags.ReplaceAllString(m[1], " ")), " ")
	}

	dom := chrome("--virtual-time-budget=5000", "--dump-dom", base+"/")
	for _, c := range []struct{ col, want string }{
		{"state", "RUNNING"},
		{"instances", hostPort},
		{"actions", "Pause Terminate"},
	} {
		if got := cell(dom, "CTAS_COUNTS", c.col); got != c.want {
			t.Errorf("running query's %s cell: %q, want %q", c.col, got, c.want)
		}
	}
	if got := regexp.MustCompile(`title="instance ([0-9a-z]+)`).FindStringSubmatch(dom); got == nil || got[1] != owners[0].Instance {
		t.Errorf("instance chip's tooltip names %v, want instance %s", got, owners[0].Instance)
	}

	// The query's page: every node's label is all there, wrapped onto
	// lines but not cut (the tooltip holds the whole label); the store
	// hangs off its operator by an edge; a task that has read no record has
	// no hot-key row, so with none read the card is hidden.
	dom = chrome("--virtual-time-budget=5000", "--dump-dom", base+"/#/query/CTAS_COUNTS")
	nodes := regexp.MustCompile(`(?s)<g class="node node-(\w+)" data-node="\d+"><title>(.*?)</title>.*?<text class="label">(.*?)</text></g>`).FindAllStringSubmatch(dom, -1)
	var kinds []string
	for _, n := range nodes {
		kinds = append(kinds, n[1])
		squeeze := func(s string) string { return strings.Join(strings.Fields(s), "") }
		if title, shown := squeeze(n[2]), squeeze(tags.ReplaceAllString(n[3], " ")); shown != title {
			t.Errorf("%s node shows %q, want all of %q", n[1], shown, title)
		}
	}
	if got, want := strings.Join(kinds, ","), "source,operator,operator,operator,operator,sink,store"; got != want {
		t.Errorf("query page's nodes: %s, want %s", got, want)
	}
	if got := strings.Count(dom, `class="store-edge"`); got != 1 {
		t.Errorf("query page has %d store edges, want 1", got)
	}
	if !strings.Contains(dom, `<section class="card" id="hotkeys-card" hidden="">`) || !strings.Contains(dom, `<div id="hotkeys"></div>`) {
		t.Errorf("query page shows hot keys with no record read:\n%s", dom)
	}

	ksql("PAUSE CTAS_COUNTS;")
	dom = chrome("--virtual-time-budget=5000", "--dump-dom", base+"/")
	for _, c := range []struct{ col, want string }{
		{"state", "PAUSED"},
		{"actions", "Resume Terminate"},
	} {
		if got := cell(dom, "CTAS_COUNTS", c.col); got != c.want {
			t.Errorf("paused query's %s cell: %q, want %q", c.col, got, c.want)
		}
	}

	for i, flags := range [][]string{{"--virtual-time-budget=5000"}, nil} {
		png := filepath.Join(t.TempDir(), fmt.Sprintf("console-%d.png", i))
		chrome(append(flags, "--screenshot="+png, base+"/")...)
		b, err := os.ReadFile(png)
		if err != nil {
			t.Fatalf("screenshot %v: %v", flags, err)
		}
		if !strings.HasPrefix(string(b), "\x89PNG\r\n\x1a\n") {
			t.Errorf("screenshot %v: not a PNG (%d bytes)", flags, len(b))
		}
	}
	p.stop(t, 30*time.Second)
}
