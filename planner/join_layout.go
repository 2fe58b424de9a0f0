package planner

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/types"
)

// joinInput is one input of a join as the join sub-topology reads it: a
// source, or (prev set) the result of the joins before it.
type joinInput struct {
	src   *Source
	prev  *joinLayout
	alias string
	label string // names the input in errors
	table bool
	// window, partitions and key format describe the input's rows as the
	// join reads them.
	window     exec.WindowType
	windowSize int64
	partitions int32
	keyFormat  string
	keyProps   format.Props
	// spec is what the join sub-topology reads: the source itself or its
	// repartition topic.
	spec *exec.SourceSpec
	// names are the names of the input's row slots in the joined row.
	names []string
	types []types.Type
	// fullNames and fullTypes are the slots the input had in a plan
	// without the join-column-pruning rule, which a query started by an
	// older Sluice wrote its join stores and repartition topics with (nil:
	// names and types, nothing was pruned).
	fullNames []string
	fullTypes []types.Type
	// keyCol is the position of the join key in the input's rows.
	keyCol int
}

// full returns the input's slots in a plan without the
// join-column-pruning rule.
func (in *joinInput) full() ([]string, []types.Type) {
	if in.fullNames == nil {
		return in.names, in.types
	}
	return in.fullNames, in.fullTypes
}

// joinLayout names the slots of a joined row and resolves references.
type joinLayout struct {
	// inputs are the sources joined so far, for names and qualifiers;
	// sides the two inputs of the last join.
	inputs []*joinInput
	sides  [2]*joinInput
	names  []string
	types  []types.Type
	// fullNames and fullTypes: the joined row's slots in a plan without
	// the join-column-pruning rule (nil: names and types).
	fullNames []string
	fullTypes []types.Type
	// table, window, partitions and key format describe the result.
	table      bool
	window     exec.WindowType
	windowSize int64
	partitions int32
	keyFormat  string
	keyProps   format.Props
	label      string
	// keySlot is the join key's slot and keyName its name (ROWKEY, or a
	// hidden name when input columns hold the key). candidates are the
	// slots of input columns equal to the key (the join columns).
	keySlot    int
	keyName    string
	synthetic  bool
	candidates map[string]bool
	// candidateText lists the join columns as the user wrote them, for
	// errors.
	candidateText []string
	// fkKeys is, for a foreign-key join, the number of the left table's
	// key columns: they are the result's key (0 for other joins).
	fkKeys int
}

func (l *joinLayout) schema() types.Schema {
	cols := make([]types.Column, len(l.names))
	for i := range cols {
		cols[i] = types.Column{Name: l.names[i], Type: l.types[i]}
	}
	return types.Schema{Columns: cols}
}

func (l *joinLayout) input(qualifier string) *joinInput {
	for _, in := range l.inputs {
		if strings.EqualFold(in.alias, qualifier) {
			return in
		}
	}
	return nil
}

func (l *joinLayout) find(name string) int {
	for i, n := range l.names {
		if strings.EqualFold(n, name) {
			return i
		}
	}
	return -1
}

// resolve finds a column of the joined row: ALIAS.COL, a column only one
// input has, or a column of the joined row itself (ROWKEY, ROWTIME).
func (l *joinLayout) resolve(ref *parser.ColumnRef) (int, types.Type, error) {
	if ref.Source != "" {
		in := l.input(ref.Source)
		if in == nil {
			return 0, types.Type{}, fmt.Errorf("%w: '%s' is not a valid stream/table name or alias.", ErrInvalid, strings.ToUpper(ref.Source))
		}
		if i := l.find(strings.ToUpper(in.alias) + "_" + strings.ToUpper(ref.Name)); i >= 0 {
			return i, l.types[i], nil
		}
		return 0, types.Type{}, fmt.Errorf("%w %s.%s: %s has no such column", expr.ErrUnknownColumn, strings.ToUpper(ref.Source), strings.ToUpper(ref.Name), in.src.Name)
	}
	if i := l.find(ref.Name); i >= 0 {
		return i, l.types[i], nil
	}
	var found []int
	var owners []string
	for _, in := range l.inputs {
		if i := l.find(strings.ToUpper(in.alias) + "_" + strings.ToUpper(ref.Name)); i >= 0 && !isPseudo(ref.Name) {
			found = append(found, i)
			owners = append(owners, strings.ToUpper(in.alias)+"."+strings.ToUpper(ref.Name))
		}
	}
	switch len(found) {
	case 1:
		return found[0], l.types[found[0]], nil
	case 0:
		return 0, types.Type{}, fmt.Errorf("%w %s", expr.ErrUnknownColumn, strings.ToUpper(ref.Name))
	}
	return 0, types.Type{}, &expr.LocatedError{Preface: expr.Preparing, Kind: ErrInvalid,
		Msg: fmt.Sprintf("Column '%s' is ambiguous. Could be %s.", strings.ToUpper(ref.Name), strings.Join(owners, " or "))}
}

// shared reports whether more than one input has a column named name.
func (l *joinLayout) shared(name string) bool {
	n := 0
	for _, in := range l.inputs {
		if in.src.Schema.Find(name) >= 0 || isPseudo(name) {
			n++
		}
	}
	return n > 1
}

