package engine_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/parser"
)

// TestStatementKinds checks what the registry of statement kinds says of
// one statement of each kind the parser knows: whether it is a command
// (stored in the command topic) and the command id ksqlDB's REST API
// gives its status.
func TestStatementKinds(t *testing.T) {
	type kind struct {
		Command bool
		ID      string
		Silent  bool
	}
	cases := []struct {
		sql  string
		want kind
	}{
		{"CREATE STREAM s (id INT) WITH (kafka_topic='s', value_format='JSON')", kind{true, "stream/`S`/create", false}},
		{"CREATE TABLE t AS SELECT id, COUNT(*) FROM s GROUP BY id", kind{true, "table/`T`/create", false}},
		{"INSERT INTO s SELECT * FROM r", kind{true, "stream/`S`/create", false}},
		{"TERMINATE CSAS_X", kind{true, "terminate/CSAS_X/execute", false}},
		{"TERMINATE ALL", kind{true, "terminate/ALL/execute", false}},
		{"PAUSE CSAS_X", kind{true, engine.GenericCommandID, false}},
		{"RESUME ALL", kind{true, engine.GenericCommandID, false}},
		{"DROP TABLE t DELETE TOPIC", kind{true, "table/`T`/drop", false}},
		{"ALTER STREAM s ADD COLUMN x INT", kind{true, engine.GenericCommandID, false}},
		{"CREATE TYPE addr AS STRUCT<street STRING>", kind{true, "type/ADDR/create", false}},
		{"DROP TYPE addr", kind{true, "type/ADDR/drop", false}},
		{"INSERT INTO s (id) VALUES (1)", kind{false, "", true}},
		{"SET 'auto.offset.reset'='earliest'", kind{false, engine.GenericCommandID, false}},
		{"UNSET 'auto.offset.reset'", kind{false, engine.GenericCommandID, false}},
		{"DEFINE x = 'y'", kind{false, engine.GenericCommandID, false}},
		{"UNDEFINE x", kind{false, engine.GenericCommandID, false}},
		{"SELECT * FROM s EMIT CHANGES", kind{false, engine.GenericCommandID, false}},
		{"SHOW STREAMS", kind{false, engine.GenericCommandID, false}},
		{"DESCRIBE s", kind{false, engine.GenericCommandID, false}},
		{"EXPLAIN SELECT * FROM s EMIT CHANGES", kind{false, engine.GenericCommandID, false}},
		{"ASSERT TOPIC s", kind{false, engine.GenericCommandID, false}},
		{"PRINT s", kind{false, engine.GenericCommandID, false}},
		{"RUN SCRIPT '/tmp/x.sql'", kind{false, engine.GenericCommandID, false}},
	}
	for _, c := range cases {
		p, err := parser.ParseOne(c.sql)
		if err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		id, silent := engine.CommandID(p)
		got := kind{engine.IsCommand(p), id, silent}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.sql, diff)
		}
	}
}
