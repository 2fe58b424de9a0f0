package format

import (
	"fmt"
	"strings"
)

// Wrapping says how a format may write a value of one column: wrapped in
// a record or object of one field (WRAP_SINGLE_VALUE=true), or bare
// (false), as ksqlDB's formats declare their WRAP_SINGLES and
// UNWRAP_SINGLES features.
type Wrapping struct {
	Wrap, Unwrap bool
}

// WrappingOf is the Wrapping of format name. PROTOBUF_NOSR, which ksqlDB
// can also write bare, is written wrapped only here.
func WrappingOf(name string) Wrapping {
	switch strings.ToUpper(name) {
	case JSON, JSONSR, Avro:
		return Wrapping{Wrap: true, Unwrap: true}
	case Protobuf, ProtobufNoSR:
		return Wrapping{Wrap: true}
	case Delimited, Kafka:
		return Wrapping{Unwrap: true}
	}
	return Wrapping{}
}

// ValueWrapping settles a value's WRAP_SINGLE_VALUE by ksqlDB's rule:
// one the statement sets (explicit) must be one the format supports, and
// is refused on a value of other than one column; otherwise a value of
// one column takes the configured default (ksql.persistence.wrap.single.values,
// nil when unset) where the format supports it, and anything else keeps
// the format's own default (nil).
func ValueWrapping(valueFormat string, columns int, explicit, configured *bool) (*bool, error) {
	w := WrappingOf(valueFormat)
	if explicit != nil {
		if *explicit && !w.Wrap || !*explicit && !w.Unwrap {
			return nil, fmt.Errorf("%w: Format '%s' does not support 'WRAP_SINGLE_VALUE' set to '%t'.", ErrUnsupported, strings.ToUpper(valueFormat), *explicit)
		}
		if columns != 1 {
			return nil, fmt.Errorf("%w: 'WRAP_SINGLE_VALUE' is only valid for single-field value schemas", ErrUnsupported)
		}
		return explicit, nil
	}
	if columns != 1 || configured == nil {
		return nil, nil
	}
	if *configured && !w.Wrap || !*configured && !w.Unwrap {
		return nil, nil
	}
	v := *configured
	return &v, nil
}
