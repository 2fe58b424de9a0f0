package engine_test

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/internal/testkafka"
	"github.com/sluice-sql/sluice/registry"
)

// assertCase is one ASSERT statement and what it gives: the result's
// message and entity, or a failed assertion's text (failed) or another
// error's (err).
type assertCase struct {
	name   string
	sql    string
	msg    string
	entity engine.Entity
	failed string
	err    string
}

func runAsserts(t *testing.T, e *engine.Engine, cases []assertCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := e.Execute(context.Background(), tc.sql)
			switch {
			case tc.failed != "":
				if !errors.Is(err, engine.ErrAssertFailed) || err.Error() != tc.failed {
					t.Fatalf("%s: got error %v, want failed assertion %q", tc.sql, err, tc.failed)
				}
			case tc.err != "":
				if err == nil || err.Error() != tc.err || errors.Is(err, engine.ErrAssertFailed) {
					t.Fatalf("%s: got error %v, want %q", tc.sql, err, tc.err)
				}
			case err != nil:
				t.Fatalf("%s: %v", tc.sql, err)
			default:
				got := res[len(res)-1]
				if got.Message != tc.msg {
					t.Errorf("%s: message %q, want %q", tc.sql, got.Message, tc.msg)
				}
				if diff := cmp.Diff(tc.entity, got.Entity); diff != "" {
					t.Errorf("%s: entity (-want +got):\n%s", tc.sql, diff)
				}
			}
		})
	}
}

// TestAssertTopic checks ASSERT TOPIC against the broker: existence,
// partitions and replicas, NOT EXISTS, the default timeout property,
// and waiting for a topic created while the statement runs.
func TestAssertTopic(t *testing.T) {
	brokers := testkafka.Brokers(t)
	have, missing, late := testkafka.Name(t, "assert_have"), testkafka.Name(t, "assert_missing"), testkafka.Name(t, "assert_late")
	testkafka.CreateTopic(t, brokers, have, 3)
	e := openEngine(t, brokers, t.TempDir(), testkafka.Name(t, "svc"))
	defer closeEngine(t, e)

	q := func(s string) string { return "`" + s + "`" }
	runAsserts(t, e, []assertCase{
		{name: "exists", sql: "ASSERT TOPIC " + q(have),
			msg: "Topic " + have + " exists", entity: &engine.AssertTopicResult{Topic: have, Exists: true}},
		{name: "matching properties", sql: "ASSERT TOPIC " + q(have) + " WITH (PARTITIONS=3, REPLICAS=1) TIMEOUT 0 SECONDS",
			msg: "Topic " + have + " exists", entity: &engine.AssertTopicResult{Topic: have, Exists: true}},
		{name: "partition mismatch", sql: "ASSERT TOPIC " + q(have) + " WITH (PARTITIONS=2) TIMEOUT 0 SECONDS",
			failed: "Mismatched configuration for topic " + have + ": For config partitions, expected 2 got 3"},
		{name: "both mismatch", sql: "ASSERT TOPIC " + q(have) + " WITH (REPLICAS=3, PARTITIONS=1) TIMEOUT 0 SECONDS",
			failed: "Mismatched configuration for topic " + have + ": For config partitions, expected 1 got 3\n" +
				"Mismatched configuration for topic " + have + ": For config replicas, expected 3 got 1"},
		{name: "unknown property", sql: "ASSERT TOPIC " + q(have) + " WITH (RETENTION_MS=1)",
			failed: "Cannot assert unknown topic property: RETENTION_MS"},
		{name: "property not a number", sql: "ASSERT TOPIC " + q(have) + " WITH (PARTITIONS='3')",
			err: "invalid statement: line 1:" + strconv.Itoa(len("ASSERT TOPIC "+q(have)+" WITH (")+1) + ": PARTITIONS must be a whole number, got '3'"},
		{name: "missing", sql: "ASSERT TOPIC " + q(missing) + " TIMEOUT 200 MILLISECONDS",
			failed: "Topic " + missing + " does not exist"},
		{name: "default timeout from the property", sql: "SET 'ksql.assert.topic.default.timeout.ms'='0'; ASSERT TOPIC " + q(missing),
			failed: "Topic " + missing + " does not exist"},
		{name: "bad default timeout", sql: "SET 'ksql.assert.topic.default.timeout.ms'='soon'; ASSERT TOPIC " + q(missing),
			err: "invalid statement: 'ksql.assert.topic.default.timeout.ms' is \"soon\": want milliseconds"},
		{name: "not exists", sql: "UNSET 'ksql.assert.topic.default.timeout.ms'; ASSERT NOT EXISTS TOPIC " + q(missing) + " WITH (PARTITIONS=9)",
			msg: "Topic " + missing + " does not exist", entity: &engine.AssertTopicResult{Topic: missing, Exists: false}},
		{name: "not exists but does", sql: "ASSERT NOT EXISTS TOPIC " + q(have) + " TIMEOUT 0 SECONDS",
			failed: "Topic " + have + " exists"},
	})

	t.Run("waits for the topic", func(t *testing.T) {
		done := make(chan error, 1)
		go func() {
			_, err := e.Execute(context.Background(), "ASSERT TOPIC "+q(late)+" TIMEOUT 60 SECONDS")
			done <- err
		}()
		testkafka.CreateTopic(t, brokers, late, 1)
		if err := <-done; err != nil {
			t.Fatalf("ASSERT TOPIC of a topic created meanwhile: %v", err)
		}
	})
}

