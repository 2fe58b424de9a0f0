package engine

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sluice-sql/sluice/connect"
	"github.com/sluice-sql/sluice/parser"
)

// The connector's configuration is every WITH entry as Connect takes it:
// strings as they are, numbers as written, booleans as true/false, and
// the name ksqlDB gives it.
func TestConnectorConfigValues(t *testing.T) {
	p, err := parser.ParseOne(`CREATE SINK CONNECTOR out WITH ('connector.class'='FileStreamSink', "tasks.max"=2, 'x'=TRUE, 'y'=-1.50, topics='t')`)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"connector.class": "FileStreamSink", "tasks.max": "2", "x": "true", "y": "-1.50", "TOPICS": "t", "name": "OUT"}
	if diff := cmp.Diff(want, connectorConfig(p.(*parser.CreateConnector))); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
}

// A refusal of Sluice's own (the connector exists) is ErrConnectorExists,
// and no Connect error.
func TestConnectorErrorWithoutConnectError(t *testing.T) {
	var err error = &ConnectorError{Message: "Connector X already exists", Status: 409, Err: ErrConnectorExists}
	var ce *connect.Error
	if errors.As(err, &ce) || connect.IsNotFound(err) || !errors.Is(err, ErrConnectorExists) {
		t.Errorf("errors.As found %v, errors.Is(ErrConnectorExists) %v", ce, errors.Is(err, ErrConnectorExists))
	}
}
