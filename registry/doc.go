// Package registry connects Sluice to a Confluent-compatible Schema
// Registry, and serves one when Sluice runs its embedded broker.
//
// Place in the flow: cmd/sluice builds a Client from --schema-registry
// (or starts an Embedded registry beside the embedded broker) and hands it
// to engine/, whose planner resolves the schemas of AVRO sources and
// registers those of AVRO sinks through it; format/'s codecs look up the
// schema ids records carry through it (format.Schemas).
//
// Client wraps franz-go's pkg/sr client and caches schemas by id (a
// registered schema never changes). Embedded serves franz-go's srfake
// registry over HTTP on a listener and keeps every registration in a
// file, so schemas survive a restart as the embedded broker's topics do.
// It answers a Protobuf schema as Confluent's registry does: .proto source
// by default, even when a client registered it serialized (srfake answers
// what was registered), and a base64 FileDescriptorProto with
// ?format=serialized.
//
// Example:
//
//	reg, _ := registry.Serve("127.0.0.1:8081", "sluice-data/schemas.json")
//	defer reg.Close()
//	cl, _ := registry.NewClient(reg.URL())
//	id, _ := cl.Register(ctx, "bookings-value", `{"type":"record","name":"B","fields":[{"name":"ID","type":"long"}]}`)
//	text, _ := cl.SchemaByID(ctx, id)
package registry
