package engine_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/parser"
)

// TestStatementKinds checks what the registry of statement kinds says of
// one statement of each kind the parser knows: whether it is a command
// (stored in the command topic), the command id ksqlDB's REST API gives
// its status, and how the /ksql endpoint treats it.
func TestStatementKinds(t *testing.T) {
	type kind struct {
		Command bool
		ID      string
		Silent  bool
		KSQL    engine.KSQLUse
	}
	cases := []struct {
		sql  string
		want kind
	}{
		{"CREATE STREAM s (id INT) WITH (kafka_topic='s', value_format='JSON')", kind{true, "stream/`S`/create", false, engine.KSQLRun}},
		{"CREATE TABLE t AS SELECT id, COUNT(*) FROM s GROUP BY id", kind{true, "table/`T`/create", false, engine.KSQLRun}},
		{"INSERT INTO s SELECT * FROM r", kind{true, "stream/`S`/create", false, engine.KSQLRun}},
		{"TERMINATE CSAS_X", kind{true, "terminate/CSAS_X/execute", false, engine.KSQLRun}},
		{"TERMINATE ALL", kind{true, "terminate/ALL/execute", false, engine.KSQLRun}},
		{"PAUSE CSAS_X", kind{true, engine.GenericCommandID, false, engine.KSQLRun}},
		{"RESUME ALL", kind{true, engine.GenericCommandID, false, engine.KSQLRun}},
		{"DROP TABLE t DELETE TOPIC", kind{true, "table/`T`/drop", false, engine.KSQLRun}},
		{"ALTER STREAM s ADD COLUMN x INT", kind{true, engine.GenericCommandID, false, engine.KSQLRun}},
		{"CREATE TYPE addr AS STRUCT<street STRING>", kind{true, "type/ADDR/create", false, engine.KSQLRun}},
		{"DROP TYPE addr", kind{true, "type/ADDR/drop", false, engine.KSQLRun}},
		{"CREATE FUNCTION f(x BIGINT) RETURNS BIGINT LANGUAGE WASM WITH (MODULE='AA==', EXPORT='f')", kind{true, "function/F/create", false, engine.KSQLRun}},
		{"DROP FUNCTION f", kind{true, "function/F/drop", false, engine.KSQLRun}},
		{"INSERT INTO s (id) VALUES (1)", kind{false, "", true, engine.KSQLSilent}},
		{"SET 'auto.offset.reset'='earliest'", kind{false, engine.GenericCommandID, false, engine.KSQLProperty}},
		{"UNSET 'auto.offset.reset'", kind{false, engine.GenericCommandID, false, engine.KSQLProperty}},
		{"DEFINE x = 'y'", kind{false, engine.GenericCommandID, false, engine.KSQLRun}},
		{"UNDEFINE x", kind{false, engine.GenericCommandID, false, engine.KSQLRun}},
		{"SELECT * FROM s EMIT CHANGES", kind{false, engine.GenericCommandID, false, engine.KSQLQuery}},
		{"SHOW STREAMS", kind{false, engine.GenericCommandID, false, engine.KSQLRun}},
		{"DESCRIBE s", kind{false, engine.GenericCommandID, false, engine.KSQLRun}},
		{"EXPLAIN SELECT * FROM s EMIT CHANGES", kind{false, engine.GenericCommandID, false, engine.KSQLRun}},
		{"ASSERT TOPIC s", kind{false, engine.GenericCommandID, false, engine.KSQLRun}},
		{"PRINT s", kind{false, engine.GenericCommandID, false, engine.KSQLQuery}},
		{"RUN SCRIPT '/tmp/x.sql'", kind{false, engine.GenericCommandID, false, engine.KSQLRun}},
		// Connect keeps connectors: their statements never enter the
		// command topic.
		{"CREATE SOURCE CONNECTOR c WITH ('connector.class'='x')", kind{false, engine.GenericCommandID, false, engine.KSQLRun}},
		{"DROP CONNECTOR c", kind{false, engine.GenericCommandID, false, engine.KSQLRun}},
		{"SHOW SINK CONNECTORS", kind{false, engine.GenericCommandID, false, engine.KSQLRun}},
		{"DESCRIBE CONNECTOR c", kind{false, engine.GenericCommandID, false, engine.KSQLRun}},
		{"SHOW CONNECTOR PLUGINS", kind{false, engine.GenericCommandID, false, engine.KSQLRun}},
	}
	for _, c := range cases {
		p, err := parser.ParseOne(c.sql)
		if err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		id, silent := engine.CommandID(p)
		got := kind{engine.IsCommand(p), id, silent, engine.KSQLUseOf(p)}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.sql, diff)
		}
	}
}

// TestSetRequestProperty: SET and UNSET in a /ksql request change the
// request's properties (UNSET under any of the property's names), and SET
// refuses what a session's SET refuses.
func TestSetRequestProperty(t *testing.T) {
	props := map[string]string{"auto.offset.reset": "latest"}
	for _, sql := range []string{"SET 'commit.interval.ms'='250'", "UNSET 'auto.offset.reset'"} {
		p, err := parser.ParseOne(sql)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		if err := engine.SetRequestProperty(p, props); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	if diff := cmp.Diff(map[string]string{"commit.interval.ms": "250"}, props); diff != "" {
		t.Errorf("properties (-want +got):\n%s", diff)
	}
	for _, sql := range []string{"SET 'commit.interval.ms'='abc'", "SHOW STREAMS"} {
		p, err := parser.ParseOne(sql)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		if err := engine.SetRequestProperty(p, props); err == nil {
			t.Errorf("%s: no error", sql)
		}
	}
	if diff := cmp.Diff(map[string]string{"commit.interval.ms": "250"}, props); diff != "" {
		t.Errorf("properties after refusals (-want +got):\n%s", diff)
	}
}
