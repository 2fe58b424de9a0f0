package planner_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/planner"
)

// WITH (IDLE_TIMEOUT=…) sets a query's idle timeout, the session
// property sluice.idle.timeout is the default, and EXPLAIN shows it.
func TestIdleTimeout(t *testing.T) {
	cat := planner.NewCatalog()
	if out := ddl(cat, `CREATE STREAM bookings (id VARCHAR KEY, hotel VARCHAR, price DOUBLE) WITH (KAFKA_TOPIC='bookings', VALUE_FORMAT='JSON');`); strings.Contains(out, "error") {
		t.Fatal(out)
	}
	const windowed = ` AS SELECT hotel, COUNT(*) FROM bookings WINDOW TUMBLING 1m GROUP BY hotel EMIT FINAL;`
	line := func(d string) string {
		return "idle timeout " + d + ": a partition without records for that long moves its stream time on with the wall clock\n"
	}
	cases := []struct {
		sql, property, want string
	}{
		{`CREATE TABLE a WITH (IDLE_TIMEOUT='30s')` + windowed, "", line("30s")},
		{`CREATE TABLE b WITH (IDLE_TIMEOUT='2 MINUTES')` + windowed, "5s", line("2m0s")},
		{`CREATE TABLE c` + windowed, "500ms", line("500ms")},
		{`CREATE TABLE d` + windowed, "", ""},
		{`SELECT hotel, COUNT(*) FROM bookings WINDOW TUMBLING 1m GROUP BY hotel EMIT FINAL;`, "10s", line("10s")},
	}
	for _, c := range cases {
		q, err := planQuery(t, cat, c.sql, planner.Options{ServiceID: "test", IdleTimeout: c.property})
		if err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		got := q.Topology.Explain()
		if c.want == "" && strings.Contains(got, "idle timeout") || !strings.HasSuffix(got, c.want) {
			t.Errorf("%s with %s=%q:\n%s\nwant it to end with %q", c.sql, planner.IdleTimeoutProperty, c.property, got, c.want)
		}
	}
	bad := []struct{ sql, property, want string }{
		{`CREATE TABLE e WITH (IDLE_TIMEOUT='soon')` + windowed, "", "IDLE_TIMEOUT must be a duration"},
		{`CREATE TABLE f` + windowed, "0s", "'sluice.idle.timeout' must be a duration"},
	}
	for _, c := range bad {
		_, err := planQuery(t, cat, c.sql, planner.Options{IdleTimeout: c.property})
		if !errors.Is(err, planner.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s with %q: error %v, want one containing %q", c.sql, c.property, err, c.want)
		}
	}
}
