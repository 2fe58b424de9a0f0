package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/sluice-sql/sluice/connect"
	"github.com/sluice-sql/sluice/parser"
)

// The connector statements run against Kafka Connect, as ksqlDB's do:
// Connect keeps the connectors, so they are session statements, not
// commands. The instance a statement reaches calls Connect once; the
// command topic never holds them, and a restarted server does not run
// them again (Connect already runs the connector). `sluice run` does run
// a file's statements again on each start: CREATE … CONNECTOR IF NOT
// EXISTS makes such a file re-runnable, as in ksqlDB.

// ErrNoConnect is a connector statement run by an engine with no Kafka
// Connect configured (Config.ConnectURL).
var ErrNoConnect = errors.New("no Kafka Connect is configured: give its REST URL with --connect-url (SLUICE_CONNECT_URL, or ksql.connect.url in the server's config file)")

// ConnectorInfo answers CREATE SOURCE|SINK CONNECTOR: the connector as
// Connect created it.
type ConnectorInfo struct{ Info connect.Info }

// ConnectorList answers SHOW [SOURCE|SINK] CONNECTORS.
type ConnectorList struct {
	Connectors []ConnectorSummary
	// Warnings name connectors Connect could not describe.
	Warnings []string
}

// ConnectorSummary is one connector of a list.
type ConnectorSummary struct {
	Name string
	// Type is "source", "sink" or "unknown", as Connect says.
	Type      string
	ClassName string
	// State is the connector's state; for a RUNNING one, how many of its
	// tasks run, as ksqlDB writes it: "RUNNING (1/1 tasks RUNNING)", or
	// WARNING when it has tasks and none runs.
	State string
}

// ConnectorDescription answers DESCRIBE CONNECTOR.
type ConnectorDescription struct {
	Class  string
	Status connect.Status
	// Topics are the topics the connector has used.
	Topics []string
	// Sources are the streams and tables over those topics.
	Sources  []*SourceDescription
	Warnings []string
}

// ConnectorPluginList answers SHOW CONNECTOR PLUGINS.
type ConnectorPluginList struct{ Plugins []connect.Plugin }

// DroppedConnector answers DROP CONNECTOR.
type DroppedConnector struct{ Name string }

// StatementWarning answers a statement that did nothing and says why, as
// ksqlDB's warning entity: CREATE … CONNECTOR IF NOT EXISTS of an
// existing connector, DROP CONNECTOR IF EXISTS of a missing one.
type StatementWarning struct{ Message string }

func (*ConnectorInfo) entity()        {}
func (*ConnectorList) entity()        {}
func (*ConnectorDescription) entity() {}
func (*ConnectorPluginList) entity()  {}
func (*DroppedConnector) entity()     {}
func (*StatementWarning) entity()     {}

// ConnectorError is Connect's refusal of a connector statement, in
// ksqlDB's words around Connect's: Status is the HTTP status Connect
// answered, which ksqlDB's REST API answers too.
type ConnectorError struct {
	Message string
	Status  int
	// Err is the cause: Connect's *connect.Error, or ErrConnectorExists.
	Err error
}

func (e *ConnectorError) Error() string { return e.Message }

func (e *ConnectorError) Unwrap() error { return e.Err }

// ErrConnectorExists is CREATE … CONNECTOR (without IF NOT EXISTS) of a
// connector Connect already has, whatever the case of its name.
var ErrConnectorExists = errors.New("connector exists")

// connectorErr words err, from a call to Connect, as ksqlDB does: what
// failed, then Connect's message. A Connect that did not answer is
// reported as it is.
func connectorErr(what string, err error) error {
	var ce *connect.Error
	if errors.As(err, &ce) {
		return &ConnectorError{Message: what + ": " + ce.Message, Status: ce.Status, Err: ce}
	}
	return err
}

func (e *Engine) connectClient() (*connect.Client, error) {
	if e.connect == nil {
		return nil, ErrNoConnect
	}
	return e.connect, nil
}

// connectorConfig is the configuration sent to Connect: every WITH entry
// as a string (numbers as written, booleans as true or false), and the
// name, as ksqlDB sends them.
func connectorConfig(st *parser.CreateConnector) map[string]string {
	config := make(map[string]string, len(st.Config)+1)
	for _, p := range st.Config {
		v := p.Value
		switch v.Kind {
		case parser.LitString:
			config[p.Key] = v.Str
		case parser.LitBool:
			config[p.Key] = fmt.Sprint(v.Bool)
		default:
			config[p.Key] = v.Text
		}
	}
	config["name"] = st.Name
	return config
}

// createConnectorStatement is CREATE SOURCE|SINK CONNECTOR.
type createConnectorStatement struct{}

func (createConnectorStatement) execute(ctx context.Context, e *Engine, st *parser.CreateConnector, c call, _ *session) (*Result, error) {
	cl, err := e.connectClient()
	if err != nil {
		return nil, err
	}
	// Connect's names are case-sensitive, ksqlDB's check is not: a
	// connector differing only in case counts as existing.
	names, err := cl.Names(ctx)
	if err != nil {
		return nil, connectorErr("Failed to check for existing connector", err)
	}
	for _, n := range names {
		if strings.EqualFold(n, st.Name) {
			msg := fmt.Sprintf("Connector %s already exists", st.Name)
			if st.IfNotExists {
				return &Result{Statement: c.text, Message: msg, Entity: &StatementWarning{Message: msg}}, nil
			}
			return nil, &ConnectorError{Message: msg, Status: 409, Err: ErrConnectorExists}
		}
	}
	info, err := cl.Create(ctx, st.Name, connectorConfig(st))
	if err != nil {
		return nil, connectorErr("Failed to create connector", err)
	}
	e.log.Info("created connector", "connector", info.Name, "type", info.Type, "connect", cl.URL())
	return &Result{Statement: c.text, Message: "Created connector " + info.Name, Entity: &ConnectorInfo{Info: *info}}, nil
}

