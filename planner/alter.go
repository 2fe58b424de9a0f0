package planner

import (
	"fmt"
	"strings"

	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/parser"
)

// AlterSource plans ALTER STREAM|TABLE … ADD COLUMN: the source as it
// would have been created with the new value columns after its own. The
// source is planned again from its CREATE statement, so the columns are
// checked as a CREATE checks them (names, types, formats, registry
// schemas), and its formats stay those it was created with. Queries
// already running keep the schema they were planned with, as in ksqlDB.
func AlterSource(cat *Catalog, st *parser.AlterSource) (*Source, error) {
	src, err := cat.Lookup(st.Name)
	if err != nil {
		return nil, posErr(st.Pos, err)
	}
	kind := strings.ToLower(st.Kind.String())
	switch {
	case src.Kind != st.Kind:
		return nil, posErr(st.Pos, fmt.Errorf("%w: Incompatible data source type is %s, but statement was ALTER %s", ErrInvalid, src.Kind, st.Kind))
	case src.ReadOnly:
		return nil, posErr(st.Pos, fmt.Errorf("%w: Cannot alter %s '%s': ALTER operations are not supported on source %ss.", ErrInvalid, kind, src.Name, kind))
	case src.QueryID != "":
		return nil, posErr(st.Pos, fmt.Errorf("%w: ALTER command is not supported for CREATE ... AS statements.", ErrInvalid))
	}
	created, err := parser.ParseOne(src.Statement)
	cs, ok := created.(*parser.CreateSource)
	if err != nil || !ok || cs.Query != nil {
		return nil, posErr(st.Pos, fmt.Errorf("%w: %s '%s' was not created by CREATE with columns, and cannot be altered", ErrInvalid, kind, src.Name))
	}
	if len(cs.Columns) != len(src.Schema.Columns) {
		// Some columns came from the Schema Registry: the registered
		// schema, not the statement, says what the source holds.
		return nil, posErr(st.Pos, fmt.Errorf("%w: the columns of %s '%s' were read from the Schema Registry: register the new schema and create the %s again", ErrInvalid, kind, src.Name, kind))
	}
	for _, c := range st.Columns {
		if src.Schema.Find(c.Name) >= 0 {
			return nil, posErr(c.Pos, fmt.Errorf("%w: Cannot add column `%s` to schema. A column with the same name already exists.", ErrInvalid, strings.ToUpper(c.Name)))
		}
	}
	altered := *cs
	altered.OrReplace, altered.IfNotExists = false, false
	altered.Columns = append(append([]parser.ColumnDef{}, cs.Columns...), st.Columns...)
	for i, c := range cs.Columns {
		// The types the columns were planned with: a custom type the
		// CREATE named may since have been dropped or replaced.
		if j := src.Schema.Find(c.Name); j >= 0 {
			altered.Columns[i].Type = expr.TypeNameOf(src.Schema.Columns[j].Type)
		}
	}
	// The formats the source was created with, whatever the session's
	// defaults are now.
	opts := Options{DefaultKeyFormat: src.KeyFormat, DefaultValueFormat: src.ValueFormat}
	out, err := CreateSourceWith(cat, &altered, altered.String(), opts)
	if err != nil {
		return nil, err
	}
	out.Partitions = src.Partitions
	return out, nil
}
