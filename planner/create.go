package planner

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/types"
)

// Props is a WITH (…) clause as a map of upper-case names to text values.
type Props map[string]string

// knownProps are the WITH properties Sluice understands; anything else
// is an error naming the property, so typos do not pass silently.
var knownProps = map[string]bool{
	"KAFKA_TOPIC": true, "VALUE_FORMAT": true, "KEY_FORMAT": true, "FORMAT": true,
	"TIMESTAMP": true, "TIMESTAMP_FORMAT": true, "PARTITIONS": true, "REPLICAS": true,
	"WRAP_SINGLE_VALUE": true, "VALUE_DELIMITER": true, "KEY_DELIMITER": true,
	"RETENTION": true, "LATE_TOPIC": true, "ERROR_TOPIC": true, "IDLE_TIMEOUT": true,
	"VALUE_SCHEMA_ID": true, "KEY_SCHEMA_ID": true, "VALUE_AVRO_SCHEMA_FULL_NAME": true,
	"KEY_SCHEMA_FULL_NAME": true, "VALUE_SCHEMA_FULL_NAME": true,
	"KEY_PROTOBUF_NULLABLE_REPRESENTATION": true, "VALUE_PROTOBUF_NULLABLE_REPRESENTATION": true,
	"WINDOW_TYPE": true, "WINDOW_SIZE": true, "RETENTION_MS": true,
	"VALUE_ENVELOPE": true,
}

// PropsOf converts a WITH clause, rejecting unknown names.
func PropsOf(with []parser.Property) (Props, error) {
	p := Props{}
	for _, prop := range with {
		name := strings.ToUpper(prop.Name)
		if !knownProps[name] {
			return nil, posErr(prop.Pos, fmt.Errorf("%w: unknown WITH property %s", ErrInvalid, name))
		}
		p[name] = literalText(prop.Value)
	}
	return p, nil
}

func literalText(l *parser.Literal) string {
	if l == nil {
		return ""
	}
	switch l.Kind {
	case parser.LitString:
		return l.Str
	case parser.LitBool:
		return strconv.FormatBool(l.Bool)
	case parser.LitNull:
		return ""
	}
	return l.Text
}

// PosError is a planning error at a position in the statement.
type PosError = expr.PosError

func posErr(p parser.Pos, err error) error { return &PosError{Pos: p, Err: err} }

// PropError is an error about the value of WITH property Name. The code
// that checks a property's value knows its name but not where the
// statement wrote it; withErr puts the error there.
type PropError struct {
	Name string
	Err  error
}

func (e *PropError) Error() string { return e.Err.Error() }
func (e *PropError) Unwrap() error { return e.Err }

func propErr(name string, err error) error { return &PropError{Name: name, Err: err} }

// withErr positions an error of a statement with WITH clause with: one
// about a property's value at that value's literal, any other (or one
// about a property the clause does not write) at pos.
func withErr(pos parser.Pos, with []parser.Property, err error) error {
	var pe *PropError
	if errors.As(err, &pe) {
		if at, ok := propValuePos(with, pe.Name); ok {
			return posErr(at, err)
		}
	}
	return posErr(pos, err)
}

// propValuePos finds where the clause writes the value of property name:
// its last entry (the one in force), or for KEY_FORMAT and VALUE_FORMAT
// the FORMAT that sets them when they are not written.
func propValuePos(with []parser.Property, name string) (parser.Pos, bool) {
	names := []string{name}
	if name == "KEY_FORMAT" || name == "VALUE_FORMAT" {
		names = append(names, "FORMAT")
	}
	for _, n := range names {
		for i := len(with) - 1; i >= 0; i-- {
			if strings.EqualFold(with[i].Name, n) && with[i].Value != nil {
				return with[i].Value.Pos, true
			}
		}
	}
	return parser.Pos{}, false
}

func (p Props) formats(defKey, defValue string) (key, value string) {
	key, value = defKey, defValue
	if f, ok := p["FORMAT"]; ok {
		key, value = f, f
	}
	if f, ok := p["KEY_FORMAT"]; ok {
		key = f
	}
	if f, ok := p["VALUE_FORMAT"]; ok {
		value = f
	}
	return strings.ToUpper(key), strings.ToUpper(value)
}

