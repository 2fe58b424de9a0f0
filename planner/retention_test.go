package planner_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner"
)

// The session property sluice.table.retention is the default RETENTION
// of persistent non-windowed aggregations; WITH overrides it; windowed
// and transient queries ignore it.
func TestTableRetentionProperty(t *testing.T) {
	cat := planner.NewCatalog()
	if out := ddl(cat, `CREATE STREAM bookings (id VARCHAR KEY, hotel VARCHAR, price DOUBLE) WITH (KAFKA_TOPIC='bookings', VALUE_FORMAT='JSON');`); strings.Contains(out, "error") {
		t.Fatal(out)
	}
	cases := []struct {
		sql, property, want string
	}{
		{`CREATE TABLE a AS SELECT hotel, COUNT(*) FROM bookings GROUP BY hotel;`, "1h", "aggregate COUNT(*) by HOTEL retention 1h0m0s ["},
		{`CREATE TABLE b WITH (RETENTION='10m') AS SELECT hotel, COUNT(*) FROM bookings GROUP BY hotel;`, "1h", "aggregate COUNT(*) by HOTEL retention 10m0s ["},
		{`CREATE TABLE c AS SELECT hotel, COUNT(*) FROM bookings GROUP BY hotel;`, "", "aggregate COUNT(*) by HOTEL ["},
		{`CREATE TABLE d AS SELECT hotel, COUNT(*) FROM bookings WINDOW TUMBLING 1m GRACE 0s GROUP BY hotel;`, "1h", "retention 1m0s emit changes ["},
		{`SELECT hotel, COUNT(*) FROM bookings GROUP BY hotel EMIT CHANGES;`, "1h", "aggregate COUNT(*) by HOTEL ["},
	}
	for _, c := range cases {
		q, err := planQuery(t, cat, c.sql, planner.Options{ServiceID: "test", TableRetention: c.property})
		if err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		if got := q.Topology.Explain(); !strings.Contains(got, c.want) {
			t.Errorf("%s with %s=%q:\n%s\nwant a line containing %q", c.sql, planner.TableRetentionProperty, c.property, got, c.want)
		}
	}
	_, err := planQuery(t, cat, `CREATE TABLE e AS SELECT hotel, COUNT(*) FROM bookings GROUP BY hotel;`, planner.Options{TableRetention: "soon"})
	if !errors.Is(err, planner.ErrInvalid) || !strings.Contains(err.Error(), "'sluice.table.retention' must be a duration") {
		t.Errorf("bad property value: %v", err)
	}
}

func planQuery(t *testing.T, cat *planner.Catalog, sql string, opts planner.Options) (*planner.Query, error) {
	t.Helper()
	st, err := parser.ParseOne(sql)
	if err != nil {
		t.Fatal(err)
	}
	switch s := st.(type) {
	case *parser.Select:
		return planner.PlanQuery(cat, s, nil, "T", opts)
	case *parser.CreateSource:
		props, err := planner.PropsOf(s.With)
		if err != nil {
			t.Fatal(err)
		}
		return planner.PlanQuery(cat, s.Query, &planner.Target{Name: s.Name, Kind: s.Kind, With: props, Text: sql}, "Q", opts)
	}
	t.Fatalf("not a query: %s", sql)
	return nil, nil
}
