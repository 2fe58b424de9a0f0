package testrunner

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/sluice-sql/sluice/registry"
)

// caseTopic is one entry of a case's "topics": the schemas other
// producers registered for the topic before the case runs.
type caseTopic struct {
	Name          string          `json:"name"`
	Format        string          `json:"format"`
	KeyFormat     string          `json:"keyFormat"`
	ValueFormat   string          `json:"valueFormat"`
	KeySchema     json.RawMessage `json:"keySchema"`
	ValueSchema   json.RawMessage `json:"valueSchema"`
	KeySchemaID   int             `json:"keySchemaId"`
	ValueSchemaID int             `json:"valueSchemaId"`
	// References are the files a PROTOBUF schema imports, registered
	// first under their names as subjects.
	KeySchemaReferences   []schemaReference `json:"keySchemaReferences"`
	ValueSchemaReferences []schemaReference `json:"valueSchemaReferences"`
}

type schemaReference struct {
	Name   string `json:"name"`
	Format string `json:"format"`
	Schema string `json:"schema"`
}

// caseRegistry starts a Schema Registry for a case (served on loopback,
// in memory) and registers the schemas its topics declare, under
// <topic>-key and <topic>-value, with their ids when given.
func caseRegistry(c *Case) (*registry.Embedded, *registry.Client, error) {
	reg, err := registry.Serve("127.0.0.1:0", "")
	if err != nil {
		return nil, nil, err
	}
	// ksqlDB's test harness registers into an in-memory client that
	// checks no compatibility: a case may register its sink's schema
	// over a different one its topics give.
	if err := reg.SetGlobalCompatibility(sr.CompatNone); err != nil {
		reg.Close()
		return nil, nil, err
	}
	cl, err := registry.NewClient(reg.URL())
	if err != nil {
		reg.Close()
		return nil, nil, err
	}
	if len(c.Topics) == 0 {
		return reg, cl, nil
	}
	var topics []caseTopic
	if err := json.Unmarshal(c.Topics, &topics); err != nil {
		reg.Close()
		return nil, nil, fmt.Errorf("topics: %w", err)
	}
	// Schemas without an id take the lowest free ones, in order, as a
	// fresh registry would give them (VALUE_SCHEMA_ID=1 names the first
	// topic's own schema, though its references register before it).
	used := map[int]bool{}
	for _, t := range topics {
		used[t.KeySchemaID], used[t.ValueSchemaID] = true, true
	}
	nextID := func() int {
		id := 1
		for used[id] {
			id++
		}
		used[id] = true
		return id
	}
	refID := 10000
	for _, t := range topics {
		for _, side := range []struct {
			format, suffix string
			schema         json.RawMessage
			id             int
			refs           []schemaReference
		}{
			{first(t.KeyFormat, t.Format), "-key", t.KeySchema, t.KeySchemaID, t.KeySchemaReferences},
			{first(t.ValueFormat, t.Format), "-value", t.ValueSchema, t.ValueSchemaID, t.ValueSchemaReferences},
		} {
			typ, ok := registryTypes[strings.ToUpper(first(side.format, "AVRO"))]
			if len(side.schema) == 0 || !ok {
				continue
			}
			text := string(side.schema)
			var s string
			if json.Unmarshal(side.schema, &s) == nil && (typ == sr.TypeProtobuf || json.Valid([]byte(s))) {
				// A schema given as a JSON string: a .proto's text, or a
				// schema's JSON. An Avro primitive ("int") is itself
				// the schema.
				text = s
			}
			sch := sr.Schema{Schema: text, Type: typ}
			for _, ref := range side.refs {
				// Referenced files take ids out of the way of the ids
				// cases pin (VALUE_SCHEMA_ID=1 names the topic's own).
				refID++
				if _, err := reg.SeedSchema(ref.Name, refID, sr.Schema{Schema: ref.Schema, Type: registryTypes[strings.ToUpper(ref.Format)]}); err != nil {
					reg.Close()
					return nil, nil, fmt.Errorf("topic %s: register reference %s: %w", t.Name, ref.Name, err)
				}
				sch.References = append(sch.References, sr.SchemaReference{Name: ref.Name, Subject: ref.Name, Version: 1})
			}
			id := side.id
			if id <= 0 {
				id = nextID()
			}
			if _, err := reg.SeedSchema(t.Name+side.suffix, id, sch); err != nil {
				reg.Close()
				return nil, nil, fmt.Errorf("topic %s: register %s schema: %w", t.Name, strings.TrimPrefix(side.suffix, "-"), err)
			}
		}
	}
	return reg, cl, nil
}

// registryTypes are the registry schema types of the formats whose
// schemas a case's topics give. A topic that names no format gives an
// Avro schema (the files' older form); one that says JSON gives a JSON
// schema.
var registryTypes = map[string]sr.SchemaType{"AVRO": sr.TypeAvro, "PROTOBUF": sr.TypeProtobuf, "JSON_SR": sr.TypeJSON, "JSON": sr.TypeJSON}

func first(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
