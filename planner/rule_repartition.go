package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/planner/logical"
	"github.com/sluice-sql/sluice/types"
)

// repartitionRule decides where rows are re-keyed through a repartition
// topic, so that every row of a key meets in one task: before an
// aggregate whose input is not keyed by its GROUP BY, before each join
// input not keyed by its side of ON (or keyed in another key format than
// the other input read as it is), and for PARTITION BY. It puts a
// logical.Repartition there; the builder makes the topic and the
// sub-topology writing it where the plan has one. A join of two tables
// whose left input is not keyed by ON is a foreign-key join (no
// re-keying; refused where ksqlDB refuses one). Whether an input that
// needs re-keying can be re-keyed is the co-partitioning rule's check.
func (p *planning) repartitionRule() (bool, error) {
	changed := false
	var err error
	p.q.Logical = logical.Transform(p.q.Logical, func(n logical.Node) logical.Node {
		if err != nil {
			return n
		}
		var out logical.Node
		var did bool
		switch x := n.(type) {
		case *logical.Join:
			out, did, err = repartitionJoin(x, p.bound[x.Index], p.opts.DefaultKeyFormat)
		case *logical.Aggregate:
			out, did = repartitionAggregate(x)
		case *logical.Project:
			out, did = repartitionPartitionBy(x, p.target != nil)
		default:
			return n
		}
		changed = changed || did
		return out
	})
	return changed, err
}

// repartitionAggregate re-keys an aggregate's input by the GROUP BY
// unless the input is keyed by exactly the grouping columns, in order.
func repartitionAggregate(a *logical.Aggregate) (logical.Node, bool) {
	below := a.Input
	w, windowed := below.(*logical.Window)
	if windowed {
		below = w.Input
	}
	in := logical.KeyingOf(below)
	if keyedBy(in.Key, a.Keys) {
		return a, false
	}
	var r logical.Node = &logical.Repartition{By: a.GroupBy, Keying: logical.Keying{Key: a.GroupBy, Partitions: in.Partitions}, Input: below}
	if windowed {
		nw := *w
		nw.Input = r
		r = &nw
	}
	na := *a
	na.Input = r
	return &na, true
}

// keyedBy reports whether rows keyed by the columns key are keyed by the
// expressions by: each is that key column, in order.
func keyedBy(key []string, by []parser.Expr) bool {
	if len(key) != len(by) {
		return false
	}
	for i, e := range by {
		ref, ok := e.(*parser.ColumnRef)
		if !ok || !strings.EqualFold(ref.Name, key[i]) {
			return false
		}
	}
	return true
}

// repartitionPartitionBy re-keys a persistent query's rows by its
// PARTITION BY before the projection (the sink writes each record to its
// new key's partition). A push query's rows go to the client, not to
// partitions.
func repartitionPartitionBy(proj *logical.Project, persistent bool) (logical.Node, bool) {
	if !persistent || len(proj.PartitionBy) == 0 {
		return proj, false
	}
	by := exprTexts(proj.PartitionBy)
	np := *proj
	np.Input = &logical.Repartition{By: by, Exprs: proj.PartitionBy, Keying: logical.Keying{Key: by, Partitions: logical.KeyingOf(proj.Input).Partitions}, Input: proj.Input}
	return &np, true
}

