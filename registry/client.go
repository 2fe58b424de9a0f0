package registry

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/sluice-sql/sluice/format"
)

// ErrIncompatible: the registry refused a schema as incompatible with the
// subject's earlier versions.
var ErrIncompatible = errors.New("schema incompatible with the subject's registered versions")

// Client is a Schema Registry client, safe for concurrent use.
type Client struct {
	url string
	cl  *sr.Client
	// byID caches schemas: an id's schema never changes.
	byID sync.Map // int → format.Schema
}

var _ format.Schemas = (*Client)(nil)

// Option configures a Client.
type Option func(*options)

type options struct {
	user, password string
	tls            *tls.Config
}

// BasicAuth authenticates every request with HTTP Basic auth.
func BasicAuth(user, password string) Option {
	return func(o *options) { o.user, o.password = user, password }
}

// TLS sets the TLS configuration for an https registry URL.
func TLS(c *tls.Config) Option { return func(o *options) { o.tls = c } }

// NewClient returns a client of the registry at url.
func NewClient(url string, opts ...Option) (*Client, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	srOpts := []sr.ClientOpt{sr.URLs(url)}
	if o.user != "" {
		srOpts = append(srOpts, sr.BasicAuth(o.user, o.password))
	}
	if o.tls != nil {
		srOpts = append(srOpts, sr.HTTPClient(&http.Client{Transport: &http.Transport{TLSClientConfig: o.tls}}))
	}
	cl, err := sr.NewClient(srOpts...)
	if err != nil {
		return nil, fmt.Errorf("schema registry %s: %w", url, err)
	}
	return &Client{url: url, cl: cl}, nil
}

// URL is the registry's address.
func (c *Client) URL() string { return c.url }

// Schema returns the schema registered under id, with the schemas it
// references (PROTOBUF imports), fetched by subject and version.
func (c *Client) Schema(ctx context.Context, id int) (format.Schema, error) {
	if s, ok := c.byID.Load(id); ok {
		return s.(format.Schema), nil
	}
	s, err := c.cl.SchemaByID(ctx, id)
	if err != nil {
		return format.Schema{}, fmt.Errorf("schema registry %s: schema id %d: %w", c.url, id, lookupErr(err))
	}
	out, err := c.resolve(ctx, s)
	if err != nil {
		return format.Schema{}, fmt.Errorf("schema registry %s: schema id %d: %w", c.url, id, lookupErr(err))
	}
	c.byID.Store(id, out)
	return out, nil
}

// lookupErr tells a schema the registry does not have (404) from a
// registry that cannot answer (anything else), for the codecs: the first
// makes a record malformed, the second makes it wait.
func lookupErr(err error) error {
	var re *sr.ResponseError
	if errors.As(err, &re) && re.StatusCode == http.StatusNotFound {
		return fmt.Errorf("%w: %w", format.ErrSchemaNotFound, err)
	}
	return fmt.Errorf("%w: %w", format.ErrRegistryUnavailable, err)
}

// resolve converts a registry schema, fetching its references (and
// theirs) by subject and version.
func (c *Client) resolve(ctx context.Context, s sr.Schema) (format.Schema, error) {
	out := format.Schema{Type: schemaType(s.Type), Text: s.Schema}
	pending := s.References
	seen := map[string]bool{}
	for len(pending) > 0 {
		ref := pending[0]
		pending = pending[1:]
		if seen[ref.Name] {
			continue
		}
		seen[ref.Name] = true
		rs, err := c.cl.SchemaByVersion(ctx, ref.Subject, ref.Version)
		if err != nil {
			return format.Schema{}, fmt.Errorf("reference %s (subject %s version %d): %w", ref.Name, ref.Subject, ref.Version, err)
		}
		if out.References == nil {
			out.References = map[string]string{}
		}
		out.References[ref.Name] = rs.Schema.Schema
		pending = append(pending, rs.Schema.References...)
	}
	return out, nil
}

