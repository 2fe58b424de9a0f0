package main

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/hamba/avro/v2"

	"github.com/sluice-sql/sluice/registry"
)

// The Avro input of S-q1-avro and P-avro (issue 19): the same bids as the
// JSON topic, record for record (key, timestamp, values), in the
// Confluent wire format a Schema Registry serializer writes: a zero magic
// byte, the schema id as 4 big-endian bytes, then Avro binary. The schema
// is registered under the topic's -value subject in a registry this
// process serves (registry.Serve), the one the sluice processes are given
// with --schema-registry.

// bidAvroSchema is a bid as a Nexmark producer writing Avro would declare
// it: plain (not nullable) fields named as in the JSON bids.
const bidAvroSchema = `{"type":"record","name":"Bid","namespace":"nexmark","fields":[
{"name":"auction","type":"long"},
{"name":"bidder","type":"long"},
{"name":"price","type":"long"},
{"name":"channel","type":"string"},
{"name":"url","type":"string"},
{"name":"dateTime","type":"long"},
{"name":"extra","type":"string"}]}`

// bidAvro is one bid as bidAvroSchema encodes it.
type bidAvro struct {
	Auction  int64  `avro:"auction"`
	Bidder   int64  `avro:"bidder"`
	Price    int64  `avro:"price"`
	Channel  string `avro:"channel"`
	URL      string `avro:"url"`
	DateTime int64  `avro:"dateTime"`
	Extra    string `avro:"extra"`
}

// avroBids is the Avro copy of the bids generate writes.
type avroBids struct {
	reg    *registry.Embedded
	topic  string
	schema avro.Schema
	id     int
}

// newAvroBids serves a registry and registers the bid schema for topic.
func newAvroBids(ctx context.Context, topic string) (*avroBids, error) {
	s, err := avro.Parse(bidAvroSchema)
	if err != nil {
		return nil, err
	}
	reg, err := registry.Serve("127.0.0.1:0", "")
	if err != nil {
		return nil, err
	}
	cl, err := registry.NewClient(reg.URL())
	if err != nil {
		reg.Close()
		return nil, err
	}
	id, err := cl.Register(ctx, topic+"-value", bidAvroSchema)
	if err != nil {
		reg.Close()
		return nil, fmt.Errorf("register the bid schema: %w", err)
	}
	return &avroBids{reg: reg, topic: topic, schema: s, id: id}, nil
}

// encode is a bid's record value in the Confluent wire format.
func (a *avroBids) encode(b bidAvro) ([]byte, error) {
	body, err := avro.Marshal(a.schema, b)
	if err != nil {
		return nil, err
	}
	v := make([]byte, 5, 5+len(body))
	binary.BigEndian.PutUint32(v[1:], uint32(a.id))
	return append(v, body...), nil
}

func (a *avroBids) URL() string { return a.reg.URL() }

func (a *avroBids) Close() { a.reg.Close() }
