package server

import "testing"

func TestNegotiate(t *testing.T) {
	cases := []struct {
		accept, stream, query string
	}{
		{"", contentDelimited, contentJSON},
		{"application/json", contentJSON, contentJSON},
		{"application/vnd.ksql.v1+json", contentDelimited, contentKSQLJSON},
		{"application/vnd.ksqlapi.delimited.v1", contentDelimited, contentDelimited},
		{"application/json, application/vnd.ksqlapi.delimited.v1", contentJSON, contentJSON},
		{"application/vnd.ksqlapi.delimited.v1, application/json", contentDelimited, contentDelimited},
		{"application/json;q=0.5, application/vnd.ksqlapi.delimited.v1", contentDelimited, contentDelimited},
		{"application/vnd.ksql.v1+json; q=0.9, application/json", contentJSON, contentJSON},
		{"*/*", contentDelimited, contentJSON},
		{"text/html", contentDelimited, contentJSON},
	}
	for _, c := range cases {
		if got := streamFormat(c.accept); got != c.stream {
			t.Errorf("streamFormat(%q) = %s, want %s", c.accept, got, c.stream)
		}
		if got := queryFormat(c.accept); got != c.query {
			t.Errorf("queryFormat(%q) = %s, want %s", c.accept, got, c.query)
		}
	}
}
