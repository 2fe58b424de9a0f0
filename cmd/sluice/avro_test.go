package main

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-sql/sluice/registry"
)

// TestRunAvroEmbedded runs an AVRO pipeline with `sluice run` and nothing
// else: the embedded broker, and the Schema Registry Sluice serves beside
// it. The rows come back exact, and the registry serves the sink's
// ksqlDB-named schema to any client.
func TestRunAvroEmbedded(t *testing.T) {
	p := startSluice(t, "run", "cmd/sluice/testdata/avro.sql", "--data-dir", t.TempDir(), "--schema-registry-listen", "127.0.0.1:0")
	const header = "| ID         | N2         | PRICE      | TAGS       |"
	p.waitFor(t, 60*time.Second, "2 rows", func(lines []string) bool { return len(tableRows(lines, header)) >= 2 })
	rows := tableRows(p.all, header)
	got := make([]string, 0, len(rows))
	for _, r := range rows {
		got = append(got, strings.Join(r, " "))
	}
	slices.Sort(got)
	want := []string{`a 2 2.50 [x y]`, `b 4 null [z]`}
	if !slices.Equal(got, want) {
		t.Errorf("rows %q, want %q\nstdout:\n%s", got, want, strings.Join(p.all, "\n"))
	}
	m := regexp.MustCompile(`embedded schema registry on (http://127\.0\.0\.1:\d+)`).FindStringSubmatch(p.stderr.String())
	if m == nil {
		t.Fatalf("no line naming the embedded schema registry:\n%s", p.stderr.String())
	}
	cl, err := registry.NewClient(m[1])
	if err != nil {
		t.Fatal(err)
	}
	schema, _, found, err := cl.Latest(context.Background(), "AVRO_DOUBLED-value")
	if err != nil || !found || !strings.Contains(schema, `"name":"KsqlDataSourceSchema","namespace":"io.confluent.ksql.avro_schemas"`) {
		t.Errorf("sink schema %s (found %v, %v)", schema, found, err)
	}
	p.stop(t, 30*time.Second)
}
