package planner

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/parser"
)

// joinItems expands the SELECT of a join: * is every column of every
// input (the synthetic key first), ALIAS.* one input's; a column named
// with its source is called ALIAS_COLUMN, as in ksqlDB.
//
// Under PARTITION BY (partitioned) an unqualified * is every column of
// the rows the PARTITION BY re-keys, as ksqlDB lays them out: per input,
// its value columns, its ROWTIME, ROWPARTITION and ROWOFFSET, its key
// columns (and window bounds), then a synthetic join key; the PARTITION BY
// columns among them become the new key (partitionKeyItems).
func joinItems(selected []parser.SelectItem, l *joinLayout, sc expr.Scope, partitioned, persistent bool) ([]item, error) {
	list := itemList{scope: sc}
	add := list.add
	generated := 0
	for _, si := range selected {
		if si.Star {
			var ins []*joinInput
			if si.StarSource != "" {
				in := l.input(si.StarSource)
				if in == nil {
					return nil, posErr(si.Pos, fmt.Errorf("%w: '%s' is not a valid stream/table name or alias.", ErrInvalid, strings.ToUpper(si.StarSource)))
				}
				ins = []*joinInput{in}
			} else if partitioned {
				if err := addRepartitioned(l, si.Pos, add); err != nil {
					return nil, err
				}
				continue
			} else {
				ins = l.inputs
				if l.synthetic {
					if err := add(item{expr: &parser.ColumnRef{Pos: si.Pos, Name: l.keyName}, name: l.keyName, pos: si.Pos, star: true}); err != nil {
						return nil, err
					}
				}
			}
			for _, in := range ins {
				// A windowed input's window bounds follow its key columns
				// (S1_K, S1_WINDOWSTART, S1_WINDOWEND, S1_V), as in ksqlDB.
				names := in.names[:len(in.names)-3-windowCols(in)]
				if w := windowCols(in); w > 0 {
					nkeys := min(len(in.src.Schema.Keys()), len(names))
					names = slices.Concat(names[:nkeys], in.names[len(in.names)-w:], names[nkeys:])
				}
				for _, n := range names {
					if strings.HasPrefix(n, "KSQL_INTERNAL_") {
						continue
					}
					if err := add(item{expr: &parser.ColumnRef{Pos: si.Pos, Name: n}, name: n, pos: si.Pos, star: true}); err != nil {
						return nil, err
					}
				}
			}
			continue
		}
		if si.AllFields {
			if err := addStructFields(si, sc, add); err != nil {
				return nil, err
			}
			continue
		}
		name := si.Alias
		if name == "" {
			switch x := si.Expr.(type) {
			case *parser.ColumnRef:
				// ksqlDB names a qualified column ALIAS_COLUMN only when
				// more than one input has a column of that name (S.ROWTIME
				// is S_ROWTIME, every input having a ROWTIME).
				name = strings.ToUpper(x.Name)
				if in := l.input(x.Source); in != nil && l.shared(x.Name) {
					name = strings.ToUpper(in.alias) + "_" + name
				}
			case *parser.Dereference:
				name = x.Field
			default:
				name = fmt.Sprintf("KSQL_COL_%d", generated)
				generated++
			}
		}
		if err := checkOutputName(si, name, persistent); err != nil {
			return nil, err
		}
		if err := add(item{expr: si.Expr, name: name, pos: si.Pos}); err != nil {
			return nil, err
		}
	}
	return list.items, nil
}

// addRepartitioned adds the columns of a * over a join that PARTITION BY
// re-keys, in the order of ksqlDB's joined rows (see joinItems).
func addRepartitioned(l *joinLayout, pos parser.Pos, add func(item) error) error {
	var names []string
	for _, in := range l.inputs {
		// A re-keyed input's row starts with its new key; its source's
		// key columns are found by name.
		isKey := map[string]bool{}
		for _, k := range in.src.Schema.Keys() {
			isKey[strings.ToUpper(in.alias)+"_"+k.Name] = true
		}
		w := windowCols(in)
		cols := in.names[:len(in.names)-3-w]
		var keys []string
		for _, n := range cols {
			if isKey[n] {
				keys = append(keys, n)
			} else {
				names = append(names, n)
			}
		}
		names = slices.Concat(names, in.names[len(cols):len(in.names)-w], keys, in.names[len(in.names)-w:])
	}
	if l.synthetic {
		names = append(names, l.keyName)
	}
	for _, n := range names {
		if strings.HasPrefix(n, "KSQL_INTERNAL_") {
			continue
		}
		if err := add(item{expr: &parser.ColumnRef{Pos: pos, Name: n}, name: n, pos: pos, star: true}); err != nil {
			return err
		}
	}
	return nil
}

// joinKey picks the item that becomes the result's key: the first that
// names a join column (or the synthetic key), which then reads the join
// key itself, so that it is set on rows where its own input is missing.
// A persistent query must select one.
func (p *planning) joinKey() error {
	l := p.join.layout
	if l.fkKeys > 0 {
		return p.fkKey()
	}
	var keyItems []int
	for i, it := range p.items {
		ref, ok := it.expr.(*parser.ColumnRef)
		if !ok {
			continue
		}
		slot, _, err := p.sc.Resolve(ref)
		if err != nil {
			continue
		}
		if l.candidates[l.names[slot]] || slot == l.keySlot {
			keyItems = append(keyItems, i)
		}
	}
	if len(keyItems) == 0 {
		if p.target == nil {
			return nil
		}
		if l.synthetic {
			return posErr(p.sel.Pos, fmt.Errorf("%w (ie, SELECT). See https://cnfl.io/2LV7ouS.\nThe query used to build `%s` must include the join expression %s in its projection (eg, SELECT %s...).\n%s was added as a synthetic key column because the join criteria did not match any source column. This expression must be included in the projection and may be aliased. ",
				ErrKeyProjection, strings.ToUpper(p.target.Name), l.keyName, l.keyName, l.keyName))
		}
		what := "expression " + l.candidateText[0]
		if len(l.candidateText) > 1 {
			what = "expressions " + strings.Join(l.candidateText, " or ")
		}
		return posErr(p.sel.Pos, fmt.Errorf("%w (ie, SELECT). The query used to build `%s` must include the join %s in its projection (eg, SELECT %s...).", ErrKeyProjection, strings.ToUpper(p.target.Name), what, l.candidateText[0]))
	}
	// The left input's join column is the key when selected, else the
	// right's, as in ksqlDB.
	first := keyItems[0]
	for _, i := range keyItems {
		if slot, _, _ := p.sc.Resolve(p.items[i].expr.(*parser.ColumnRef)); slot < len(l.sides[0].names) {
			first = i
			break
		}
	}
	firstSlot, _, _ := p.sc.Resolve(p.items[first].expr.(*parser.ColumnRef))
	var dup []string
	for _, i := range keyItems {
		s, _, _ := p.sc.Resolve(p.items[i].expr.(*parser.ColumnRef))
		if s == firstSlot {
			dup = append(dup, p.items[i].name)
		}
	}
	if len(dup) > 1 && p.target != nil {
		sort.Strings(dup)
		return posErr(p.sel.Pos, fmt.Errorf("%w: The projection contains a key column (`%s`) more than once, aliased as: %s.", ErrInvalid, l.names[firstSlot], strings.Join(dup, " and ")))
	}
	if p.target != nil {
		p.items[first].expr = &parser.ColumnRef{Pos: p.items[first].pos, Name: l.keyName}
		p.items[first].star = false
	}
	return nil
}