// CheckReplace refuses CREATE OR REPLACE of a read-only source, and
// CREATE OR REPLACE SOURCE: a source's definition is fixed once made.
func CheckReplace(cat *Catalog, st *parser.CreateSource) error {
	if !st.OrReplace {
		return nil
	}
	old, err := cat.Lookup(st.Name)
	if st.Source || err == nil && old.ReadOnly {
		kind := strings.ToLower(st.Kind.String())
		return fmt.Errorf("%w: Cannot add %s '%s': CREATE OR REPLACE is not supported on source %ss.", ErrInvalid, kind, strings.ToUpper(st.Name), kind)
	}
	return nil
}

// CheckWritable refuses a statement writing into a source's topic
// (INSERT INTO … SELECT, INSERT … VALUES; values says which) when the
// source is read-only, and INSERT INTO … SELECT into a table, which
// ksqlDB allows only into streams.
func CheckWritable(s *Source, values bool) error {
	kind := strings.ToLower(s.Kind.String())
	switch {
	case !values && s.Kind == parser.KindTable:
		return fmt.Errorf("%w: INSERT INTO can only be used to insert into a stream. %s is a table.", ErrInvalid, s.Name)
	case s.ValueProps.Envelope != "":
		return fmt.Errorf("%w: Cannot insert into %s %s: its records are change events (VALUE_ENVELOPE '%s') the database's connector writes", ErrInvalid, kind, s.Name, s.ValueProps.Envelope)
	case s.ReadOnly && values:
		return fmt.Errorf("%w: Cannot insert values into read-only %s: %s", ErrInvalid, kind, s.Name)
	case s.ReadOnly:
		return fmt.Errorf("%w: Cannot insert into read-only %s: %s", ErrInvalid, kind, s.Name)
	}
	return nil
}

// checkFormatNames refuses FORMAT beside KEY_FORMAT or VALUE_FORMAT:
// FORMAT sets both, so the two would contradict or repeat each other.
func (p Props) checkFormatNames() error {
	if _, ok := p["FORMAT"]; !ok {
		return nil
	}
	for _, side := range []string{"KEY_FORMAT", "VALUE_FORMAT"} {
		if _, ok := p[side]; ok {
			return propErr("FORMAT", fmt.Errorf("%w: Cannot supply both '%s' and 'FORMAT' properties, as 'FORMAT' sets both key and value formats. Either use just 'FORMAT', or use 'KEY_FORMAT' and 'VALUE_FORMAT'.", ErrInvalid, side))
		}
	}
	return nil
}

func (p Props) partitions() (int32, error) {
	s, ok := p["PARTITIONS"]
	if !ok {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, propErr("PARTITIONS", fmt.Errorf("%w: PARTITIONS must be a positive integer, got %q", ErrInvalid, s))
	}
	return int32(n), nil
}

