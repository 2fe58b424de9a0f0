// Package format serialises the key and value columns of Kafka records.
//
// Place in the flow: planner/ picks a Codec for each side of every source
// and sink from KEY_FORMAT / VALUE_FORMAT (and WRAP_SINGLE_VALUE,
// VALUE_DELIMITER); exec/'s source operator decodes Kafka bytes into row
// columns with it, the sink operator encodes rows back to bytes. Windowed
// sinks wrap the encoded key with EncodeTimeWindowedKey or
// EncodeSessionWindowedKey, in the layout Kafka Streams uses, so ksqlDB and
// Kafka Streams consumers read our output and we read theirs. ToJSON and
// FromJSON convert between Go values (types/doc.go) and JSON-shaped values
// for INSERT VALUES and the test runner.
//
// Formats (names case-insensitive):
//
//	JSON       an object with a field per column, names matched exactly, then
//	           ignoring case; a single key column (or a single value column
//	           with WRAP_SINGLE_VALUE=false) is the bare JSON value
//	KAFKA      one column in Kafka's own serializer encoding: STRING UTF-8,
//	           INT 4 and BIGINT 8 bytes big-endian, DOUBLE IEEE-754
//	           big-endian, BYTES raw; no key columns → nil key
//	DELIMITED  one CSV line (encoding/csv quoting); an empty field is NULL
//	NONE       no columns, no bytes
//	AVRO       the Confluent wire format: magic byte 0, a 4-byte schema id,
//	           Avro binary (hamba/avro); read with the writer's schema from
//	           Props.Registry and matched to columns by field name; written
//	           with Props.Schema under Props.SchemaID
//	PROTOBUF   the wire format with message indexes, then a proto3 message
//	           (protocompile compiles the registered .proto, dynamicpb
//	           reads and writes); unset fields read as proto3 defaults
//	PROTOBUF_NOSR  the bare message of the schema generated from the columns
//	JSON_SR    the wire format around the JSON codec's payload
//
// and one internal value format, which the planner gives the topics Sluice
// writes only for itself (repartition and foreign-key join topics) and
// which no statement may name (IsInternal):
//
//	SLUICE_ROWS  the magic byte 0xB5, then the row in the state stores'
//	             binary encoding (types.AppendValues); a record without the
//	             magic byte is read as the JSON object an older Sluice wrote
//
// Reading JSON is lenient the way ksqlDB's deserializer is: numeric strings
// are read as numbers, numbers and booleans as STRING text, "true"/"false"
// as BOOLEAN; TIMESTAMP is epoch milliseconds (or ISO-8601 text); DATE is
// int32 days and TIME int32 milliseconds of the day. DECIMAL is an exact
// *apd.Decimal: JSON writes it as a number with its scale (3.40), DELIMITED
// as plain text (BigDecimal.toPlainString); KAFKA does not support it.
// DOUBLE is written like Java's Double.toString (125.0, 1.0E7) so that a
// consumer always sees a double.
//
// A change-data-capture envelope (Props.Envelope, VALUE_ENVELOPE) wraps a
// row in a change event: ChangeCodec reads Debezium's events (JSON with or
// without JsonConverter's schema wrapper, AVRO in AvroConverter's Envelope
// record) and Maxwell's (JSON) into a table's columns, by name, with the op, the before image
// and the source block beside them; DebeziumOut writes a table's changes as
// such events. A malformed event wraps ErrMalformed and ErrEnvelope.
//
// Errors wrap ErrUnknownFormat, ErrUnsupported (at codec construction),
// ErrMalformed (Decode: exec counts and skips the record),
// ErrRegistryUnavailable (Decode: the record's schema cannot be fetched now;
// exec reads the record again later) or ErrEncode.
//
// Example:
//
//	cols := []types.Column{{Name: "HOTEL", Type: types.StringType}, {Name: "PRICE", Type: types.DoubleType}}
//	c, _ := format.NewValueCodec("json", cols, format.Props{})
//	b, _ := c.Encode([]any{"Ritz", float64(125)}) // {"HOTEL":"Ritz","PRICE":125.0}
//	row := make([]any, 2)
//	_ = c.Decode([]byte(`{"hotel":"Ritz","price":"99.5"}`), row) // row = ["Ritz", 99.5]
package format
