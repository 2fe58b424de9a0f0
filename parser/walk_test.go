package parser_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sluice-sql/sluice/parser"
)

// Inspect visits every kind of node that holds expressions, parents
// first and children in source order.
func TestInspect(t *testing.T) {
	e, err := parser.ParseExpr(`CASE a WHEN 1 THEN -f(b, ARRAY[c]) ELSE CAST(m['k'] AS INT) END` +
		` + TRANSFORM(l, x => x->y) + MAP('p' := q) [0] + STRUCT(s := NOT r IS NULL)` +
		` + (CASE WHEN g IN (h) AND i BETWEEN j AND k AND n LIKE o THEN 1 END)`)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	parser.Inspect(e, func(x parser.Expr) bool {
		kinds = append(kinds, strings.TrimPrefix(fmt.Sprintf("%T", x), "*parser."))
		return true
	})
	wantKinds := strings.Fields(`Binary Binary Binary Binary Case ColumnRef Literal Unary FuncCall ColumnRef ArrayCtor ColumnRef
		Cast Subscript ColumnRef Literal FuncCall ColumnRef Lambda Dereference ColumnRef Subscript MapCtor Literal ColumnRef Literal
		StructCtor Unary IsNull ColumnRef Case Binary Binary In ColumnRef ColumnRef Between ColumnRef ColumnRef ColumnRef
		Like ColumnRef ColumnRef Literal`)
	if diff := cmp.Diff(wantKinds, kinds); diff != "" {
		t.Errorf("kinds visited (-want +got):\n%s", diff)
	}
}

// Returning false skips a node's children.
func TestInspectSkipsChildren(t *testing.T) {
	e, err := parser.ParseExpr(`f(a, g(b)) + c`)
	if err != nil {
		t.Fatal(err)
	}
	var refs []string
	parser.Inspect(e, func(x parser.Expr) bool {
		if ref, ok := x.(*parser.ColumnRef); ok {
			refs = append(refs, ref.Name)
		}
		f, ok := x.(*parser.FuncCall)
		return !ok || f.Name != "G"
	})
	if diff := cmp.Diff([]string{"A", "C"}, refs); diff != "" {
		t.Errorf("column references (-want +got):\n%s", diff)
	}
}

// Rewrite replaces the nodes f answers for, copies the nodes above them
// and leaves the original tree as it was.
func TestRewrite(t *testing.T) {
	src := `CASE WHEN a IN (b, 1) THEN ARRAY[b, MAP('k' := b)['k']] ELSE STRUCT(s := b)->s END`
	e, err := parser.ParseExpr(src)
	if err != nil {
		t.Fatal(err)
	}
	before := e.String()
	out := parser.Rewrite(e, func(x parser.Expr) parser.Expr {
		if ref, ok := x.(*parser.ColumnRef); ok && ref.Name == "B" {
			return &parser.ColumnRef{Pos: ref.Pos, Name: "Z"}
		}
		return nil
	})
	if got, want := out.String(), `CASE WHEN A IN (Z, 1) THEN ARRAY[Z, MAP('k' := Z)['k']] ELSE STRUCT(S := Z)->S END`; got != want {
		t.Errorf("rewritten = %s, want %s", got, want)
	}
	if e.String() != before {
		t.Errorf("original changed: %s, was %s", e.String(), before)
	}
	if parser.Rewrite(nil, func(parser.Expr) parser.Expr { return nil }) != nil {
		t.Error("Rewrite(nil) is not nil")
	}
}