// repartitionJoin decides which inputs of one join (of joins in the FROM
// clause) are re-keyed by their side of ON, and how the join's result is
// keyed. Its inputs are decided already (the plan is rewritten
// bottom-up), so an input that is the result of the joins before is
// keyed as their decisions left it.
//
// Inputs both without a key (KEY_FORMAT NONE) are re-keyed in the
// session's default key format (defaultKeyFormat, "" for KAFKA).
func repartitionJoin(j *logical.Join, b *boundJoin, defaultKeyFormat string) (logical.Node, bool, error) {
	ins := [2]logical.Keying{logical.KeyingOf(j.Left), logical.KeyingOf(j.Right)}
	keyed := b.sourceKeyed
	before, afterJoin := j.Left.(*logical.Join)
	if afterJoin {
		keyed[0] = b.onKeySlot || (b.onCols[0] != "" && slices.Contains(before.Candidates, b.onCols[0]))
	}
	nj := *j
	nj.Keyed = keyed
	if b.table[0] && b.table[1] {
		if !keyed[1] {
			// Refused by the co-partitioning rule.
			return &nj, false, nil
		}
		if !keyed[0] {
			if err := checkForeignKeyJoin(b); err != nil {
				return nil, false, err
			}
			nj.ForeignKey = true
			nj.Keying = logical.Keying{Key: b.fkKey, Format: ins[0].Format, Partitions: ins[0].Partitions, Table: true}
			if len(b.fkKey) == 1 {
				// The result is keyed by the left table's key, partitioned
				// like that table: a join after it on that key reads it
				// as it is.
				nj.Candidates = b.fkKey
			}
			return &nj, false, nil
		}
	}
	rekey := [2]bool{!keyed[0], !keyed[1]}
	// Both inputs must hash a key alike: of two inputs keyed by ON in
	// different key formats, a stream is re-keyed in the other's format.
	if keyed[0] && keyed[1] && !strings.EqualFold(ins[0].Format, ins[1].Format) {
		switch {
		case !b.table[1]:
			rekey[1] = true
		case !b.table[0]:
			rekey[0] = true
		}
	}
	partitions := ins[0].Partitions
	if rekey[0] {
		partitions = ins[1].Partitions
	}
	out := logical.Keying{Format: ins[0].Format, Partitions: partitions, Windowed: ins[0].Windowed, Table: b.table[0] && b.table[1]}
	sides := [2]*logical.Node{&nj.Left, &nj.Right}
	for side := range sides {
		if !rekey[side] {
			continue
		}
		// The topic is keyed in the format of the other input when that
		// one is read as it is, so that both hash a key alike.
		keyFormat := ""
		if !rekey[1-side] {
			keyFormat = ins[1-side].Format
		}
		switch {
		case keyless(ins[0].Format) && keyless(ins[1].Format):
			// Keyless inputs get a key in the session's default key
			// format, as ksqlDB re-keys a NONE key.
			keyFormat = rekeyFormat(defaultKeyFormat, b.keyType)
		case keyless(keyFormat):
			keyFormat = rekeyFormat("KAFKA", b.keyType)
		}
		if side == 0 {
			out.Format = keyFormat
		}
		*sides[side] = &logical.Repartition{By: []string{b.onExpr[side].String()}, Input: *sides[side], Keying: logical.Keying{
			Key: []string{"KSQL_INTERNAL_JOINKEY"}, Format: keyFormat, Partitions: partitions, Windowed: ins[side].Windowed, Table: ins[side].Table}}
	}
	// The columns holding the join key: the join columns, and those of
	// the joins before when this join keeps their key.
	full := b.join.Type == parser.JoinFull
	if afterJoin && !rekey[0] && !full {
		nj.Candidates = append(nj.Candidates, before.Candidates...)
	}
	for _, c := range b.onCols {
		if c != "" && !full && !strings.HasPrefix(c, "KSQL_INTERNAL_") && !slices.Contains(nj.Candidates, c) {
			nj.Candidates = append(nj.Candidates, c)
		}
	}
	out.Key = []string{"KSQL_INTERNAL_JOINKEY"}
	if len(nj.Candidates) == 0 {
		out.Key = []string{b.syntheticKey}
	}
	nj.Keying = out
	return &nj, rekey[0] || rekey[1], nil
}

// keyless reports whether a key format leaves records without a key.
func keyless(keyFormat string) bool {
	return keyFormat == "" || strings.EqualFold(keyFormat, "NONE")
}

// rekeyFormat is the key format rows re-keyed by a key of type t are
// written in: format (KAFKA when "" or NONE), or JSON where a format of
// primitives (KAFKA, DELIMITED) cannot hold t.
func rekeyFormat(format string, t types.Type) string {
	format = strings.ToUpper(format)
	if keyless(format) {
		format = "KAFKA"
	}
	if (format == "KAFKA" || format == "DELIMITED") && !isPrimitive(t) {
		return "JSON"
	}
	return format
}

// checkForeignKeyJoin refuses the foreign-key joins ksqlDB refuses. One
// whose left input is a source may start an n-way join (its result is
// keyed by that source's key); one whose left input is the result of
// joins before is refused, as ksqlDB refuses it.
func checkForeignKeyJoin(b *boundJoin) error {
	pj := b.join
	switch {
	case pj.Type == parser.JoinRight:
		return posErr(pj.Pos, fmt.Errorf("%w: RIGHT OUTER JOIN on a foreign key is not supported", ErrUnsupported))
	case pj.Type == parser.JoinFull:
		return posErr(pj.Pos, fmt.Errorf("%w: FULL OUTER JOIN on a foreign key is not supported", ErrUnsupported))
	case b.windowed[0]:
		return posErr(pj.Pos, fmt.Errorf("%w: Foreign-key table-table joins are not supported on windowed tables.", ErrUnsupported))
	case b.afterJoin:
		return posErr(pj.On.Position(), fmt.Errorf("%w: Invalid join condition: foreign-key table-table joins are not supported as part of n-way joins. Got %s.", ErrInvalid, onText(b.eq, b.pre)))
	}
	return nil
}