// dropConnectorStatement is DROP CONNECTOR.
type dropConnectorStatement struct{}

func (dropConnectorStatement) execute(ctx context.Context, e *Engine, st *parser.DropConnector, c call, _ *session) (*Result, error) {
	cl, err := e.connectClient()
	if err != nil {
		return nil, err
	}
	if err := cl.Delete(ctx, st.Name); err != nil {
		if st.IfExists && connect.IsNotFound(err) {
			msg := fmt.Sprintf("Connector '%s' does not exist.", st.Name)
			return &Result{Statement: c.text, Message: msg, Entity: &StatementWarning{Message: msg}}, nil
		}
		return nil, connectorErr("Failed to drop connector", err)
	}
	e.log.Info("dropped connector", "connector", st.Name, "connect", cl.URL())
	return &Result{Statement: c.text, Message: `Dropped connector "` + st.Name + `"`, Entity: &DroppedConnector{Name: st.Name}}, nil
}

// showConnectorsStatement is SHOW [SOURCE|SINK] CONNECTORS.
type showConnectorsStatement struct{}

func (showConnectorsStatement) execute(ctx context.Context, e *Engine, st *parser.ShowConnectors, c call, _ *session) (*Result, error) {
	cl, err := e.connectClient()
	if err != nil {
		return nil, err
	}
	all, err := cl.List(ctx)
	if err != nil {
		return nil, connectorErr("Failed to list connectors", err)
	}
	list := &ConnectorList{Connectors: []ConnectorSummary{}}
	for name, conn := range all {
		if st.Type != 0 && !strings.EqualFold(conn.Info.Type, st.Type.String()) {
			continue
		}
		list.Connectors = append(list.Connectors, ConnectorSummary{Name: name, Type: conn.Info.Type,
			ClassName: conn.Info.Config["connector.class"], State: summarizeState(conn.Status)})
	}
	sort.Slice(list.Connectors, func(i, j int) bool { return list.Connectors[i].Name < list.Connectors[j].Name })
	return &Result{Statement: c.text, Entity: list}, nil
}

// summarizeState is a connector's state as SHOW CONNECTORS writes it: a
// RUNNING connector with how many of its tasks run, WARNING when none of
// its tasks does; any other state as it is.
func summarizeState(st connect.Status) string {
	if st.Connector.State != "RUNNING" {
		return st.Connector.State
	}
	running := 0
	for _, t := range st.Tasks {
		if t.State.State == "RUNNING" {
			running++
		}
	}
	state := "RUNNING"
	if len(st.Tasks) > 0 && running == 0 {
		state = "WARNING"
	}
	return fmt.Sprintf("%s (%d/%d tasks RUNNING)", state, running, len(st.Tasks))
}

// describeConnectorStatement is DESCRIBE CONNECTOR.
type describeConnectorStatement struct{}

func (describeConnectorStatement) execute(ctx context.Context, e *Engine, st *parser.DescribeConnector, c call, _ *session) (*Result, error) {
	cl, err := e.connectClient()
	if err != nil {
		return nil, err
	}
	status, err := cl.Status(ctx, st.Name)
	if err != nil {
		return nil, connectorErr("Failed to query connector status", err)
	}
	info, err := cl.Info(ctx, st.Name)
	if err != nil {
		return nil, connectorErr("Failed to describe connector", err)
	}
	d := &ConnectorDescription{Class: info.Config["connector.class"], Status: *status, Topics: []string{}, Sources: []*SourceDescription{}}
	topics, err := cl.Topics(ctx, st.Name)
	switch {
	case connect.IsNotFound(err):
		// A Connect older than 2.5 has no topics endpoint: the
		// description goes without topics, as ksqlDB's does.
		e.log.Warn("Kafka Connect lists no topics of connectors", "connector", st.Name, "err", err)
	case err != nil:
		d.Warnings = append(d.Warnings, "Could not list related topics due to error: "+err.Error())
	default:
		d.Topics = topics
	}
	used := map[string]bool{}
	for _, t := range d.Topics {
		used[t] = true
	}
	for _, kind := range []parser.SourceKind{parser.KindStream, parser.KindTable} {
		for _, src := range e.cat.Sources(kind) {
			if used[src.Topic] {
				d.Sources = append(d.Sources, e.sourceDescription(src, false))
			}
		}
	}
	return &Result{Statement: c.text, Entity: d}, nil
}

// showConnectorPluginsStatement is SHOW CONNECTOR PLUGINS.
type showConnectorPluginsStatement struct{}

func (showConnectorPluginsStatement) execute(ctx context.Context, e *Engine, _ *parser.ShowConnectorPlugins, c call, _ *session) (*Result, error) {
	cl, err := e.connectClient()
	if err != nil {
		return nil, err
	}
	plugins, err := cl.Plugins(ctx)
	if err != nil {
		return nil, connectorErr("Failed to list connector plugins", err)
	}
	return &Result{Statement: c.text, Entity: &ConnectorPluginList{Plugins: plugins}}, nil
}
