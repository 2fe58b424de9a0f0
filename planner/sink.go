package planner

// The sink pass: the stream or table a persistent query writes, built
// new or checked against the existing one.

import (
	"fmt"
	"strings"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/types"
)

// sinkSource builds (or, for INSERT INTO, checks) the source the query
// writes.
func (p *planning) sinkSource(keyCols, valCols []types.Column, win exec.WindowType, winSize int64, partitions int32) (*Source, error) {
	for _, c := range keyCols {
		// A GROUP BY or PARTITION BY on a map makes a map key: refused
		// as in a declared schema, whatever the key format.
		if containsMap(c.Type) {
			return nil, posErr(p.sel.Pos, fmt.Errorf("%w: %s", ErrInvalid, mapKeyMessage(c.Name, c.Type)))
		}
	}
	if ex := p.target.Existing; ex != nil {
		if len(ex.Schema.Headers()) > 0 {
			return nil, posErr(p.sel.Pos, fmt.Errorf("%w: Cannot insert into %s because it has header columns", ErrInvalid, ex.Name))
		}
		if err := compatible(ex, keyCols, valCols); err != nil {
			return nil, posErr(p.sel.Pos, err)
		}
		writable := (!format.UsesRegistry(ex.KeyFormat) || len(ex.Schema.Keys()) == 0 || ex.KeyProps.Schema != "") &&
			(!format.UsesRegistry(ex.ValueFormat) || ex.ValueProps.Schema != "")
		if writable {
			return ex, nil
		}
		// Writing to a source declared for reading: its schemas are
		// registered (or found) for this query's writes.
		w := *ex
		if err := p.registerSinkSchemas(&w); err != nil {
			return nil, err
		}
		return &w, nil
	}
	with := p.target.With
	topic := with["KAFKA_TOPIC"]
	defKey, defValue := p.src.KeyFormat, p.src.ValueFormat
	if old := p.target.Replaces; old != nil {
		defKey, defValue = old.KeyFormat, old.ValueFormat
		if topic == "" {
			topic = old.Topic
		}
		if _, ok := with["PARTITIONS"]; !ok && old.Partitions > 0 {
			partitions = old.Partitions
		}
	}
	if topic == "" {
		topic = p.opts.OutputTopicPrefix + strings.ToUpper(p.target.Name)
	}
	if err := with.checkFormatNames(); err != nil {
		return nil, withErr(p.sel.Pos, p.target.WithClause, err)
	}
	keyFormat, valueFormat := with.formats(defKey, defValue)
	_, explicit := with["KEY_FORMAT"]
	if p.partitionBy {
		_, anyFormat := with["FORMAT"]
		var err error
		if keyFormat, err = partitionKeyFormat(keyFormat, explicit || anyFormat, keyCols); err != nil {
			return nil, posErr(p.sel.Pos, err)
		}
	} else if !explicit && strings.EqualFold(keyFormat, "NONE") && len(keyCols) > 0 {
		// A join of keyless sources has a key, the join expression, in
		// the session's default key format (KAFKA), as ksqlDB re-keys a
		// NONE key.
		keyFormat = rekeyFormat(p.opts.DefaultKeyFormat, keyCols[0].Type)
		if len(keyCols) > 1 && keyFormat == "KAFKA" {
			keyFormat = "JSON"
		}
	}
	// A CREATE … AS SELECT declares no columns: a schema id only needs a
	// format that takes its columns from a registered schema.
	if err := checkSchemaInference(with, keyFormat, valueFormat, false, false); err != nil {
		return nil, withErr(p.sel.Pos, p.target.WithClause, err)
	}
	if err := with.checkEnvelope(p.target.Kind, valueFormat, true); err != nil {
		return nil, withErr(p.sel.Pos, p.target.WithClause, err)
	}
	parts, err := with.partitions()
	if err != nil {
		return nil, withErr(p.sel.Pos, p.target.WithClause, err)
	}
	if parts == 0 {
		parts = partitions
	}
	replicas, err := with.replicas()
	if err != nil {
		return nil, withErr(p.sel.Pos, p.target.WithClause, err)
	}
	s := &Source{
		Name: p.target.Name, Kind: p.target.Kind, Topic: topic, KeyFormat: keyFormat, ValueFormat: valueFormat,
		Schema: types.Schema{Columns: append(append([]types.Column{}, keyCols...), valCols...)}, Partitions: parts,
		Window: win, WindowSize: winSize, Statement: p.target.Text, QueryID: p.q.ID, Replicas: replicas,
	}
	// WRAP_SINGLE_VALUE is not inherited from the source: as in ksqlDB,
	// a result's single value column is wrapped unless the statement or
	// ksql.persistence.wrap.single.values says otherwise (the source's
	// setting described its own topic).
	s.KeyProps, s.ValueProps = with.formatProps()
	if s.ValueProps.WrapSingleValue, err = format.ValueWrapping(valueFormat, len(valCols), s.ValueProps.WrapSingleValue, p.opts.WrapSingleValues); err != nil {
		return nil, withErr(p.sel.Pos, p.target.WithClause, propErr("WRAP_SINGLE_VALUE", fmt.Errorf("%w: %w", ErrInvalid, err)))
	}
	if err := with.checkSchemaNames(keyFormat, valueFormat); err != nil {
		return nil, posErr(p.sel.Pos, err)
	}
	if err := with.checkDelimiters(keyFormat, valueFormat); err != nil {
		return nil, withErr(p.sel.Pos, p.target.WithClause, err)
	}
	if s.ValueProps.Envelope != "" && win != exec.NotWindowed {
		return nil, withErr(p.sel.Pos, p.target.WithClause, propErr("VALUE_ENVELOPE", fmt.Errorf("%w: VALUE_ENVELOPE '%s' writes the changes of a database-like table, keyed by its primary key: a windowed result's key has a window", ErrUnsupported, s.ValueProps.Envelope)))
	}
	with.inheritDelimiters(p.src, s)
	if err := p.registerSinkSchemas(s); err != nil {
		return nil, err
	}
	// TIMESTAMP names the output column that becomes each record's
	// timestamp; readers of the result take event time from it too.
	s.TimestampColumn, s.TimestampFormat = strings.ToUpper(with["TIMESTAMP"]), with["TIMESTAMP_FORMAT"]
	if err := resolveTimestampColumn(s); err != nil {
		return nil, withErr(p.sel.Pos, p.target.WithClause, err)
	}
	if err := validateFormats(s); err != nil {
		if text, ok := p.ksqlStatementText(); ok {
			// ksqlDB's refusal of the result's formats quotes the
			// statement it rewrote.
			err = fmt.Errorf("%w\nStatement: %s", err, text)
		}
		return nil, withErr(p.sel.Pos, p.target.WithClause, err)
	}
	return s, nil
}

