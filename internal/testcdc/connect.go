package testcdc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// Connect is a Kafka Connect worker (distributed mode, a Connect cluster of
// its own: group and internal topics named per start) started by
// scripts/connect for one test, with the FileStream connectors and
// Debezium's PostgreSQL connector installed. It is stopped when the test
// ends; its internal topics stay on the broker.
type Connect struct {
	// URL is the worker's REST API, http://127.0.0.1:port.
	URL    string
	script *script
	env    []string
	http   *http.Client
}

// StartConnect starts a worker against brokers, or skips the test (see
// Require). settings are extra worker properties, one "key=value" each
// (later ones win), for example "offset.flush.interval.ms=600000".
func StartConnect(t testing.TB, brokers string, settings ...string) *Connect {
	t.Helper()
	Require(t)
	s := newScript(t, "connect", "SLUICE_CONNECT_DIR")
	s.stopAtCleanup(t)
	c := &Connect{script: s, http: &http.Client{Timeout: 30 * time.Second}}
	if len(settings) > 0 {
		c.env = []string{"SLUICE_CONNECT_PROPS=" + strings.Join(settings, "\n")}
	}
	start := time.Now()
	out, err := s.run("", c.env, "start", brokers)
	if err != nil {
		t.Fatalf("scripts/connect start: %v", err)
	}
	c.URL = lastLine(out)
	t.Logf("Kafka Connect at %s, ready in %s", c.URL, time.Since(start).Round(100*time.Millisecond))
	return c
}

// Kill SIGKILLs the worker: a crash, source offsets not yet flushed are lost.
func (c *Connect) Kill(t testing.TB) {
	t.Helper()
	if _, err := c.script.run("", c.env, "kill"); err != nil {
		t.Fatalf("scripts/connect kill: %v", err)
	}
}

// Restart starts the killed worker again, in the same Connect cluster (its
// group, topics and port), and waits until its REST API answers; its
// connectors resume from their last committed offsets.
func (c *Connect) Restart(t testing.TB) {
	t.Helper()
	if _, err := c.script.run("", c.env, "restart"); err != nil {
		t.Fatalf("scripts/connect restart: %v", err)
	}
}

// ConnectorStatus is Connect's GET /connectors/{name}/status.
type ConnectorStatus struct {
	Name      string      `json:"name"`
	Connector StateStatus `json:"connector"`
	Tasks     []TaskState `json:"tasks"`
	Type      string      `json:"type"`
}

// StateStatus is the state of a connector instance.
type StateStatus struct {
	State    string `json:"state"`
	WorkerID string `json:"worker_id"`
	Trace    string `json:"trace,omitempty"`
}

// TaskState is the state of one task of a connector.
type TaskState struct {
	ID int `json:"id"`
	StateStatus
}

// APIError is an answer of Connect's REST API other than 2xx.
type APIError struct {
	Method, Path string
	Status       int
	Body         string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("%s %s: %d %s", e.Method, e.Path, e.Status, strings.TrimSpace(e.Body))
}

// do sends a request to the REST API, decoding a 2xx answer into out (when
// not nil).
func (c *Connect) do(method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("%s %s: %w", method, path, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.URL+path, rd)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s %s: read answer: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return &APIError{Method: method, Path: path, Status: resp.StatusCode, Body: string(b)}
	}
	if out != nil && len(b) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("%s %s: decode %q: %w", method, path, b, err)
		}
	}
	return nil
}

// CreateConnector creates connector name with config (POST /connectors).
func (c *Connect) CreateConnector(t testing.TB, name string, config map[string]string) {
	t.Helper()
	body := map[string]any{"name": name, "config": config}
	if err := c.do(http.MethodPost, "/connectors", body, nil); err != nil {
		t.Fatalf("create connector %s: %v", name, err)
	}
}

// Status returns the connector's status, or an *APIError (404 when Connect
// does not know it yet).
func (c *Connect) Status(name string) (ConnectorStatus, error) {
	var st ConnectorStatus
	err := c.do(http.MethodGet, "/connectors/"+url.PathEscape(name)+"/status", nil, &st)
	return st, err
}

// AwaitRunning waits until the connector and all its tasks (at least one)
// are RUNNING; a FAILED connector or task fails the test at once with
// Connect's stack trace.
func (c *Connect) AwaitRunning(t testing.TB, name string) {
	t.Helper()
	const timeout = 90 * time.Second
	deadline := time.Now().Add(timeout)
	var last string
	for time.Now().Before(deadline) {
		st, err := c.Status(name)
		if err != nil {
			last = err.Error()
		} else {
			last = fmt.Sprintf("connector %s, tasks %v", st.Connector.State, st.Tasks)
			if st.Connector.State == "FAILED" {
				t.Fatalf("connector %s FAILED:\n%s", name, st.Connector.Trace)
			}
			running := len(st.Tasks) > 0 && st.Connector.State == "RUNNING"
			for _, tk := range st.Tasks {
				if tk.State == "FAILED" {
					t.Fatalf("connector %s task %d FAILED:\n%s", name, tk.ID, tk.Trace)
				}
				running = running && tk.State == "RUNNING"
			}
			if running {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("connector %s not RUNNING within %s (last: %s)", name, timeout, last)
}

// RestartTask restarts task id of the connector
// (POST /connectors/{name}/tasks/{id}/restart): Connect stops the task,
// committing its offsets, and starts it again.
func (c *Connect) RestartTask(t testing.TB, name string, id int) {
	t.Helper()
	if err := c.do(http.MethodPost, fmt.Sprintf("/connectors/%s/tasks/%d/restart", url.PathEscape(name), id), nil, nil); err != nil {
		t.Fatalf("restart task %d of %s: %v", id, name, err)
	}
}

// DeleteConnector deletes the connector (DELETE /connectors/{name}).
func (c *Connect) DeleteConnector(t testing.TB, name string) {
	t.Helper()
	if err := c.do(http.MethodDelete, "/connectors/"+url.PathEscape(name), nil, nil); err != nil {
		t.Fatalf("delete connector %s: %v", name, err)
	}
}
