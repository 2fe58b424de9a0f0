package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/exec"
)

// TestRepartitionDuplicatesCountOnce replays a repartition record, as an
// upstream task does after an at-least-once crash: the aggregate skips
// it, because its upstream offset was applied already.
func TestRepartitionDuplicatesCountOnce(t *testing.T) {
	ctx := context.Background()
	e, err := engine.Open(ctx, engine.Config{Memory: true, Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	execute(t, e, `
		CREATE STREAM clicks (user_id VARCHAR KEY, page VARCHAR) WITH (KAFKA_TOPIC='clicks', VALUE_FORMAT='JSON');
		CREATE TABLE per_page AS SELECT page, COUNT(*) AS views FROM clicks GROUP BY page;`)
	mem := e.Memory()
	send := func(rec exec.Record) []string {
		t.Helper()
		out, err := mem.Send(rec)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range out {
			if r.Topic == "PER_PAGE" {
				got = append(got, string(r.Key)+"="+string(r.Value))
			}
		}
		return got
	}
	click := exec.Record{Topic: "clicks", Key: []byte("u1"), Value: []byte(`{"page":"home"}`), Timestamp: 1}
	if got := send(click); strings.Join(got, ";") != `home={"VIEWS":1}` {
		t.Fatalf("first click: %v", got)
	}
	var repart *exec.Record
	for _, r := range mem.Produced() {
		if strings.HasSuffix(r.Topic, "-repartition") {
			repart = r
		}
	}
	if repart == nil || len(repart.Headers) != 1 {
		t.Fatalf("repartition record with an upstream header: %+v", repart)
	}
	if got := send(*repart); len(got) != 0 {
		t.Errorf("a replayed repartition record changed the table: %v", got)
	}
	if got := send(click); strings.Join(got, ";") != `home={"VIEWS":2}` {
		t.Errorf("second click: %v", got)
	}
}