// registerSinkSchemas registers the schemas a sink in a Schema Registry
// format writes with (KEY_SCHEMA_FULL_NAME / VALUE_SCHEMA_FULL_NAME, in
// the props, name their records).
func (p *planning) registerSinkSchemas(s *Source) error {
	if err := p.cat.registerSink(s.Topic, true, s.KeyFormat, s.Schema.Keys(), &s.KeyProps); err != nil {
		return posErr(p.sel.Pos, err)
	}
	values := s.Schema.Values()
	if s.ValueProps.Envelope != "" {
		// The topic holds change events of the table's rows.
		values = format.DebeziumEnvelopeColumns(s.Schema.Columns)
	}
	if err := p.cat.registerSink(s.Topic, false, s.ValueFormat, values, &s.ValueProps); err != nil {
		return posErr(p.sel.Pos, err)
	}
	return nil
}

func compatible(ex *Source, keyCols, valCols []types.Column) error {
	exKeys, exVals := ex.Schema.Keys(), ex.Schema.Values()
	same := len(exKeys) == len(keyCols) && len(exVals) == len(valCols)
	for i := 0; same && i < len(keyCols); i++ {
		same = exKeys[i].Type.Equal(keyCols[i].Type) && strings.EqualFold(exKeys[i].Name, keyCols[i].Name)
	}
	for i := 0; same && i < len(valCols); i++ {
		same = exVals[i].Type.Equal(valCols[i].Type) && strings.EqualFold(exVals[i].Name, valCols[i].Name)
	}
	if !same {
		got := types.Schema{Columns: append(append([]types.Column{}, keyCols...), valCols...)}
		return fmt.Errorf("%w: Incompatible schema between results and sink.\nResult schema is %s\nSink schema is %s", ErrInvalid, schemaText(got), schemaText(ex.Schema))
	}
	return nil
}

// checkSinkTimestampNamed refuses a TIMESTAMP property naming no column
// of the projection as soon as the projection is known, before the
// checks of its key columns, as ksqlDB does: a statement wrong in both
// ways is told about the TIMESTAMP. resolveTimestampColumn checks its
// type once the sink's schema is built.
func (p *planning) checkSinkTimestampNamed() error {
	name, ok := p.target.withProp("TIMESTAMP")
	if !ok || name == "" {
		return nil
	}
	name = strings.ToUpper(name)
	for _, it := range p.items {
		if strings.EqualFold(it.name, name) {
			return nil
		}
	}
	return withErr(p.sel.Pos, p.target.WithClause, propErr("TIMESTAMP", fmt.Errorf("%w: %s", ErrInvalid, missingTimestampColumn(name))))
}

// missingTimestampColumn is ksqlDB's refusal of a TIMESTAMP property
// naming no column.
func missingTimestampColumn(name string) string {
	return fmt.Sprintf("The TIMESTAMP column set in the WITH clause does not exist in the schema: '%s'", name)
}
