package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/engine"
)

// ALTER … ADD COLUMN appends value columns to a source created with
// columns; read-only sources, results of queries and taken names are
// refused.
func TestAlterSource(t *testing.T) {
	ctx := context.Background()
	e, err := engine.Open(ctx, engine.Config{Memory: true, Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	execute(t, e, `
		CREATE STREAM s (k INT KEY, v STRING) WITH (KAFKA_TOPIC='s', VALUE_FORMAT='JSON');
		CREATE SOURCE STREAM ro (k INT KEY, v STRING) WITH (KAFKA_TOPIC='ro', VALUE_FORMAT='JSON');
		CREATE STREAM res AS SELECT * FROM s;`)
	tests := []struct {
		sql, err, schema string
	}{
		{sql: "ALTER STREAM s ADD COLUMN a INT, ADD b ARRAY<STRING>;", schema: "K INTEGER KEY, V STRING, A INTEGER, B ARRAY<STRING>"},
		{sql: "ALTER STREAM s ADD COLUMN c DOUBLE;", schema: "K INTEGER KEY, V STRING, A INTEGER, B ARRAY<STRING>, C DOUBLE"},
		{sql: "ALTER STREAM s ADD COLUMN v INT;", err: "Cannot add column `V` to schema. A column with the same name already exists."},
		{sql: "ALTER STREAM s ADD COLUMN rowtime INT;", err: "'ROWTIME' is a reserved column name"},
		{sql: "ALTER TABLE s ADD COLUMN x INT;", err: "Incompatible data source type is STREAM, but statement was ALTER TABLE"},
		{sql: "ALTER STREAM ro ADD COLUMN x INT;", err: "Cannot alter stream 'RO': ALTER operations are not supported on source streams."},
		{sql: "ALTER STREAM res ADD COLUMN x INT;", err: "ALTER command is not supported for CREATE ... AS statements."},
		{sql: "ALTER STREAM nope ADD COLUMN x INT;", err: "does not exist"},
	}
	for _, tc := range tests {
		t.Run(tc.sql, func(t *testing.T) {
			_, err := e.Execute(ctx, tc.sql)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			src, err := e.Catalog().Lookup("S")
			if err != nil {
				t.Fatal(err)
			}
			if got := src.Schema.String(); got != tc.schema {
				t.Errorf("schema = %s, want %s", got, tc.schema)
			}
		})
	}
}
