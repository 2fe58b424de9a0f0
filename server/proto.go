package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/ksqlwire"
	"github.com/sluice-sql/sluice/types"
)

// ContentProtobuf is ksqlDB's protobuf media type for /query-stream: one
// JSON array whose header carries the rows' proto3 schema (protoSchema)
// and whose rows carry their values as a protobuf message in base64
// (protobufBytes), without Schema Registry framing.
const ContentProtobuf = "application/vnd.ksql.v1+protobuf"

// protoWriter encodes a query's rows as ContentProtobuf answers them.
type protoWriter struct {
	cols   types.Schema
	values []types.Column // cols without their key marks, as codecs take them
	codec  format.Codec
	schema string
	// fromJSON reads back rows rendered as ksqlDB's JSON (forwarded pull
	// answers); made on first use.
	fromJSON format.Codec
}

func newProtoWriter(cols types.Schema) (*protoWriter, error) {
	values := make([]types.Column, len(cols.Columns))
	for i, c := range cols.Columns {
		values[i] = types.Column{Name: c.Name, Type: c.Type}
	}
	schema, err := format.ProtobufResponseSchema(values)
	if err != nil {
		return nil, err
	}
	codec, err := format.NewValueCodec(format.ProtobufNoSR, values, format.Props{})
	if err != nil {
		return nil, err
	}
	return &protoWriter{cols: cols, values: values, codec: codec, schema: schema}, nil
}

func (p *protoWriter) header(queryID string, markKeys bool) []byte {
	var h ksqlwire.ProtoHeader
	h.Header.QueryID = queryID
	h.Header.Schema = schemaText(p.cols, markKeys)
	h.Header.ProtoSchema = p.schema
	return marshal(h)
}

// row is one row's element: {"row":{"protobufBytes":"…"}}.
func (p *protoWriter) row(vals []any) ([]byte, error) {
	b, err := p.codec.Encode(vals)
	if err != nil {
		return nil, err
	}
	var r struct {
		Row struct {
			ProtobufBytes []byte `json:"protobufBytes"`
		} `json:"row"`
	}
	r.Row.ProtobufBytes = b
	return marshal(r), nil
}

// jsonRowValues reads back a row rendered as ksqlDB's JSON (a forwarded
// pull query's answer) as the columns' values.
func (p *protoWriter) jsonRowValues(row json.RawMessage) ([]any, error) {
	var elems []json.RawMessage
	if err := json.Unmarshal(row, &elems); err != nil {
		return nil, err
	}
	if len(elems) != len(p.cols.Columns) {
		return nil, fmt.Errorf("row has %d values for %d columns", len(elems), len(p.cols.Columns))
	}
	if p.fromJSON == nil {
		c, err := format.NewValueCodec(format.JSON, p.values, format.Props{})
		if err != nil {
			return nil, err
		}
		p.fromJSON = c
	}
	obj := make(map[string]json.RawMessage, len(elems))
	for i, c := range p.values {
		obj[c.Name] = elems[i]
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	vals := make([]any, len(p.values))
	if err := p.fromJSON.Decode(b, vals); err != nil {
		return nil, err
	}
	return vals, nil
}

// writeProtoPull writes a gathered pull query's answer in
// ContentProtobuf: a pull query on a table has no final message.
func writeProtoPull(w http.ResponseWriter, res *pullResult) {
	pw, err := newProtoWriter(res.columns)
	if err != nil {
		genericError(w, http.StatusBadRequest, codeBadRequest, err.Error())
		return
	}
	var buf bytes.Buffer
	buf.WriteByte('[')
	buf.Write(pw.header(res.queryID, true))
	for _, row := range res.rows {
		vals, err := pw.jsonRowValues(row)
		if err == nil {
			var b []byte
			if b, err = pw.row(vals); err == nil {
				buf.WriteString(",\n")
				buf.Write(b)
			}
		}
		if err != nil {
			genericError(w, http.StatusInternalServerError, codeServerError, fmt.Sprintf("encode row in protobuf: %v", err))
			return
		}
	}
	buf.WriteString("]\n")
	if len(res.forwardedTo) > 0 {
		w.Header().Set(ForwardedToHeader, strings.Join(res.forwardedTo, ","))
	}
	w.Header().Set(KeysReadHeader, strconv.FormatInt(res.keysRead.Load(), 10))
	if len(res.parts) > 0 {
		w.Header().Set(PartitionRowsHeader, formatPartitionRows(res.parts))
	}
	w.Header().Set("Content-Type", ContentProtobuf)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf.Bytes())
}

// writeProtoQuery streams a query's rows in ContentProtobuf, ending with
// the final message /query would send.
func (s *Server) writeProtoQuery(w http.ResponseWriter, r *http.Request, p *push) {
	pw, err := newProtoWriter(p.rs.Columns)
	if err != nil {
		genericError(w, http.StatusBadRequest, codeBadRequest, err.Error())
		return
	}
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", ContentProtobuf)
	w.WriteHeader(http.StatusOK)
	send := func(b []byte) error {
		if _, err := w.Write(b); err != nil {
			return err
		}
		return rc.Flush()
	}
	if send(append([]byte{'['}, pw.header(p.rs.QueryID, p.rs.Pull && !p.rs.Scan)...)) != nil {
		return
	}
	limit := s.run(r, p, func(row engine.StreamRow) error {
		b, err := pw.row(row.Cols)
		if err != nil {
			b = marshal(map[string]string{"error": err.Error()})
		}
		return send(append([]byte(",\n"), b...))
	})
	if r.Context().Err() != nil {
		return
	}
	if final := finalMessage(p.rs, limit); final != "" {
		_ = send([]byte(",\n" + final + "]\n"))
		return
	}
	_ = send([]byte("]\n"))
}
