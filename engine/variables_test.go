package engine_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/engine"
)

// TestVariables: DEFINE sets a variable that later statements use as
// ${name} anywhere (in a string, for a name), in the same call or a later
// one; UNDEFINE removes it, and an undefined ${name} is left as written.
func TestVariables(t *testing.T) {
	ctx := context.Background()
	e, err := engine.Open(ctx, engine.Config{Memory: true, Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	res, err := e.Execute(ctx, `
		DEFINE topic = 'people_topic';
		define Name = 'PEOPLE';
		CREATE STREAM ${name} (id INT KEY, v STRING) WITH (kafka_topic='${TOPIC}', value_format='JSON', partitions=1);`)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, r := range res {
		msgs = append(msgs, r.Message)
	}
	if got, want := strings.Join(msgs, " | "), "Defined variable TOPIC. | Defined variable NAME. | Stream created"; got != want {
		t.Errorf("messages %q, want %q", got, want)
	}
	src, err := e.Catalog().Lookup("PEOPLE")
	if err != nil {
		t.Fatal(err)
	}
	if src.Topic != "people_topic" {
		t.Errorf("topic %q, want people_topic", src.Topic)
	}
	// A later call sees the variables; after UNDEFINE the text stays.
	if _, err := e.Execute(ctx, "CREATE STREAM ${name}_2 (id INT KEY, v STRING) WITH (kafka_topic='${topic}_2', value_format='JSON', partitions=1);"); err != nil {
		t.Fatal(err)
	}
	if s, err := e.Catalog().Lookup("PEOPLE_2"); err != nil || s.Topic != "people_topic_2" {
		t.Fatalf("PEOPLE_2: %v, %+v", err, s)
	}
	if _, err := e.Execute(ctx, "UNDEFINE topic;"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Execute(ctx, "CREATE STREAM p3 (id INT KEY) WITH (kafka_topic='${topic}', value_format='JSON', partitions=1);"); err != nil {
		t.Fatal(err)
	}
	if s, _ := e.Catalog().Lookup("P3"); s == nil || s.Topic != "${topic}" {
		t.Errorf("P3 topic %+v, want the text ${topic} left as written", s)
	}
}

// TestFunctionStatements: SHOW FUNCTIONS lists every function with its
// type and category; DESCRIBE FUNCTION describes one, and names an
// unknown one in ksqlDB's words.
func TestFunctionStatements(t *testing.T) {
	ctx := context.Background()
	e, err := engine.Open(ctx, engine.Config{Memory: true, Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	res, err := e.Execute(ctx, "SHOW FUNCTIONS; DESCRIBE FUNCTION stddev_samp;")
	if err != nil {
		t.Fatal(err)
	}
	list, ok := res[0].Entity.(*engine.FunctionList)
	if !ok || len(list.Functions) < 100 {
		t.Fatalf("SHOW FUNCTIONS entity %T with %d functions", res[0].Entity, len(list.Functions))
	}
	listed := map[string]string{}
	for _, f := range list.Functions {
		listed[f.Name] = f.Type + " " + f.Category
	}
	for name, want := range map[string]string{"SUBSTRING": "SCALAR STRING", "COUNT": "AGGREGATE AGGREGATE"} {
		if listed[name] != want {
			t.Errorf("SHOW FUNCTIONS lists %s as %q, want %q", name, listed[name], want)
		}
	}
	d, ok := res[1].Entity.(*engine.FunctionDescription)
	if !ok {
		t.Fatalf("DESCRIBE FUNCTION entity %T", res[1].Entity)
	}
	got := []string{d.Name, d.Type, d.Category, d.Description}
	want := []string{"STDDEV_SAMP", "AGGREGATE", "AGGREGATE", "The sample variance of the non-NULL values (ksqlDB's STDDEV_SAMP; use STDDEV_SAMPLE for the deviation)."}
	if !slices.Equal(got, want) {
		t.Errorf("DESCRIBE FUNCTION: %q, want %q", got, want)
	}
	if _, err := e.Execute(ctx, "DESCRIBE FUNCTION nope;"); err == nil || !strings.Contains(err.Error(), "Can't find any functions with the name 'NOPE'") {
		t.Errorf("DESCRIBE FUNCTION nope: %v", err)
	}
}
