package planner

import (
	"strings"

	"github.com/sluice-sql/sluice/parser"
)

// ksqlStatementText is a CREATE … AS SELECT as ksqlDB prints it after
// rewriting it, which its statement errors quote ("…\nStatement: CREATE
// TABLE OUTPUT AS SELECT\n  TEST.F2 F2,\n  COUNT(*) KSQL_COL_0\nFROM TEST
// TEST\nGROUP BY TEST.F2\nEMIT CHANGES"): every column qualified with its
// source's alias, every item with its output name, one item a line, the
// source followed by its alias. ok is false for the queries whose
// printing Sluice does not reproduce (joins, windows, *), which are then
// quoted by the error's position alone.
func (p *planning) ksqlStatementText() (text string, ok bool) {
	sel := p.sel
	if p.target == nil || p.src == nil || len(sel.Joins) > 0 || sel.Window != nil || sel.From == nil {
		return "", false
	}
	alias := aliasOf(sel.From)
	qualify := func(e parser.Expr) string {
		return parser.KsqlText(parser.Rewrite(e, func(x parser.Expr) parser.Expr {
			if ref, ok := x.(*parser.ColumnRef); ok && ref.Source == "" {
				return &parser.ColumnRef{Pos: ref.Pos, Source: alias, Name: ref.Name}
			}
			return nil
		}))
	}
	var b strings.Builder
	b.WriteString("CREATE " + p.target.Kind.String() + " " + parser.Ident(p.target.Name))
	if len(p.target.WithClause) > 0 {
		props := make([]string, len(p.target.WithClause))
		for i, prop := range p.target.WithClause {
			props[i] = prop.String()
		}
		b.WriteString(" WITH (" + strings.Join(props, ", ") + ")")
	}
	b.WriteString(" AS SELECT\n")
	for i, it := range p.items {
		if it.star {
			return "", false
		}
		if i > 0 {
			b.WriteString(",\n")
		}
		b.WriteString("  " + qualify(it.expr) + " " + parser.Ident(it.name))
	}
	b.WriteString("\nFROM " + parser.Ident(p.src.Name) + " " + parser.Ident(alias))
	if sel.Where != nil {
		b.WriteString("\nWHERE " + qualify(sel.Where))
	}
	clause := func(name string, es []parser.Expr) {
		if len(es) == 0 {
			return
		}
		texts := make([]string, len(es))
		for i, e := range es {
			texts[i] = qualify(e)
		}
		b.WriteString("\n" + name + " " + strings.Join(texts, ", "))
	}
	clause("GROUP BY", sel.GroupBy)
	clause("PARTITION BY", sel.PartitionBy)
	if sel.Having != nil {
		b.WriteString("\nHAVING " + qualify(sel.Having))
	}
	if sel.Emit == parser.EmitFinal {
		b.WriteString("\nEMIT FINAL")
	} else {
		b.WriteString("\nEMIT CHANGES")
	}
	return b.String(), true
}
