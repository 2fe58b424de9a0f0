package planner

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/types"
)

// SchemaRegistry is what planning needs of a Schema Registry
// (registry.Client): schema lookups for sources declared without columns
// and for the records codecs read, registration for sinks.
type SchemaRegistry interface {
	format.Schemas
	// RegisterSchema registers schema under subject (or finds it) and
	// returns its id.
	RegisterSchema(ctx context.Context, subject string, schema format.Schema) (int, error)
	// LatestSchema returns subject's latest schema and id; found is false
	// when the subject has none.
	LatestSchema(ctx context.Context, subject string) (schema format.Schema, id int, found bool, err error)
}

// registryTimeout bounds one registry request made while planning.
const registryTimeout = 30 * time.Second

// SetRegistry makes the catalog's sources and sinks in the Schema
// Registry formats use reg.
func (c *Catalog) SetRegistry(reg SchemaRegistry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.registry = reg
}

func (c *Catalog) schemaRegistry() SchemaRegistry {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.registry
}

// useRegistry gives a side's format props the catalog's registry when
// its format needs one.
func (c *Catalog) useRegistry(formatName string, p *format.Props) error {
	if !format.UsesRegistry(formatName) {
		return nil
	}
	reg := c.schemaRegistry()
	if reg == nil {
		return fmt.Errorf("%w: format %s needs a Schema Registry: give --schema-registry URL (the embedded broker serves one)", ErrInvalid, formatName)
	}
	p.Registry = reg
	return nil
}

// subject is the registry subject of a topic's key or value (Confluent's
// TopicNameStrategy).
func subject(topic string, key bool) string {
	if key {
		return topic + "-key"
	}
	return topic + "-value"
}

// registryColumns reads a source's columns from the registry: the schema
// pinned by id (KEY_SCHEMA_ID / VALUE_SCHEMA_ID), else the latest of the
// topic's subject; writes to the source use that schema (p). found is
// false when the subject has no schema.
func (c *Catalog) registryColumns(topic string, key bool, formatName, pinned string, p *format.Props) (cols []types.Column, id int, found bool, err error) {
	reg := c.schemaRegistry()
	ctx, cancel := context.WithTimeout(context.Background(), registryTimeout)
	defer cancel()
	var sch format.Schema
	if pinned != "" {
		if id, err = strconv.Atoi(pinned); err != nil || id <= 0 {
			return nil, 0, false, fmt.Errorf("%w: schema id %q is not a positive integer", ErrInvalid, pinned)
		}
		if sch, err = reg.Schema(ctx, id); err != nil {
			return nil, 0, false, err
		}
	} else {
		if sch, id, found, err = reg.LatestSchema(ctx, subject(topic, key)); err != nil || !found {
			return nil, 0, found, err
		}
	}
	unwrapped := !key && p.WrapSingleValue != nil && !*p.WrapSingleValue
	cols, err = format.SchemaColumns(formatName, sch, p.FullName, key, unwrapped)
	if err != nil {
		return nil, 0, false, fmt.Errorf("%w: schema %d of %s: %v", ErrInvalid, id, subject(topic, key), err)
	}
	p.Schema, p.SchemaID, p.References = sch.Text, id, sch.References
	return cols, id, true, nil
}

// registerSink generates and registers the schema a sink's side is
// written with, and keeps it in the side's props.
func (c *Catalog) registerSink(topic string, key bool, formatName string, cols []types.Column, p *format.Props) error {
	if !format.UsesRegistry(formatName) {
		return nil
	}
	if err := c.useRegistry(formatName, p); err != nil {
		return err
	}
	if len(cols) == 0 {
		return nil
	}
	if p.SchemaID > 0 {
		// KEY_/VALUE_SCHEMA_ID pins the schema to write with: the codec
		// fills its fields by name.
		return c.pinnedSchema(p)
	}
	schema, err := format.GenerateSchema(formatName, cols, *p, key)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), registryTimeout)
	defer cancel()
	id, err := c.schemaRegistry().RegisterSchema(ctx, subject(topic, key), schema)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	p.Schema, p.SchemaID, p.References = schema.Text, id, nil
	return nil
}

// sourceWriteSchema gives a source declared with columns in a registry
// format the schema writes to it use (INSERT INTO, INSERT … VALUES): the
// subject's latest, which the codec fills by field name, or, for a
// subject without one (a new topic), the generated schema, registered.
func (c *Catalog) sourceWriteSchema(topic string, key bool, formatName string, cols []types.Column, p *format.Props) error {
	if !format.UsesRegistry(formatName) || len(cols) == 0 {
		return nil
	}
	if p.SchemaID > 0 {
		return c.pinnedSchema(p)
	}
	ctx, cancel := context.WithTimeout(context.Background(), registryTimeout)
	defer cancel()
	schema, id, found, err := c.schemaRegistry().LatestSchema(ctx, subject(topic, key))
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if found && schema.Type == format.RegistryType(formatName) {
		p.Schema, p.SchemaID, p.References = schema.Text, id, schema.References
		return nil
	}
	return c.registerSink(topic, key, formatName, cols, p)
}

// pinnedSchema fetches the schema p.SchemaID names into p.
func (c *Catalog) pinnedSchema(p *format.Props) error {
	ctx, cancel := context.WithTimeout(context.Background(), registryTimeout)
	defer cancel()
	sch, err := c.schemaRegistry().Schema(ctx, p.SchemaID)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	p.Schema, p.References = sch.Text, sch.References
	return nil
}