// replicas reads REPLICAS: 0 (absent) means the broker's
// default.replication.factor.
func (p Props) replicas() (int16, error) {
	s, ok := p["REPLICAS"]
	if !ok {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 || n > math.MaxInt16 {
		return 0, propErr("REPLICAS", fmt.Errorf("%w: REPLICAS must be a positive integer, got %q", ErrInvalid, s))
	}
	return int16(n), nil
}

func (p Props) formatProps() (key, value format.Props) {
	if w, ok := p["WRAP_SINGLE_VALUE"]; ok {
		b := strings.EqualFold(w, "true")
		value.WrapSingleValue = &b
	}
	value.Delimiter = p["VALUE_DELIMITER"]
	key.Delimiter = p["KEY_DELIMITER"]
	key.FullName = p["KEY_SCHEMA_FULL_NAME"]
	value.FullName = p["VALUE_SCHEMA_FULL_NAME"]
	if value.FullName == "" {
		value.FullName = p["VALUE_AVRO_SCHEMA_FULL_NAME"]
	}
	for _, side := range []struct {
		p    *format.Props
		prop string
	}{{&key, "KEY_SCHEMA_ID"}, {&value, "VALUE_SCHEMA_ID"}} {
		if id, err := strconv.Atoi(p[side.prop]); err == nil && id > 0 {
			side.p.SchemaID = id // a pinned schema: resolved when planned
		}
	}
	if e := strings.ToUpper(strings.TrimSpace(p["VALUE_ENVELOPE"])); e != format.EnvelopeNone {
		value.Envelope = e
	}
	key.Nullable = strings.ToUpper(p["KEY_PROTOBUF_NULLABLE_REPRESENTATION"])
	value.Nullable = strings.ToUpper(p["VALUE_PROTOBUF_NULLABLE_REPRESENTATION"])
	return key, value
}

// checkEnvelope checks VALUE_ENVELOPE: one of format.Envelopes, over a
// value format that can carry it (JSON), on a source not windowed.
// Reading, the envelope's change events become rows (a CREATE STREAM or
// TABLE with columns); writing, rows become change events, which needs
// the old row of each key: only a table's sink has one (out says the
// statement writes: CREATE … AS SELECT).
func (p Props) checkEnvelope(kind parser.SourceKind, valueFormat string, out bool) error {
	e, ok := p["VALUE_ENVELOPE"]
	if !ok {
		return nil
	}
	e = strings.ToUpper(strings.TrimSpace(e))
	if !slices.Contains(format.Envelopes, e) {
		return propErr("VALUE_ENVELOPE", fmt.Errorf("%w: VALUE_ENVELOPE must be one of %s, not '%s'", ErrInvalid, strings.Join(format.Envelopes, ", "), p["VALUE_ENVELOPE"]))
	}
	if e == format.EnvelopeNone {
		return nil
	}
	if f := strings.ToUpper(valueFormat); f != format.JSON && (f != format.Avro || e != format.EnvelopeDebezium) {
		formats := "'JSON' or 'AVRO'"
		if e != format.EnvelopeDebezium {
			formats = "'JSON'"
		}
		return propErr("VALUE_ENVELOPE", fmt.Errorf("%w: VALUE_ENVELOPE '%s' needs VALUE_FORMAT %s, not '%s'", ErrInvalid, e, formats, valueFormat))
	}
	if _, ok := p["WINDOW_TYPE"]; ok {
		return propErr("VALUE_ENVELOPE", fmt.Errorf("%w: VALUE_ENVELOPE '%s' reads change events of a database's rows, which have no window: remove WINDOW_TYPE", ErrInvalid, e))
	}
	if out && e != format.EnvelopeDebezium {
		return propErr("VALUE_ENVELOPE", fmt.Errorf("%w: VALUE_ENVELOPE '%s' is read, not written: a sink writes 'DEBEZIUM' change events", ErrUnsupported, e))
	}
	if out && kind != parser.KindTable {
		return propErr("VALUE_ENVELOPE", fmt.Errorf("%w: VALUE_ENVELOPE '%s' writes a table's changes: use CREATE TABLE … AS SELECT, a stream has no rows to change", ErrInvalid, e))
	}
	return nil
}

// envelopeRowColumns are the columns of a change-data-capture table
// whose value columns come from the registry: the fields of the
// envelope's after record (Debezium's Value record), less the key
// columns, which the row image holds too.
func envelopeRowColumns(envelope, keys []types.Column) ([]types.Column, error) {
	for _, c := range envelope {
		if !strings.EqualFold(c.Name, "after") || c.Type.Kind != types.Struct {
			continue
		}
		var cols []types.Column
		for _, f := range c.Type.Fields {
			if !slices.ContainsFunc(keys, func(k types.Column) bool { return strings.EqualFold(k.Name, f.Name) }) {
				cols = append(cols, types.Column{Name: f.Name, Type: f.Type})
			}
		}
		return cols, nil
	}
	return nil, fmt.Errorf("%w: the registered value schema is not a Debezium change event: it has no after record", ErrInvalid)
}

// headersType is the type of a HEADERS column: every header of the
// record, in order.
var headersType = types.ArrayOf(types.Type{Kind: types.Struct, Fields: []types.Field{
	{Name: "KEY", Type: types.StringType}, {Name: "VALUE", Type: types.BytesType}}})

// headerColumn checks a HEADERS or HEADER('key') column: HEADERS is an
// ARRAY<STRUCT<KEY STRING, VALUE BYTES>> and a source has one at most;
// HEADER('key') is BYTES.
func headerColumn(name string, t types.Type, key string, earlier []types.Column) (types.Column, error) {
	col := types.Column{Name: name, Type: t, Header: true, HeaderKey: key}
	if key != "" {
		if t.Kind != types.Bytes {
			return col, fmt.Errorf("%w: Invalid type for HEADER('%s') column: expected BYTES, got %s", ErrInvalid, key, t)
		}
		return col, nil
	}
	if !sameHeadersType(t) {
		return col, fmt.Errorf("%w: Invalid type for HEADERS column: expected %s, got %s", ErrInvalid, headersType, t)
	}
	for _, c := range earlier {
		if c.HeaderKey == "" {
			return col, fmt.Errorf("%w: Schema already contains a HEADERS column (%s)", ErrInvalid, c.Name)
		}
	}
	col.Type = headersType // its fields named as the decoder fills them
	return col, nil
}

func sameHeadersType(t types.Type) bool {
	if t.Kind != types.Array || t.Elem.Kind != types.Struct || len(t.Elem.Fields) != 2 {
		return false
	}
	k, v := t.Elem.Fields[0], t.Elem.Fields[1]
	return strings.EqualFold(k.Name, "KEY") && k.Type.Kind == types.String && strings.EqualFold(v.Name, "VALUE") && v.Type.Kind == types.Bytes
}

// mapKeyMessage is ksqlDB's refusal of a key column holding a MAP: map
// keys serialise in no stable order, so equal keys could differ in bytes.
func mapKeyMessage(name string, t types.Type) string {
	return fmt.Sprintf("Map keys, including types that contain maps, are not supported as they may lead to unexpected behavior due to inconsistent serialization. Key column name: `%s`. Column type: %s. See https://github.com/confluentinc/ksql/issues/6621 for more.", name, t)
}

// checkSchemaNames checks KEY_/VALUE_SCHEMA_FULL_NAME: only AVRO and
// PROTOBUF name their schemas, and a name must not be blank.
func (p Props) checkSchemaNames(keyFormat, valueFormat string) error {
	for _, side := range []struct {
		format string
		props  []string
	}{{keyFormat, []string{"KEY_SCHEMA_FULL_NAME"}}, {valueFormat, []string{"VALUE_SCHEMA_FULL_NAME", "VALUE_AVRO_SCHEMA_FULL_NAME"}}} {
		for _, prop := range side.props {
			name, ok := p[prop]
			if !ok {
				continue
			}
			if f := strings.ToUpper(side.format); f != format.Avro && f != format.Protobuf {
				return fmt.Errorf("%w: %s does not support the following configs: [fullSchemaName]", ErrInvalid, f)
			}
			if strings.TrimSpace(name) == "" {
				return fmt.Errorf("%w: fullSchemaName cannot be empty. Format configuration: {fullSchemaName=%s}", ErrInvalid, strings.TrimSpace(name))
			}
		}
	}
	return nil
}

// CreateSource plans CREATE STREAM|TABLE with a column list (not AS
// SELECT) under the default options. The engine creates the topic when it
// does not exist.
func CreateSource(cat *Catalog, st *parser.CreateSource, text string) (*Source, error) {
	return CreateSourceWith(cat, st, text, Options{})
}

// CreateSourceWith is CreateSource under a session's options (its default
// formats).
func CreateSourceWith(cat *Catalog, st *parser.CreateSource, text string, opts Options) (*Source, error) {
	props, err := PropsOf(st.With)
	if err != nil {
		return nil, err
	}
	topic, ok := props["KAFKA_TOPIC"]
	if !ok {
		return nil, posErr(st.Pos, fmt.Errorf("%w: missing required property KAFKA_TOPIC in WITH clause", ErrInvalid))
	}
	if err := props.checkFormatNames(); err != nil {
		return nil, withErr(st.Pos, st.With, err)
	}
	if err := CheckReplace(cat, st); err != nil {
		return nil, posErr(st.Pos, err)
	}
	defKey := opts.DefaultKeyFormat
	if defKey == "" {
		defKey = format.Kafka
	}
	keyFormat, valueFormat := props.formats(defKey, opts.DefaultValueFormat)
	if valueFormat == "" {
		return nil, posErr(st.Pos, fmt.Errorf("%w: Statement is missing the 'VALUE_FORMAT' property from the WITH clause. Either provide one or set a default via the '%s' config.", ErrInvalid, DefaultValueFormatProperty))
	}
	parts, err := props.partitions()
	if err != nil {
		return nil, withErr(st.Pos, st.With, err)
	}
	replicas, err := props.replicas()
	if err != nil {
		return nil, withErr(st.Pos, st.With, err)
	}
	s := &Source{
		Name: st.Name, Kind: st.Kind, Topic: topic, KeyFormat: keyFormat, ValueFormat: valueFormat,
		Partitions: parts, Replicas: replicas, Statement: text, ReadOnly: st.Source,
		TimestampColumn: strings.ToUpper(props["TIMESTAMP"]), TimestampFormat: props["TIMESTAMP_FORMAT"],
	}
	s.KeyProps, s.ValueProps = props.formatProps()
	if err := props.checkSchemaNames(keyFormat, valueFormat); err != nil {
		return nil, posErr(st.Pos, err)
	}
	if err := props.checkDelimiters(keyFormat, valueFormat); err != nil {
		return nil, withErr(st.Pos, st.With, err)
	}
	if err := props.checkEnvelope(st.Kind, valueFormat, false); err != nil {
		return nil, withErr(st.Pos, st.With, err)
	}
	if s.Window, s.WindowSize, err = sourceWindow(props); err != nil {
		return nil, posErr(st.Pos, err)
	}
	seen := map[string]bool{}
	var keys, values, headers []types.Column
	for _, c := range st.Columns {
		name := c.Name
		if seen[strings.ToUpper(name)] {
			return nil, posErr(c.Pos, fmt.Errorf("%w: duplicate column name %s", ErrInvalid, name))
		}
		seen[strings.ToUpper(name)] = true
		if isReserved(name) || s.ValueProps.Envelope != "" && isCDCColumn(name) {
			return nil, posErr(c.Pos, fmt.Errorf("%w: '%s' is a reserved column name. You cannot use it as a name for a column.", ErrInvalid, strings.ToUpper(name)))
		}
		t, err := expr.ResolveType(c.Type)
		if err != nil {
			return nil, posErr(c.Pos, err)
		}
		if c.Key {
			if st.Kind == parser.KindStream && c.PrimaryKey {
				return nil, posErr(c.Pos, fmt.Errorf("%w: column %s is a 'PRIMARY KEY' column: please use 'KEY' for streams. Tables have PRIMARY KEYs, which are unique and NON NULL. Streams have KEYs, which have no uniqueness or NULL constraints", ErrInvalid, name))
			}
			if st.Kind == parser.KindTable && !c.PrimaryKey {
				return nil, posErr(c.Pos, fmt.Errorf("%w: column %s is a 'KEY' column: please use 'PRIMARY KEY' for tables. Tables have PRIMARY KEYs, which are unique and NON NULL. Streams have KEYs, which have no uniqueness or NULL constraints", ErrInvalid, name))
			}
			if containsMap(t) {
				return nil, posErr(c.Pos, fmt.Errorf("%w: %s", ErrInvalid, mapKeyMessage(name, t)))
			}
			keys = append(keys, types.Column{Name: name, Type: t, Key: true})
			continue
		}
		if c.Headers {
			col, err := headerColumn(name, t, c.HeaderKey, headers)
			if err != nil {
				return nil, posErr(c.Pos, err)
			}
			headers = append(headers, col)
			continue
		}
		values = append(values, types.Column{Name: name, Type: t})
	}
	if err := checkSchemaInference(props, keyFormat, valueFormat, len(keys) > 0, len(values) > 0); err != nil {
		return nil, withErr(st.Pos, st.With, err)
	}
	// Columns not declared come from the registry, for its formats.
	if err := cat.useRegistry(keyFormat, &s.KeyProps); err != nil {
		return nil, posErr(st.Pos, err)
	}
	if err := cat.useRegistry(valueFormat, &s.ValueProps); err != nil {
		return nil, posErr(st.Pos, err)
	}
	inferred := len(values) == 0 && format.UsesRegistry(valueFormat)
	if inferred {
		cols, _, found, err := cat.registryColumns(topic, false, valueFormat, props["VALUE_SCHEMA_ID"], &s.ValueProps)
		if err != nil {
			return nil, posErr(st.Pos, err)
		}
		if !found {
			return nil, posErr(st.Pos, fmt.Errorf("%w: Schema for message values on topic '%s' does not exist in the Schema Registry. Subject: %s. Declare the columns, or register the topic's schema first", ErrInvalid, topic, subject(topic, false)))
		}
		values = cols
	}
	if len(keys) == 0 && format.UsesRegistry(keyFormat) {
		cols, _, _, err := cat.registryColumns(topic, true, keyFormat, props["KEY_SCHEMA_ID"], &s.KeyProps)
		if err != nil {
			return nil, posErr(st.Pos, err)
		}
		keys = cols
		if s.ValueProps.Envelope != "" && len(keys) == 1 && keys[0].Type.Kind == types.Struct {
			// A connector's key is a record of the primary key's
			// columns, which the row image holds by name: they are the
			// table's key columns.
			keys = keys[:0:0]
			for _, f := range cols[0].Type.Fields {
				keys = append(keys, types.Column{Name: f.Name, Type: f.Type, Key: true})
			}
		}
	}
	if s.ValueProps.Envelope != "" && inferred {
		if values, err = envelopeRowColumns(values, keys); err != nil {
			return nil, posErr(st.Pos, err)
		}
	}
	if s.ValueProps.WrapSingleValue, err = format.ValueWrapping(valueFormat, len(values), s.ValueProps.WrapSingleValue, opts.WrapSingleValues); err != nil {
		return nil, withErr(st.Pos, st.With, propErr("WRAP_SINGLE_VALUE", fmt.Errorf("%w: %w", ErrInvalid, err)))
	}
	if len(st.Columns) > 0 {
		if err := cat.sourceWriteSchema(topic, true, keyFormat, keys, &s.KeyProps); err != nil {
			return nil, posErr(st.Pos, err)
		}
		// A change-data-capture topic's schema is its connector's.
		if s.ValueProps.Envelope == "" {
			if err := cat.sourceWriteSchema(topic, false, valueFormat, values, &s.ValueProps); err != nil {
				return nil, posErr(st.Pos, err)
			}
		}
	}
	if st.Kind == parser.KindTable && len(keys) == 0 && len(st.Columns) > 0 {
		return nil, posErr(st.Pos, fmt.Errorf("%w: tables require a PRIMARY KEY. Please define the PRIMARY KEY", ErrInvalid))
	}
	s.Schema = types.Schema{Columns: append(append(keys, values...), headers...)}
	if err := validateFormats(s); err != nil {
		return nil, withErr(st.Pos, st.With, err)
	}
	if len(s.Schema.Columns) == 0 {
		// Neither declared nor taken from the registry (the formats cannot
		// infer them); asked once the formats are known to exist.
		return nil, posErr(st.Pos, fmt.Errorf("%w: The statement does not define any columns.", ErrInvalid))
	}
	if err := resolveTimestampColumn(s); err != nil {
		return nil, withErr(st.Pos, st.With, err)
	}
	return s, nil
}

// resolveTimestampColumn checks the TIMESTAMP property's column (if any)
// against the source's schema and spells it as the schema does.
func resolveTimestampColumn(s *Source) error {
	if s.TimestampColumn == "" {
		return nil
	}
	i := s.Schema.Find(s.TimestampColumn)
	if i < 0 {
		return propErr("TIMESTAMP", fmt.Errorf("%w: %s", ErrInvalid, missingTimestampColumn(s.TimestampColumn)))
	}
	switch s.Schema.Columns[i].Type.Kind {
	case types.BigInt, types.Timestamp:
	case types.String:
		if s.TimestampFormat == "" {
			return propErr("TIMESTAMP", fmt.Errorf("%w: TIMESTAMP column %s is a STRING: set TIMESTAMP_FORMAT", ErrInvalid, s.TimestampColumn))
		}
	default:
		return propErr("TIMESTAMP", fmt.Errorf("%w: Timestamp column, `%s`, should be LONG(INT64), TIMESTAMP, or a String with a timestamp_format specified, not %s", ErrInvalid, s.Schema.Columns[i].Name, s.Schema.Columns[i].Type))
	}
	s.TimestampColumn = s.Schema.Columns[i].Name
	return nil
}

// validateFormats checks the formats exist and fit the columns, by
// building the codecs once at plan time. A format refusing the columns
// is reported as ksqlDB does: the format, the schema it was asked to
// carry, and its reason.
func validateFormats(s *Source) error {
	// Sluice's internal formats exist for the topics it writes for itself;
	// a statement naming one gets the answer an unknown name gets.
	for _, f := range []struct{ prop, side, name string }{{"KEY_FORMAT", "Key", s.KeyFormat}, {"VALUE_FORMAT", "Value", s.ValueFormat}} {
		if format.IsInternal(f.name) {
			err := fmt.Errorf("%w: %s (supported formats are %s)", format.ErrUnknownFormat, f.name, strings.Join(format.Supported, ", "))
			return propErr(f.prop, formatSchemaError(f.side, f.name, nil, format.Props{}, err))
		}
	}
	if _, err := format.NewKeyCodec(s.KeyFormat, s.Schema.Keys(), s.KeyProps); err != nil {
		return propErr("KEY_FORMAT", formatSchemaError("Key", s.KeyFormat, s.Schema.Keys(), s.KeyProps, err))
	}
	if _, err := format.NewValueCodec(s.ValueFormat, s.Schema.Values(), s.ValueProps); err != nil {
		return propErr("VALUE_FORMAT", formatSchemaError("Value", s.ValueFormat, s.Schema.Values(), s.ValueProps, err))
	}
	return nil
}

func formatSchemaError(side, f string, cols []types.Column, p format.Props, err error) error {
	var se *format.SchemaError
	if !errors.As(err, &se) {
		return fmt.Errorf("%w: %s format: %v", ErrInvalid, strings.ToLower(side), err)
	}
	var features []string
	if w := p.WrapSingleValue; w != nil {
		features = append(features, map[bool]string{true: "WRAP_SINGLES", false: "UNWRAP_SINGLES"}[*w])
	}
	return fmt.Errorf("%w: %s format does not support schema.\nformat: %s\nschema: Persistence{columns=%s, features=[%s]}\nreason: %s",
		ErrInvalid, side, strings.ToUpper(f), format.ColumnList(cols), strings.Join(features, ", "), se.Reason)
}

// inheritDelimiters gives a query's sink the delimiters of the source it
// reads, as ksqlDB does: a format the statement does not name is the
// source's format, properties and all. Naming the format, or the
// delimiter, starts afresh.
func (p Props) inheritDelimiters(src, sink *Source) {
	_, all := p["FORMAT"]
	for _, side := range []struct {
		formatProp, delimProp string
		srcFormat, sinkFormat string
		srcProps, sinkProps   *format.Props
	}{
		{"KEY_FORMAT", "KEY_DELIMITER", src.KeyFormat, sink.KeyFormat, &src.KeyProps, &sink.KeyProps},
		{"VALUE_FORMAT", "VALUE_DELIMITER", src.ValueFormat, sink.ValueFormat, &src.ValueProps, &sink.ValueProps},
	} {
		_, named := p[side.formatProp]
		_, delim := p[side.delimProp]
		if all || named || delim || !strings.EqualFold(side.srcFormat, side.sinkFormat) {
			continue
		}
		side.sinkProps.Delimiter = side.srcProps.Delimiter
	}
}

// checkDelimiters checks KEY_/VALUE_DELIMITER: only DELIMITED has
// delimiters, and one must be a single character, TAB or SPACE.
func (p Props) checkDelimiters(keyFormat, valueFormat string) error {
	for _, side := range []struct{ format, prop string }{{keyFormat, "KEY_DELIMITER"}, {valueFormat, "VALUE_DELIMITER"}} {
		d, ok := p[side.prop]
		if !ok {
			continue
		}
		if f := strings.ToUpper(side.format); f != format.Delimited {
			return propErr(side.prop, fmt.Errorf("%w: %s does not support the following configs: [delimiter]", ErrInvalid, f))
		}
		if err := format.CheckDelimiter(d); err != nil {
			return propErr(side.prop, fmt.Errorf("%w: Failed to prepare statement: Configuration %s is invalid: %v\nExample valid value: ';'", ErrInvalid, side.prop, err))
		}
	}
	return nil
}

// checkOutputName refuses a SELECT item whose output name is a system
// column's: an alias never may be one, and in a persistent query nor may
// a pseudo column selected bare (its name would collide with the
// sink's own pseudo column).
func checkOutputName(si parser.SelectItem, name string, persistent bool) error {
	if si.Alias != "" {
		if isReserved(si.Alias) {
			return posErr(si.Pos, fmt.Errorf("%w: `%s` is a reserved column name. You cannot use it as an alias for a column.", ErrInvalid, strings.ToUpper(si.Alias)))
		}
		return nil
	}
	// A persistent query's result has these columns of its own (its
	// record's timestamp, partition and offset; a windowed key's bounds),
	// so a value column may not take their names.
	switch n := strings.ToUpper(name); n {
	case "ROWTIME", "ROWPARTITION", "ROWOFFSET", "WINDOWSTART", "WINDOWEND":
		if persistent {
			return posErr(si.Pos, fmt.Errorf("%w: Reserved column name in select: `%s`. Please remove or alias the column.", ErrInvalid, n))
		}
	}
	return nil
}

// isCDCColumn reports the pseudo-column names of a source read through
// a change-data-capture envelope, which its columns may not take.
func isCDCColumn(name string) bool {
	switch strings.ToUpper(name) {
	case exec.ColCDCOp, exec.ColCDCTsMs, exec.ColCDCBefore, exec.ColCDCSource:
		return true
	}
	return false
}

// isReserved reports pseudo-column names users may not declare.
func isReserved(name string) bool {
	switch strings.ToUpper(name) {
	case "ROWTIME", "ROWPARTITION", "ROWOFFSET", "WINDOWSTART", "WINDOWEND":
		return true
	}
	return false
}

// checkSchemaInference applies ksqlDB's rules for KEY_SCHEMA_ID and
// VALUE_SCHEMA_ID: a schema id names the schema a side's columns are
// inferred from, so its format must infer columns from a registered
// schema (AVRO, PROTOBUF, JSON_SR), and a CREATE with a schema id
// declares no columns of that side. ksqlDB refuses both before it asks
// the registry for the schema.
func checkSchemaInference(props Props, keyFormat, valueFormat string, keyCols, valueCols bool) error {
	for _, side := range []struct {
		idProp, formatProp, format string
		declared                   bool
	}{
		{"KEY_SCHEMA_ID", "KEY_FORMAT", keyFormat, keyCols},
		{"VALUE_SCHEMA_ID", "VALUE_FORMAT", valueFormat, valueCols},
	} {
		if _, ok := props[side.idProp]; !ok {
			continue
		}
		if !format.UsesRegistry(side.format) {
			return propErr(side.idProp, fmt.Errorf("%w: %s should support schema inference when %s is provided. Current format is %s.",
				ErrInvalid, side.formatProp, side.idProp, strings.ToUpper(side.format)))
		}
		if side.declared {
			return propErr(side.idProp, fmt.Errorf("%w: Table elements and %s cannot both exist for create statement.", ErrInvalid, side.idProp))
		}
	}
	return nil
}