// TestAssertSchema checks ASSERT SCHEMA against the embedded Schema
// Registry by subject, by id and by both, and without a registry.
func TestAssertSchema(t *testing.T) {
	ctx := context.Background()
	brokers := testkafka.Brokers(t)
	reg, err := registry.Serve("127.0.0.1:0", filepath.Join(t.TempDir(), "schemas.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	cl, err := registry.NewClient(reg.URL())
	if err != nil {
		t.Fatal(err)
	}
	v1 := `{"type":"record","name":"Order","fields":[{"name":"id","type":"long"}]}`
	v2 := `{"type":"record","name":"Order","fields":[{"name":"id","type":"long"},{"name":"note","type":["null","string"],"default":null}]}`
	id1, err := cl.Register(ctx, "orders-value", v1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Register(ctx, "orders-value", v2); err != nil {
		t.Fatal(err)
	}
	other, err := cl.Register(ctx, "other-value", `"string"`)
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(brokers, t.TempDir(), testkafka.Name(t, "svc"), quiet)
	cfg.SchemaRegistry = cl
	e := openConfig(t, cfg)
	defer closeEngine(t, e)

	id, unknown := strconv.Itoa(id1), strconv.Itoa(id1+1000)
	ptr := func(n int) *int { return &n }
	runAsserts(t, e, []assertCase{
		{name: "subject", sql: "ASSERT SCHEMA SUBJECT 'orders-value'",
			msg: "Schema with subject name orders-value exists", entity: &engine.AssertSchemaResult{Subject: "orders-value", Exists: true}},
		{name: "id", sql: "ASSERT SCHEMA ID " + id,
			msg: "Schema with id " + id + " exists", entity: &engine.AssertSchemaResult{ID: ptr(id1), Exists: true}},
		{name: "subject and an earlier version's id", sql: "ASSERT SCHEMA SUBJECT 'orders-value' ID " + id,
			msg:    "Schema with subject name orders-value id " + id + " exists",
			entity: &engine.AssertSchemaResult{Subject: "orders-value", ID: ptr(id1), Exists: true}},
		{name: "subject and another subject's id", sql: "ASSERT SCHEMA SUBJECT 'orders-value' ID " + strconv.Itoa(other) + " TIMEOUT 0 SECONDS",
			failed: "Schema with subject name orders-value id " + strconv.Itoa(other) + " does not exist"},
		{name: "missing subject", sql: "ASSERT SCHEMA SUBJECT 'nope-value' TIMEOUT 200 MILLISECONDS",
			failed: "Schema with subject name nope-value does not exist"},
		{name: "missing id", sql: "ASSERT SCHEMA ID " + unknown + " TIMEOUT 0 SECONDS",
			failed: "Schema with id " + unknown + " does not exist"},
		{name: "not exists", sql: "ASSERT NOT EXISTS SCHEMA SUBJECT 'nope-value'",
			msg: "Schema with subject name nope-value does not exist", entity: &engine.AssertSchemaResult{Subject: "nope-value", Exists: false}},
		{name: "not exists but does", sql: "ASSERT NOT EXISTS SCHEMA ID " + id + " TIMEOUT 0 SECONDS",
			failed: "Schema with id " + id + " exists"},
		{name: "default timeout from the property", sql: "SET 'ksql.assert.schema.default.timeout.ms'='0'; ASSERT SCHEMA SUBJECT 'nope-value'",
			failed: "Schema with subject name nope-value does not exist"},
	})

	t.Run("no registry", func(t *testing.T) {
		e := openEngine(t, brokers, t.TempDir(), testkafka.Name(t, "svc"))
		defer closeEngine(t, e)
		runAsserts(t, e, []assertCase{{name: "refused", sql: "ASSERT SCHEMA ID 1",
			err: "invalid statement: ASSERT SCHEMA needs a Schema Registry: give --schema-registry URL (the embedded broker serves one)"}})
	})
}
