package testcdc

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseDSN(t *testing.T) {
	got, err := parseDSN("postgres://sluice:sluice@127.0.0.1:24817/sluice")
	if err != nil {
		t.Fatal(err)
	}
	want := &Postgres{DSN: "postgres://sluice:sluice@127.0.0.1:24817/sluice", Host: "127.0.0.1", Port: "24817",
		User: "sluice", Password: "sluice", Database: "sluice"}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(Postgres{})); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	for _, bad := range []string{"", "postgres: starting", "http://127.0.0.1:1/x", "postgres://127.0.0.1:1/x", "postgres://a:b@127.0.0.1:1"} {
		if _, err := parseDSN(bad); err == nil {
			t.Errorf("parseDSN(%q): no error", bad)
		}
	}
}