func isPseudo(name string) bool {
	switch strings.ToUpper(name) {
	case exec.ColRowTime, exec.ColRowPartition, exec.ColRowOffset:
		return true
	}
	return false
}

// keyedBy reports whether the input's rows are keyed by e already: e
// names a source's only key column, or the key of the joins before.
func (in *joinInput) keyedBy(e parser.Expr, pre *joinLayout) bool {
	ref, ok := e.(*parser.ColumnRef)
	if !ok {
		return false
	}
	if in.prev == nil {
		return isKeyRef(e, in)
	}
	i, _, err := pre.resolve(ref)
	if err != nil || i >= len(in.names) {
		return false
	}
	return i == in.keyCol || in.prev.candidates[pre.names[i]]
}

// aliasOf is the qualifier of a column reference on this input: the
// reference's own, or the input's alias.
func (in *joinInput) aliasOf(ref *parser.ColumnRef) string {
	if ref.Source != "" {
		return ref.Source
	}
	if in.alias != "" {
		return in.alias
	}
	return in.label
}

// joinSide describes the input to the join operator.
func (in *joinInput) joinSide() exec.JoinSide {
	js := exec.JoinSide{Name: in.label, Width: len(in.names), KeyCol: in.keyCol, Table: in.table, Columns: in.names, LegacyColumns: in.fullNames}
	if in.table && in.spec != nil && in.spec.Enveloped() {
		// Read from its own topic, the side's rows begin with its key and
		// value columns; a change repeating them is a connector's re-send.
		js.SameRow = len(in.spec.KeyCols) + len(in.spec.ValueCols)
	}
	if in.window != exec.NotWindowed {
		ws, we := -1, -1
		for i, n := range in.names {
			switch {
			case strings.HasSuffix(n, "_"+exec.ColWindowStart):
				ws = i
			case strings.HasSuffix(n, "_"+exec.ColWindowEnd):
				we = i
			}
		}
		js.Window = []int{ws, we}
	}
	return js
}

// windowCols is the number of window-bound slots at the end of an
// input's row.
func windowCols(in *joinInput) int {
	if in.spec.Window != exec.NotWindowed {
		return 2
	}
	return 0
}

func (l *joinLayout) scopeOf(side int) expr.Scope { return sideScope{l, side} }

// sideScope resolves the columns of one input only: a join expression
// must name columns of one side.
type sideScope struct {
	l    *joinLayout
	side int
}

func (s sideScope) Resolve(ref *parser.ColumnRef) (int, types.Type, error) {
	i, t, err := s.l.resolve(ref)
	if err != nil {
		return 0, t, err
	}
	off := 0
	if s.side == 1 {
		off = len(s.l.sides[0].names)
	}
	if i < off || i >= off+len(s.l.sides[s.side].names) {
		return 0, t, fmt.Errorf("%w %s", expr.ErrUnknownColumn, ref)
	}
	return i - off, t, nil
}

// isKeyRef reports whether e names in's only key column.
func isKeyRef(e parser.Expr, in *joinInput) bool {
	ref, ok := e.(*parser.ColumnRef)
	keys := in.src.Schema.Keys()
	return ok && len(keys) == 1 && strings.EqualFold(ref.Name, keys[0].Name) &&
		(ref.Source == "" || strings.EqualFold(ref.Source, in.alias) || strings.EqualFold(ref.Source, in.src.Name))
}

func aliasOf(r *parser.Relation) string {
	if r.Alias != "" {
		return strings.ToUpper(r.Alias)
	}
	return strings.ToUpper(r.Name)
}

// syntheticKeyName is ROWKEY, or ROWKEY_n past every such name an input
// already has.
func syntheticKeyName(ins []*joinInput) string {
	top := -1
	for _, in := range ins {
		for _, c := range in.src.Schema.Columns {
			n := strings.ToUpper(c.Name)
			if n == "ROWKEY" {
				top = max(top, 0)
			} else if rest, ok := strings.CutPrefix(n, "ROWKEY_"); ok {
				if k, err := strconv.Atoi(rest); err == nil {
					top = max(top, k)
				}
			}
		}
	}
	if top < 0 {
		return "ROWKEY"
	}
	return "ROWKEY_" + strconv.Itoa(top+1)
}

// joinNames rewrites e's column references to the names of the join's
// result columns (I1.BAR to I1_BAR), as ksqlDB rewrites an expression
// over a join before it checks it, so that an error quotes the
// expression the way ksqlDB does. References the layout cannot resolve
// are left as written.
func (l *joinLayout) joinNames(e parser.Expr) parser.Expr {
	return parser.Rewrite(e, func(x parser.Expr) parser.Expr {
		ref, ok := x.(*parser.ColumnRef)
		if !ok {
			return nil
		}
		i, _, err := l.resolve(ref)
		if err != nil || i < 0 || i >= len(l.names) {
			return nil
		}
		return &parser.ColumnRef{Pos: ref.Pos, Name: l.names[i]}
	})
}
