package format

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"
)

// The Confluent wire format, shared by the Schema Registry formats: a
// record's bytes are a zero magic byte, the id of the schema it was
// written with as a 4-byte big-endian integer, and the payload (for
// PROTOBUF, message indexes come first).

const wireMagic = 0

// wireHeaderLen is the magic byte and the schema id.
const wireHeaderLen = 5

// registryTimeout bounds one schema lookup while decoding.
const registryTimeout = 10 * time.Second

// Schemas resolves the schema ids records carry: what a Schema Registry
// client does (engine/ wraps franz-go's sr.Client; tests may serve one).
type Schemas interface {
	// SchemaByID returns the text of the schema registered under id.
	SchemaByID(ctx context.Context, id int) (string, error)
}

func appendWireHeader(b []byte, id int) []byte {
	b = append(b, wireMagic)
	return binary.BigEndian.AppendUint32(b, uint32(id))
}

// readWireHeader splits a record into its schema id and payload.
func readWireHeader(data []byte) (id int, payload []byte, err error) {
	if len(data) < wireHeaderLen {
		return 0, nil, fmt.Errorf("%w: %d bytes, too short for the schema registry wire format (magic byte and schema id)", ErrMalformed, len(data))
	}
	if data[0] != wireMagic {
		return 0, nil, fmt.Errorf("%w: magic byte %d, want %d (not written with a schema registry serializer)", ErrMalformed, data[0], wireMagic)
	}
	return int(binary.BigEndian.Uint32(data[1:wireHeaderLen])), data[wireHeaderLen:], nil
}
