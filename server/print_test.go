package server_test

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-sql/sluice/internal/testkafka"
)

// printRequest starts PRINT on /query and returns the response, its body
// still streaming.
func (f *fixture) printRequest(t *testing.T, sql string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.base+"/query", strings.NewReader(ksqlBody(sql, nil)))
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("alice", "secret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST /query: %v", err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func readLines(t *testing.T, br *bufio.Reader, n int) []string {
	t.Helper()
	var out []string
	for range n {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("after %q: %v", out, err)
		}
		out = append(out, line)
	}
	return out
}

// TestPrint runs PRINT through /query: ksqlDB's lines, streamed as
// records arrive, INTERVAL and LIMIT applied, ksqlDB's error for a
// missing topic, and a PRINT without LIMIT ended by Shutdown.
func TestPrint(t *testing.T) {
	brokers := testkafka.Brokers(t)
	f := startWith(t, brokers, nil)
	topic := testkafka.Name(t, "printed")
	testkafka.CreateTopic(t, brokers, topic, 1)
	at := time.Date(2026, 5, 24, 12, 0, 0, 0, time.UTC)
	testkafka.Produce(t, brokers,
		&kgo.Record{Topic: topic, Key: []byte("a"), Value: []byte(`{"n":1}`), Timestamp: at},
		&kgo.Record{Topic: topic, Value: []byte(`{"n":2, "s":"x, value: y"}`), Timestamp: at.Add(1500 * time.Millisecond)},
		&kgo.Record{Topic: topic, Key: []byte("c"), Timestamp: at.Add(time.Hour)})

	t.Run("streams", func(t *testing.T) {
		resp := f.printRequest(t, "PRINT '"+topic+"' FROM BEGINNING LIMIT 4;")
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" {
			t.Fatalf("status %d, Content-Type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		br := bufio.NewReader(resp.Body)
		want := []string{
			"rowtime: 2026/05/24 12:00:00.000 Z, key: a, value: {\"n\":1}, partition: 0\n",
			"rowtime: 2026/05/24 12:00:01.500 Z, key: <null>, value: {\"n\":2, \"s\":\"x, value: y\"}, partition: 0\n",
			"rowtime: 2026/05/24 13:00:00.000 Z, key: c, value: <null>, partition: 0\n",
		}
		if got := readLines(t, br, 3); strings.Join(got, "") != strings.Join(want, "") {
			t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, ""), strings.Join(want, ""))
		}
		// The fourth record arrives while the response is open.
		testkafka.Produce(t, brokers, &kgo.Record{Topic: topic, Key: []byte("d"), Value: []byte("4"), Timestamp: at.Add(2 * time.Hour)})
		rest, err := readAll(br)
		if err != nil || rest != "rowtime: 2026/05/24 14:00:00.000 Z, key: d, value: 4, partition: 0\n" {
			t.Fatalf("rest %q, %v", rest, err)
		}
	})
	t.Run("interval", func(t *testing.T) {
		resp := f.printRequest(t, "PRINT '"+topic+"' FROM BEGINNING INTERVAL 2 LIMIT 2;")
		got, err := readAll(bufio.NewReader(resp.Body))
		want := "rowtime: 2026/05/24 12:00:00.000 Z, key: a, value: {\"n\":1}, partition: 0\n" +
			"rowtime: 2026/05/24 13:00:00.000 Z, key: c, value: <null>, partition: 0\n"
		if err != nil || got != want {
			t.Fatalf("got %q, %v\nwant %q", got, err, want)
		}
	})
	t.Run("missing topic", func(t *testing.T) {
		resp := f.printRequest(t, "PRINT nope;")
		got, err := readAll(bufio.NewReader(resp.Body))
		want := `{"@type":"generic_error","error_code":40000,"message":"Could not find topic 'nope', or the KSQL user does not have permissions to list the topic. Topic names are case-sensitive."}` + "\n"
		if err != nil || resp.StatusCode != 400 || got != want {
			t.Fatalf("status %d, body %q, %v\nwant %q", resp.StatusCode, got, err, want)
		}
	})
	t.Run("until shutdown", func(t *testing.T) {
		resp := f.printRequest(t, "PRINT '"+topic+"' FROM BEGINNING;")
		br := bufio.NewReader(resp.Body)
		readLines(t, br, 4)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := f.srv.Shutdown(ctx); err != nil {
			t.Fatalf("shutdown: %v", err)
		}
		if rest, err := readAll(br); err != nil || rest != "" {
			t.Fatalf("after shutdown: %q, %v", rest, err)
		}
	})
}

func readAll(br *bufio.Reader) (string, error) {
	var b strings.Builder
	_, err := br.WriteTo(&b)
	return b.String(), err
}
