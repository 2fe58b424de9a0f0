package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sluice-sql/sluice/connect"
	"github.com/sluice-sql/sluice/engine"
)

// Without a Kafka Connect configured, every connector statement fails
// saying how to give one.
func TestConnectorStatementsWithoutConnect(t *testing.T) {
	ctx := context.Background()
	e, err := engine.Open(ctx, engine.Config{Memory: true, Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, sql := range []string{
		"CREATE SOURCE CONNECTOR c WITH ('connector.class'='FileStreamSource')",
		"SHOW CONNECTORS", "SHOW SINK CONNECTORS", "DESCRIBE CONNECTOR c", "DROP CONNECTOR IF EXISTS c", "SHOW CONNECTOR PLUGINS",
	} {
		_, err := e.Execute(ctx, sql)
		if !errors.Is(err, engine.ErrNoConnect) {
			t.Errorf("%s: err = %v, want ErrNoConnect", sql, err)
		}
	}
	want := "no Kafka Connect is configured: give its REST URL with --connect-url (SLUICE_CONNECT_URL, or ksql.connect.url in the server's config file)"
	if engine.ErrNoConnect.Error() != want {
		t.Errorf("ErrNoConnect = %q, want %q", engine.ErrNoConnect, want)
	}
}

// A Connect URL that is no http(s) URL stops the engine from opening.
func TestConnectURLRefused(t *testing.T) {
	_, err := engine.Open(context.Background(), engine.Config{Memory: true, Log: quiet, ConnectURL: "localhost:8083"})
	want := `open engine: Kafka Connect URL "localhost:8083": want http://host:port or https://host:port`
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
}

// The connector entities answer /ksql in ksqlDB's REST shapes, field by
// field.
func TestConnectorWireEntities(t *testing.T) {
	status := connect.Status{Name: "SRC", Type: "source", Connector: connect.State{State: "RUNNING", WorkerID: "127.0.0.1:8083"},
		Tasks: []connect.TaskState{{ID: 0, State: connect.State{State: "FAILED", WorkerID: "127.0.0.1:8083", Trace: "boom"}}}}
	cases := []struct {
		ent  engine.Entity
		want string
	}{
		{&engine.ConnectorInfo{Info: connect.Info{Name: "SRC", Type: "source", Config: map[string]string{"connector.class": "FileStreamSource", "name": "SRC"},
			Tasks: []connect.TaskID{{Connector: "SRC", Task: 0}}}},
			`{"@type":"connector_info","statementText":"S;","info":{"name":"SRC","config":{"connector.class":"FileStreamSource","name":"SRC"},"tasks":[{"connector":"SRC","task":0}],"type":"source"},"warnings":[]}`},
		{&engine.ConnectorList{Connectors: []engine.ConnectorSummary{{Name: "SRC", Type: "source", ClassName: "FileStreamSource", State: "RUNNING (1/1 tasks RUNNING)"}}},
			`{"@type":"connector_list","statementText":"S;","warnings":[],"connectors":[{"name":"SRC","type":"source","className":"FileStreamSource","state":"RUNNING (1/1 tasks RUNNING)"}]}`},
		{&engine.ConnectorList{Connectors: []engine.ConnectorSummary{}, Warnings: []string{"Could not describe connector X: gone"}},
			`{"@type":"connector_list","statementText":"S;","warnings":[{"message":"Could not describe connector X: gone"}],"connectors":[]}`},
		{&engine.ConnectorDescription{Class: "FileStreamSource", Status: status, Topics: []string{}, Sources: []*engine.SourceDescription{}},
			`{"@type":"connector_description","statementText":"S;","connectorClass":"FileStreamSource","status":{"name":"SRC","connector":{"state":"RUNNING","worker_id":"127.0.0.1:8083"},"tasks":[{"id":0,"state":"FAILED","worker_id":"127.0.0.1:8083","trace":"boom"}],"type":"source"},"sources":[],"topics":[],"warnings":[]}`},
		{&engine.ConnectorPluginList{Plugins: []connect.Plugin{{Class: "org.apache.kafka.connect.file.FileStreamSourceConnector", Type: "source", Version: "4.3.1"}}},
			`{"@type":"connector_plugins_list","statementText":"S;","warnings":[],"connectorsPlugins":[{"className":"org.apache.kafka.connect.file.FileStreamSourceConnector","type":"source","version":"4.3.1"}]}`},
		{&engine.DroppedConnector{Name: "SRC"},
			`{"@type":"drop_connector","statementText":"S;","connectorName":"SRC","warnings":[]}`},
		{&engine.StatementWarning{Message: "Connector SRC already exists"},
			`{"@type":"warning_entity","statementText":"S;","message":"Connector SRC already exists","warnings":[]}`},
	}
	for _, c := range cases {
		b, err := json.Marshal(engine.WireEntity("S;", c.ent))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(c.want, string(b)); diff != "" {
			t.Errorf("%T (-want +got):\n%s", c.ent, diff)
		}
	}
}

// A Connect URL where nothing listens fails a connector statement at
// once, saying so.
func TestConnectorStatementUnreachableConnect(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx := context.Background()
	e, err := engine.Open(ctx, engine.Config{Memory: true, Log: quiet, ConnectURL: "http://" + addr})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	start := time.Now()
	_, err = e.Execute(ctx, "SHOW CONNECTORS")
	var ue *connect.UnreachableError
	if !errors.As(err, &ue) || !strings.HasPrefix(err.Error(), "Kafka Connect at http://"+addr+" is not reachable: ") {
		t.Errorf("err = %v (%T), want Kafka Connect at http://%s is not reachable: …", err, err, addr)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
}
