package testrunner

import (
	"encoding/json"
	"fmt"
	"strings"

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
}

// caseRegistry starts a Schema Registry for a case (served on loopback,
// in memory) and registers the Avro schemas its topics declare, under
// <topic>-key and <topic>-value, with their ids when given.
func caseRegistry(c *Case) (*registry.Embedded, *registry.Client, error) {
	reg, err := registry.Serve("127.0.0.1:0", "")
	if err != nil {
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
	for _, t := range topics {
		for _, side := range []struct {
			format, suffix string
			schema         json.RawMessage
			id             int
		}{
			{first(t.KeyFormat, t.Format), "-key", t.KeySchema, t.KeySchemaID},
			{first(t.ValueFormat, t.Format), "-value", t.ValueSchema, t.ValueSchemaID},
		} {
			if len(side.schema) == 0 || !strings.EqualFold(side.format, "AVRO") {
				continue
			}
			text := string(side.schema)
			var s string
			if json.Unmarshal(side.schema, &s) == nil {
				text = s // a schema given as a JSON string
			}
			if _, err := reg.Seed(t.Name+side.suffix, side.id, text); err != nil {
				reg.Close()
				return nil, nil, fmt.Errorf("topic %s: register %s schema: %w", t.Name, strings.TrimPrefix(side.suffix, "-"), err)
			}
		}
	}
	return reg, cl, nil
}

func first(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
