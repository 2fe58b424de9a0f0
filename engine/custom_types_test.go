package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/internal/testkafka"
)

// CREATE TYPE, DROP TYPE and SHOW TYPES answer as ksqlDB does; a custom
// type stands for its definition in columns, CAST and other types, and
// a source keeps the types it was planned with after DROP TYPE.
func TestCustomTypes(t *testing.T) {
	ctx := context.Background()
	e, err := engine.Open(ctx, engine.Config{Memory: true, Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	const addr = "STRUCT<`NUMBER` INTEGER, `STREET` STRING, `CITY` STRING>"
	steps := []struct {
		sql, want string // want is the message, the SHOW text, or the error
		err       bool
		planOnly  bool   // success is the point; the text is EXPLAIN's own test
		schema    string // of stream S after the step, when set
	}{
		{sql: "SHOW TYPES;", want: ""},
		{sql: "CREATE TYPE address AS STRUCT<number INTEGER, street VARCHAR, city VARCHAR>;",
			want: "Registered custom type with name 'ADDRESS' and SQL type " + addr},
		{sql: "CREATE TYPE ADDRESS AS INT;", err: true,
			want: "line 1:1: Cannot register custom type 'ADDRESS' since it is already registered with type: " + addr},
		{sql: "CREATE TYPE IF NOT EXISTS Address AS INT;", want: "ADDRESS is already registered with type " + addr},
		{sql: "CREATE TYPE person AS STRUCT<name VARCHAR, home ADDRESS>;",
			want: "Registered custom type with name 'PERSON' and SQL type STRUCT<`NAME` STRING, `HOME` " + addr + ">"},
		{sql: `CREATE TYPE "ids" AS ARRAY<BIGINT>;`, want: "Registered custom type with name 'ids' and SQL type ARRAY<BIGINT>"},
		{sql: "LIST TYPES;", want: "ADDRESS\t" + addr + "\nPERSON\tSTRUCT<`NAME` STRING, `HOME` " + addr + ">\nids\tARRAY<BIGINT>\n"},
		{sql: "CREATE STREAM s (k INT KEY, who person, ids `ids`) WITH (KAFKA_TOPIC='s', VALUE_FORMAT='JSON');",
			want: "Stream created", schema: "K INTEGER KEY, WHO STRUCT<`NAME` STRING, `HOME` " + addr + ">, IDS ARRAY<BIGINT>"},
		{sql: "CREATE STREAM bad (k INT KEY, x ids) WITH (KAFKA_TOPIC='bad', VALUE_FORMAT='JSON');", err: true,
			want: "line 1:33: type error: unknown type IDS"},
		{sql: "DROP TYPE person;", want: "Dropped type 'PERSON'"},
		{sql: "DROP TYPE person;", err: true, want: "line 1:1: Type PERSON does not exist."},
		{sql: "DROP TYPE IF EXISTS person;", want: "Type 'PERSON' does not exist"},
		// S was planned with PERSON: ALTER re-plans it with the type it
		// got then, and the new column may use a type that exists now.
		{sql: "ALTER STREAM s ADD COLUMN home address;", want: "Stream altered.",
			schema: "K INTEGER KEY, WHO STRUCT<`NAME` STRING, `HOME` " + addr + ">, IDS ARRAY<BIGINT>, HOME " + addr},
		{sql: "EXPLAIN SELECT CAST(home AS address) FROM s EMIT CHANGES;", planOnly: true},
		{sql: "SELECT CAST(k AS person) FROM s EMIT CHANGES;", err: true, want: "line 1:18: type error: unknown type PERSON"},
		{sql: "SHOW TYPES;", want: "ADDRESS\t" + addr + "\nids\tARRAY<BIGINT>\n"},
	}
	for _, s := range steps {
		res, err := e.Execute(ctx, s.sql)
		got := ""
		switch {
		case err != nil:
			got = err.Error()
		case len(res) != 1:
			t.Fatalf("%s: %d results", s.sql, len(res))
		case res[0].Message != "":
			got = res[0].Message
		default:
			got = typeLines(res[0])
		}
		if s.planOnly && err == nil {
			continue
		}
		if (err != nil) != s.err || got != s.want {
			t.Errorf("%s\ngot %q (error %t), want %q", s.sql, got, err != nil, s.want)
		}
		if s.schema != "" {
			src, err := e.Catalog().Lookup("S")
			if err != nil {
				t.Fatal(err)
			}
			if got := src.Schema.String(); got != s.schema {
				t.Errorf("%s\nschema %s, want %s", s.sql, got, s.schema)
			}
		}
	}
}

// Custom types are commands: kept in the command topic, in order, so a
// reopened engine has the same types, and sources planned with a type
// since dropped keep it. A query casting to a custom type runs.
func TestCustomTypesThroughCommandTopic(t *testing.T) {
	brokers := testkafka.Brokers(t)
	in, out, svc := testkafka.Name(t, "people"), testkafka.Name(t, "homes"), testkafka.Name(t, "svc")
	d := t.TempDir()
	e := openShared(t, brokers, d, svc)
	execute(t, e, fmt.Sprintf(`
		CREATE TYPE address AS STRUCT<street VARCHAR, city VARCHAR>;
		CREATE TYPE old AS STRUCT<name VARCHAR, home ADDRESS>;
		CREATE STREAM %[1]s (id VARCHAR KEY, who old) WITH (KAFKA_TOPIC='%[1]s', VALUE_FORMAT='JSON', PARTITIONS=1);
		DROP TYPE old;
		CREATE STREAM %[2]s AS SELECT id, CAST(who->home AS address) AS home FROM %[1]s;`, in, out))
	want := "ADDRESS\tSTRUCT<`STREET` STRING, `CITY` STRING>\n"
	if got := typeLines(execute(t, e, "SHOW TYPES;")[0]); got != want {
		t.Errorf("SHOW TYPES = %q, want %q", got, want)
	}
	testkafka.Produce(t, brokers, rec(in, "p1", `{"who":{"name":"Ann","home":{"street":"High St","city":"Oxford"}}}`, 1000))
	q := e.Queries()[0]
	testkafka.Await(t, 30*time.Second, "1 result", func() bool { return q.Metrics.RecordsOut.Load() >= 1 })
	srcBefore, err := e.Catalog().Lookup(in)
	if err != nil {
		t.Fatal(err)
	}
	closeEngine(t, e)
	wantOut := []outRecord{{"p1", `{"HOME":{"STREET":"High St","CITY":"Oxford"}}`, 1000}}
	if diff := cmp.Diff(wantOut, outputs(t, brokers, out)); diff != "" {
		t.Errorf("outputs (-want +got):\n%s", diff)
	}

	e = openShared(t, brokers, d, svc)
	defer closeEngine(t, e)
	if got := typeLines(execute(t, e, "SHOW TYPES;")[0]); got != want {
		t.Errorf("reopened: SHOW TYPES = %q, want %q", got, want)
	}
	src, err := e.Catalog().Lookup(in)
	if err != nil {
		t.Fatal(err)
	}
	if src.Schema.String() != srcBefore.Schema.String() {
		t.Errorf("reopened: schema %s, want %s", src.Schema, srcBefore.Schema)
	}
	if got := len(commandRecords(t, brokers, svc)); got != 5 {
		t.Errorf("command topic has %d records, want 5", got)
	}
}
