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
	// byID caches schema texts: an id's schema never changes.
	byID sync.Map // int → string
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

// SchemaByID returns the text of the schema registered under id.
func (c *Client) SchemaByID(ctx context.Context, id int) (string, error) {
	if s, ok := c.byID.Load(id); ok {
		return s.(string), nil
	}
	s, err := c.cl.SchemaByID(ctx, id)
	if err != nil {
		return "", fmt.Errorf("schema registry %s: schema id %d: %w", c.url, id, err)
	}
	c.byID.Store(id, s.Schema)
	return s.Schema, nil
}

// Register registers an Avro schema under subject (or finds it there)
// and returns its id. A refusal for compatibility wraps ErrIncompatible.
func (c *Client) Register(ctx context.Context, subject, schema string) (int, error) {
	ss, err := c.cl.CreateSchema(ctx, subject, sr.Schema{Schema: schema, Type: sr.TypeAvro})
	if err != nil {
		var re *sr.ResponseError
		if errors.As(err, &re) && re.StatusCode == http.StatusConflict {
			return 0, fmt.Errorf("schema registry %s: subject %s: %w: %s", c.url, subject, ErrIncompatible, re.Message)
		}
		return 0, fmt.Errorf("schema registry %s: register subject %s: %w", c.url, subject, err)
	}
	c.byID.Store(ss.ID, schema)
	return ss.ID, nil
}

// Latest returns the latest schema of subject and its id; found is false
// when the subject has none.
func (c *Client) Latest(ctx context.Context, subject string) (schema string, id int, found bool, err error) {
	ss, err := c.cl.SchemaByVersion(ctx, subject, -1)
	if err != nil {
		var re *sr.ResponseError
		if errors.As(err, &re) && re.StatusCode == http.StatusNotFound {
			return "", 0, false, nil
		}
		return "", 0, false, fmt.Errorf("schema registry %s: latest schema of %s: %w", c.url, subject, err)
	}
	return ss.Schema.Schema, ss.ID, true, nil
}
