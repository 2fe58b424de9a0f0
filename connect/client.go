package connect

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"
)

// DefaultTimeout bounds each request to Connect. Connect itself gives up
// on a request after 90 s; a create or delete answers well within that
// unless the worker is stuck, so 60 s is long enough to wait for a busy
// worker and short enough that a hung one is reported, not waited on.
const DefaultTimeout = 60 * time.Second

// DefaultDialTimeout bounds connecting to Connect: a host that does not
// answer at all is reported after it.
const DefaultDialTimeout = 5 * time.Second

// Client calls one Kafka Connect cluster's REST API.
type Client struct {
	base *url.URL // without user info
	user *url.Userinfo
	http *http.Client
}

// Option configures a Client.
type Option func(*Client)

// WithTimeout bounds each request (default DefaultTimeout).
func WithTimeout(d time.Duration) Option { return func(c *Client) { c.http.Timeout = d } }

// New makes a client of the Connect REST API at rawURL (http or https;
// user info is used for Basic authentication).
func New(rawURL string, opts ...Option) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(rawURL, "/"))
	if err != nil {
		return nil, fmt.Errorf("Kafka Connect URL %q: %w", rawURL, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("Kafka Connect URL %q: want http://host:port or https://host:port", redact(u))
	}
	c := &Client{user: u.User, http: &http.Client{
		Timeout: DefaultTimeout,
		Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: DefaultDialTimeout}).DialContext,
			TLSHandshakeTimeout:   DefaultDialTimeout,
			ResponseHeaderTimeout: DefaultTimeout,
			MaxIdleConnsPerHost:   4,
			IdleConnTimeout:       time.Minute,
		},
	}}
	u.User = nil
	c.base = u
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// URL is the Connect URL without its user info.
func (c *Client) URL() string { return c.base.String() }

// Error is Connect's refusal of a request: its HTTP status and, in its
// own words, the message of its error body ({"error_code":…,"message":…}).
type Error struct {
	Status  int
	Code    int
	Message string
}

func (e *Error) Error() string { return e.Message }

// NotFound reports whether Connect answered 404 (no such connector).
func (e *Error) NotFound() bool { return e.Status == http.StatusNotFound }

