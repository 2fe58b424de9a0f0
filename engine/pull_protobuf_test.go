package engine_test

import (
	"context"
	"testing"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/exec"
)

// TestPullProtobufTableAsWritten pulls a PROTOBUF table–table outer
// join: the side a row lacks reads as proto3's defaults (0, ""), as the
// table's topic holds it and as ksqlDB answers, not as NULLs.
func TestPullProtobufTableAsWritten(t *testing.T) {
	ctx := context.Background()
	e, err := engine.Open(ctx, engine.Config{Memory: true, Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	execute(t, e, `
		CREATE SOURCE TABLE l (id BIGINT PRIMARY KEY, name VARCHAR) WITH (KAFKA_TOPIC='l', KEY_FORMAT='KAFKA', VALUE_FORMAT='PROTOBUF_NOSR', PARTITIONS=1);
		CREATE SOURCE TABLE r (id BIGINT PRIMARY KEY, n BIGINT) WITH (KAFKA_TOPIC='r', KEY_FORMAT='KAFKA', VALUE_FORMAT='PROTOBUF_NOSR', PARTITIONS=1);
		CREATE TABLE j AS SELECT ROWKEY AS id, l.name AS name, r.n AS n FROM l FULL OUTER JOIN r ON l.id = r.id;`)
	send := func(topic string, key uint64, value []byte) {
		t.Helper()
		if _, err := e.Memory().Send(exec.Record{Topic: topic, Key: bigintKey(key), Value: value}); err != nil {
			t.Fatal(err)
		}
	}
	send("l", 1, []byte{0x0a, 3, 'o', 'n', 'e'}) // NAME = 1: "one"
	send("r", 2, []byte{0x08, 20})               // N = 1: 20
	res := execute(t, e, "SELECT * FROM j;")
	if got, want := rowsText(res[0].Rows), "ID NAME N\n1 one 0\n2  20"; got != want {
		t.Errorf("pull:\n got %q\nwant %q", got, want)
	}
}