// schemaType names a registry schema type as format.Schema does (the API
// leaves AVRO, the default, out).
func schemaType(t sr.SchemaType) string {
	switch t {
	case sr.TypeProtobuf:
		return format.SchemaProtobuf
	case sr.TypeJSON:
		return format.SchemaJSON
	}
	return format.SchemaAvro
}

func srType(t string) sr.SchemaType {
	switch t {
	case format.SchemaProtobuf:
		return sr.TypeProtobuf
	case format.SchemaJSON:
		return sr.TypeJSON
	}
	return sr.TypeAvro
}

// SchemaByID returns the text of the schema registered under id.
func (c *Client) SchemaByID(ctx context.Context, id int) (string, error) {
	s, err := c.Schema(ctx, id)
	return s.Text, err
}

// Register registers an Avro schema under subject (or finds it there)
// and returns its id. A refusal for compatibility wraps ErrIncompatible.
func (c *Client) Register(ctx context.Context, subject, schema string) (int, error) {
	return c.RegisterSchema(ctx, subject, format.Schema{Type: format.SchemaAvro, Text: schema})
}

// RegisterSchema registers a schema of any type under subject (or finds
// it there) and returns its id. A refusal for compatibility wraps
// ErrIncompatible. (Its References are not registered: the schemas Sluice
// generates import only files registries know.)
func (c *Client) RegisterSchema(ctx context.Context, subject string, schema format.Schema) (int, error) {
	ss, err := c.cl.CreateSchema(ctx, subject, sr.Schema{Schema: schema.Text, Type: srType(schema.Type)})
	if err != nil {
		var re *sr.ResponseError
		if errors.As(err, &re) && re.StatusCode == http.StatusConflict {
			return 0, fmt.Errorf("schema registry %s: subject %s: %w: %s", c.url, subject, ErrIncompatible, re.Message)
		}
		return 0, fmt.Errorf("schema registry %s: register subject %s: %w", c.url, subject, err)
	}
	c.byID.Store(ss.ID, format.Schema{Type: schema.Type, Text: schema.Text})
	return ss.ID, nil
}

// Latest returns the text of the latest schema of subject and its id;
// found is false when the subject has none.
func (c *Client) Latest(ctx context.Context, subject string) (schema string, id int, found bool, err error) {
	s, id, found, err := c.LatestSchema(ctx, subject)
	return s.Text, id, found, err
}

// LatestSchema returns the latest schema of subject, with its
// references, and its id; found is false when the subject has none.
func (c *Client) LatestSchema(ctx context.Context, subject string) (schema format.Schema, id int, found bool, err error) {
	ss, err := c.cl.SchemaByVersion(ctx, subject, -1)
	if err != nil {
		var re *sr.ResponseError
		if errors.As(err, &re) && re.StatusCode == http.StatusNotFound {
			return format.Schema{}, 0, false, nil
		}
		return format.Schema{}, 0, false, fmt.Errorf("schema registry %s: latest schema of %s: %w", c.url, subject, err)
	}
	if schema, err = c.resolve(ctx, ss.Schema); err != nil {
		return format.Schema{}, 0, false, fmt.Errorf("schema registry %s: latest schema of %s: %w", c.url, subject, err)
	}
	return schema, ss.ID, true, nil
}

// SubjectIDs returns the schema ids of all of subject's versions (none
// when the registry has no such subject).
func (c *Client) SubjectIDs(ctx context.Context, subject string) ([]int, error) {
	ss, err := c.cl.Schemas(ctx, subject)
	if err != nil {
		var re *sr.ResponseError
		if errors.As(err, &re) && re.StatusCode == http.StatusNotFound {
			return nil, nil
		}
		return nil, fmt.Errorf("schema registry %s: versions of %s: %w", c.url, subject, err)
	}
	ids := make([]int, len(ss))
	for i, s := range ss {
		ids[i] = s.ID
	}
	return ids, nil
}
