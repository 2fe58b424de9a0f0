package expr_test

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/expr"
)

// TestFunctionsDoc: docs/functions.md's table of ksqlDB's functions says
// which Sluice has, and each row says it of the registry truly; every
// function Sluice has that ksqlDB lacks is named on the page.
func TestFunctionsDoc(t *testing.T) {
	f, err := os.Open("../docs/functions.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	listed := map[string]bool{}
	var text strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		text.WriteString(line + "\n")
		cells := strings.Split(line, "|")
		if len(cells) != 5 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		name := strings.Trim(strings.TrimSpace(cells[1]), "`")
		kind, have := strings.TrimSpace(cells[2]), strings.TrimSpace(cells[3]) == "yes"
		if !strings.HasPrefix(name, "ksql.") {
			listed[name] = true
		}
		info, ok := expr.LookupFunction(name)
		if ok != have {
			t.Errorf("%s: the page says in Sluice %v, the registry %v", name, have, ok)
			continue
		}
		want := map[string]string{"scalar": "SCALAR", "aggregate": "AGGREGATE", "table": "TABLE"}[kind]
		if ok && info.Type != want {
			t.Errorf("%s: the page says %s, the registry %s", name, kind, info.Type)
		}
	}
	if len(listed) < 140 {
		t.Fatalf("only %d functions listed", len(listed))
	}
	for _, fn := range expr.Functions() {
		if !listed[fn.Name] && !strings.Contains(text.String(), "`"+fn.Name+"`") {
			t.Errorf("%s is in the registry but not on docs/functions.md", fn.Name)
		}
	}
}
