package server_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

// TestConsoleBrowser drives the console in headless chromium: a windowed
// count with late records is listed on the queries page with the one
// action its state allows, its page shows the topology graph and the
// lateness plot with dropped and later-than-grace records told apart, and a
// push query run from the editor streams rows in. It screenshots each page
// into a temporary directory (scripts/console-screenshots takes the ones
// in docs/). It needs chromium on PATH (scripts/install-chromium);
// SLUICE_SKIP_BROWSER=1 skips it, nothing else does.
func TestConsoleBrowser(t *testing.T) {
	if os.Getenv("SLUICE_SKIP_BROWSER") == "1" {
		t.Skip("SLUICE_SKIP_BROWSER=1")
	}
	chromium := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			chromium = p
			break
		}
	}
	if chromium == "" {
		t.Fatal("no chromium on PATH: run scripts/install-chromium (or set SLUICE_SKIP_BROWSER=1)")
	}
	brokers := testkafka.Brokers(t)
	f := startWith(t, brokers, nil)
	in := testkafka.Name(t, "clicks")
	r := f.post(t, http.DefaultClient, "/ksql", ksqlBody(fmt.Sprintf(`CREATE STREAM clicks (user VARCHAR KEY, page VARCHAR, at BIGINT) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON', TIMESTAMP='at', PARTITIONS=1);
CREATE TABLE counts AS SELECT user, COUNT(*) AS n FROM clicks WINDOW TUMBLING (SIZE 10 SECONDS, GRACE PERIOD 1 SECOND) GROUP BY user EMIT CHANGES;`, in), map[string]string{"auto.offset.reset": "earliest"}), true)
	if r.status != http.StatusOK {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	// The records are written right after the CREATE, maybe before the
	// query's consumer has joined its group (slower on Apache Kafka, and
	// under load): it reads from the start (auto.offset.reset earliest),
	// not from where the topic ended when it joined (ksqlDB's latest).
	//
	// 40 records a second apart, and after every tenth one a record 13 s
	// late: its window closed (end + 1 s grace) before, so it is dropped.
	const base = 1_700_000_000_000
	now := time.Now().UnixMilli()
	var recs []*kgo.Record
	add := func(user string, at int64) {
		recs = append(recs, &kgo.Record{Topic: in, Key: []byte(user), Value: []byte(fmt.Sprintf(`{"page":"p","at":%d}`, at)), Timestamp: time.UnixMilli(now)})
	}
	for i := int64(0); i < 40; i++ {
		add([]string{"ann", "bob"}[i%2], base+i*1000)
		if i%10 == 9 {
			add("ann", base+i*1000-13000)
		}
	}
	testkafka.Produce(t, brokers, recs...)

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.WindowSize(1280, 800),
		chromedp.NoSandbox, chromedp.DisableGPU)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelA()
	bctx, cancelB := chromedp.NewContext(actx)
	defer cancelB()
	ctx, cancel := context.WithTimeout(bctx, 60*time.Second)
	defer cancel()
	auth := "Basic " + base64.StdEncoding.EncodeToString([]byte("alice:secret"))
	// Each screenshot must be a PNG.
	shotDir := t.TempDir()
	shot := func(name string) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			buf, err := chromedp.CaptureScreenshot()(ctx, tg)
			if err != nil {
				return fmt.Errorf("screenshot %s: %w", name, err)
			}
			if !strings.HasPrefix(string(buf), "\x89PNG") {
				return fmt.Errorf("screenshot %s: not a PNG (%d bytes)", name, len(buf))
			}
			return os.WriteFile(filepath.Join(shotDir, name), buf, 0o644)
		})
	}
	text := func(sel string, into *string) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			v, err := chromedp.Text(chromedp.CSS(sel))(ctx, tg)
			*into = v
			return err
		})
	}
	wait := func(sel string) chromedp.Action[chromedp.Void] { return chromedp.WaitVisible(chromedp.CSS(sel)) }
	until := func(expr string) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			if _, err := chromedp.Poll[bool](expr)(ctx, tg); err != nil {
				return fmt.Errorf("wait for %s: %w", expr, err)
			}
			return nil
		})
	}
	var listed, graph, plot, rows string
	// acts lists the data-act of the row's buttons.
	const acts = `Array.from(document.querySelectorAll('tr[data-query="CTAS_COUNTS"] button[data-act]')).map(b => b.dataset.act).join()`
	step := func(n int, a chromedp.Action[chromedp.Void]) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			if _, err := a(ctx, tg); err != nil {
				return fmt.Errorf("step %d: %w", n, err)
			}
			return nil
		})
	}
	err := chromedp.Do(ctx,
		step(1, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			if _, err := cdp.Call(ctx, tg, network.Enable, network.EnableParams{}); err != nil {
				return fmt.Errorf("network enable: %w", err)
			}
			_, err := cdp.Call(ctx, tg, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{"Authorization": auth}})
			return err
		})),
		step(2, chromedp.Navigate(f.base+"/")),
		step(3, wait(`tr[data-query="CTAS_COUNTS"]`)),
		step(4, until(`document.querySelector('tr[data-query="CTAS_COUNTS"] td[data-col="dropped"]').textContent === "4"`)),
		step(5, text(`#queries`, &listed)),
		step(6, shot("console-queries.png")),
		// PAUSE and RESUME from the row's buttons, seen in its state; each
		// state offers only the action that applies, beside TERMINATE.
		step(7, until(acts+` === "PAUSE,TERMINATE"`)),
		step(8, chromedp.Click(chromedp.CSS(`tr[data-query="CTAS_COUNTS"] button[data-act="PAUSE"]`))),
		step(9, until(`document.querySelector('tr[data-query="CTAS_COUNTS"] td[data-col="state"]').textContent === "PAUSED" && `+acts+` === "RESUME,TERMINATE"`)),
		step(10, chromedp.Click(chromedp.CSS(`tr[data-query="CTAS_COUNTS"] button[data-act="RESUME"]`))),
		step(11, until(`document.querySelector('tr[data-query="CTAS_COUNTS"] td[data-col="state"]').textContent === "RUNNING" && `+acts+` === "PAUSE,TERMINATE"`)),
		// A lone server owns every partition itself.
		step(12, until(`document.querySelector('tr[data-query="CTAS_COUNTS"] td[data-col="instances"]').textContent === "this instance"`)),
		step(13, chromedp.Click(chromedp.CSS(`a[href="#/query/CTAS_COUNTS"]`))),
		step(14, wait(`svg#topology`)),
		step(15, wait(`svg.lateness-plot polyline`)),
		// The store's size is what was committed; wait for a commit.
		step(16, until(`/[1-9][0-9]* windows/.test(document.querySelector('#stores').textContent)`)),
		// Rows into each operator: all 44 into the projection and the
		// aggregate, which drops the 4 late ones, so 40 updates on.
		step(17, until(`Array.from(document.querySelectorAll('#topology .node-operator .stat')).map(e => e.textContent.split(" · ")[1]).join() === "44 rows,44 rows,40 rows,40 rows"`)),
		// The store hangs off the aggregate by an edge.
		step(18, until(`document.querySelectorAll('#topology .store-edge').length === 1`)),
		// One task has read keys: one hot-key row.
		step(19, until(`document.querySelectorAll('#hotkeys tr.hot').length === 1 && !document.querySelector('#hotkeys-card').hidden`)),
		// The lateness axis in round seconds up to the latest record's 13 s.
		step(20, until(`Array.from(document.querySelectorAll('.lateness-plot .tick')).map(e => e.textContent).join() === "0,5 s,10 s,15 s,0%,50%,100%,time behind stream time →"`)),
		step(21, text(`#graph`, &graph)),
		step(22, text(`#lateness`, &plot)),
		step(23, shot("console-query.png")),
		step(24, chromedp.Navigate(f.base+"/#/editor")),
		step(25, wait(`#sql`)),
		step(26, chromedp.SendKeys(chromedp.CSS(`#sql`), "SELECT user, page, at FROM clicks EMIT CHANGES;")),
		step(27, chromedp.Click(chromedp.CSS(`#run`))),
		step(28, until(`document.querySelectorAll('#rows tr.row').length === 44`)),
		step(29, text(`#rows`, &rows)),
		step(30, shot("console-editor.png")),
	)
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	for _, want := range []string{"CTAS_COUNTS", "RUNNING"} {
		if !strings.Contains(listed, want) {
			t.Errorf("queries page lacks %q:\n%s", want, listed)
		}
	}
	// The operators EXPLAIN prints for the count, then the sink topic and
	// the store.
	for _, want := range []string{"source " + in, "aggregate COUNT(*) by USER", "project USER, N", "topic COUNTS", "store CTAS_COUNTS-Aggregate-"} {
		if !strings.Contains(graph, want) {
			t.Errorf("graph lacks %q:\n%s", want, graph)
		}
	}
	// The count dropped and the count later than the grace, each named for
	// what it counts; the axis in seconds.
	for _, want := range []string{"Dropped late by the query: 4", "44 records read", "the latest 13 s behind stream time",
		"4 later than the grace (1 s)", "grace 1 s", "99% within 13 s"} {
		if !strings.Contains(plot, want) {
			t.Errorf("lateness plot lacks %q:\n%s", want, plot)
		}
	}
	if !strings.Contains(rows, fmt.Sprint(base)) {
		t.Errorf("editor rows lack the first record's time %d:\n%s", base, rows)
	}
}