// UnreachableError is a request Connect did not answer: nothing listens
// at the URL, the host is unknown, or the answer did not come in time.
type UnreachableError struct {
	URL string
	Err error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("Kafka Connect at %s is not reachable: %v", e.URL, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// IsNotFound reports whether err is Connect's 404.
func IsNotFound(err error) bool {
	var ce *Error
	return errors.As(err, &ce) && ce.NotFound()
}

// Info is a connector's name, configuration, tasks and type, as Connect
// answers a create or GET /connectors/{name}.
type Info struct {
	Name   string            `json:"name"`
	Config map[string]string `json:"config"`
	Tasks  []TaskID          `json:"tasks"`
	// Type is "source", "sink" or "unknown".
	Type string `json:"type"`
}

// TaskID names one task of a connector.
type TaskID struct {
	Connector string `json:"connector"`
	Task      int    `json:"task"`
}

// Status is a connector's state and its tasks' states.
type Status struct {
	Name      string      `json:"name"`
	Connector State       `json:"connector"`
	Tasks     []TaskState `json:"tasks"`
	Type      string      `json:"type"`
}

// State is the state of a connector or a task on a worker: UNASSIGNED,
// RUNNING, PAUSED, STOPPED, FAILED or RESTARTING, with the failure's
// stack trace for FAILED.
type State struct {
	State    string `json:"state"`
	WorkerID string `json:"worker_id"`
	Trace    string `json:"trace,omitempty"`
}

// TaskState is one task's State.
type TaskState struct {
	ID int `json:"id"`
	State
}

// Plugin is a connector class installed on the workers.
type Plugin struct {
	Class   string `json:"class"`
	Type    string `json:"type"`
	Version string `json:"version"`
}

// Connector is one connector of List: its status and info.
type Connector struct {
	Status Status `json:"status"`
	Info   Info   `json:"info"`
}

// Create creates connector name with config (POST /connectors).
func (c *Client) Create(ctx context.Context, name string, config map[string]string) (*Info, error) {
	var info Info
	body := map[string]any{"name": name, "config": config}
	if err := c.do(ctx, http.MethodPost, "/connectors", body, &info); err != nil {
		return nil, err
	}
	return &info, nil
}

// Put creates connector name or replaces its configuration (PUT
// /connectors/{name}/config).
func (c *Client) Put(ctx context.Context, name string, config map[string]string) (*Info, error) {
	var info Info
	if err := c.do(ctx, http.MethodPut, "/connectors/"+url.PathEscape(name)+"/config", config, &info); err != nil {
		return nil, err
	}
	return &info, nil
}

// Names lists the connectors' names, sorted (GET /connectors).
func (c *Client) Names(ctx context.Context) ([]string, error) {
	var names []string
	if err := c.do(ctx, http.MethodGet, "/connectors", nil, &names); err != nil {
		return nil, err
	}
	sort.Strings(names)
	return names, nil
}

// List gives every connector's status and info in one request (GET
// /connectors?expand=status&expand=info), by name.
func (c *Client) List(ctx context.Context) (map[string]Connector, error) {
	out := map[string]Connector{}
	if err := c.do(ctx, http.MethodGet, "/connectors?expand=status&expand=info", nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// Info gives a connector's configuration, tasks and type (GET
// /connectors/{name}).
func (c *Client) Info(ctx context.Context, name string) (*Info, error) {
	var info Info
	if err := c.do(ctx, http.MethodGet, "/connectors/"+url.PathEscape(name), nil, &info); err != nil {
		return nil, err
	}
	return &info, nil
}

// Status gives a connector's and its tasks' states (GET
// /connectors/{name}/status).
func (c *Client) Status(ctx context.Context, name string) (*Status, error) {
	var st Status
	if err := c.do(ctx, http.MethodGet, "/connectors/"+url.PathEscape(name)+"/status", nil, &st); err != nil {
		return nil, err
	}
	return &st, nil
}

// Topics gives the topics a connector has used since it was created or
// its topics were reset (GET /connectors/{name}/topics), sorted.
func (c *Client) Topics(ctx context.Context, name string) ([]string, error) {
	var out map[string]struct {
		Topics []string `json:"topics"`
	}
	if err := c.do(ctx, http.MethodGet, "/connectors/"+url.PathEscape(name)+"/topics", nil, &out); err != nil {
		return nil, err
	}
	topics := append([]string{}, out[name].Topics...)
	sort.Strings(topics)
	return topics, nil
}

// Delete deletes a connector (DELETE /connectors/{name}).
func (c *Client) Delete(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodDelete, "/connectors/"+url.PathEscape(name), nil, nil)
}

// Restart restarts a connector and its tasks (POST
// /connectors/{name}/restart?includeTasks=true).
func (c *Client) Restart(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodPost, "/connectors/"+url.PathEscape(name)+"/restart?includeTasks=true", nil, nil)
}

// Plugins lists the connector plugins installed on the workers (GET
// /connector-plugins).
func (c *Client) Plugins(ctx context.Context) ([]Plugin, error) {
	var out []Plugin
	if err := c.do(ctx, http.MethodGet, "/connector-plugins", nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// do sends one request and decodes a 2xx answer's body into out (when
// not nil); any other status is an *Error in Connect's words.
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encode request to Kafka Connect: %w", err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base.String()+path, body)
	if err != nil {
		return fmt.Errorf("request to Kafka Connect: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.user != nil {
		pw, _ := c.user.Password()
		req.SetBasicAuth(c.user.Username(), pw)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("Kafka Connect at %s: %s %s: %w", c.URL(), method, path, ctx.Err())
		}
		return &UnreachableError{URL: c.URL(), Err: unwrapURLError(err)}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return &UnreachableError{URL: c.URL(), Err: fmt.Errorf("reading the answer to %s %s: %w", method, path, err)}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return answerError(resp.StatusCode, data)
	}
	if out == nil || len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("Kafka Connect's answer to %s %s: %w", method, path, err)
	}
	return nil
}

// answerError reads Connect's error body; an answer that is not one
// (a proxy's page) is reported with its status and its start.
func answerError(status int, data []byte) *Error {
	var body struct {
		Code    int    `json:"error_code"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(data, &body); err == nil && body.Message != "" {
		return &Error{Status: status, Code: body.Code, Message: body.Message}
	}
	text := strings.TrimSpace(string(data))
	if len(text) > 200 {
		text = text[:200] + "…"
	}
	msg := fmt.Sprintf("Kafka Connect answered %d %s", status, http.StatusText(status))
	if text != "" {
		msg += ": " + text
	}
	return &Error{Status: status, Code: status, Message: msg}
}

// unwrapURLError drops net/http's `Get "url":` prefix, which would repeat
// the URL (and, for a URL with user info, could show it).
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		if ue.Timeout() {
			return fmt.Errorf("no answer within the timeout: %w", ue.Err)
		}
		return ue.Err
	}
	return err
}

func redact(u *url.URL) string {
	if u.User == nil {
		return u.String()
	}
	cp := *u
	cp.User = nil
	return cp.String()
}
