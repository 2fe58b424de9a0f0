package server_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/internal/testcdc"
	"github.com/sluice-sql/sluice/internal/testkafka"
)

// TestConnectorEntities drives the connector statements through /ksql
// against a real Kafka Connect worker and checks every answer in
// ksqlDB's REST shape, byte for byte: connector_info, connector_list,
// connector_description (with the stream over the connector's topic),
// warning_entity, drop_connector, and Connect's refusals as ksqlDB
// answers them (Connect's HTTP status, error code × 100).
func TestConnectorEntities(t *testing.T) {
	testcdc.Require(t)
	brokers := testkafka.Brokers(t)
	connectURL := testcdc.StartConnect(t, brokers).URL
	u, err := url.Parse(connectURL)
	if err != nil {
		t.Fatal(err)
	}
	f := startWith(t, brokers, func(c *engine.Config) { c.ConnectURL = connectURL })
	c := clients()["HTTP/1.1"]
	topic := testkafka.Name(t, "lines")
	testkafka.CreateTopic(t, brokers, topic, 1)
	name := strings.ToUpper(testkafka.Name(t, "src"))
	file := filepath.Join(t.TempDir(), "in.txt")
	if err := os.WriteFile(file, []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	post := func(sql string) response {
		t.Helper()
		return f.post(t, c, "/ksql", ksqlBody(sql, nil), true)
	}
	check := func(what string, r response, status int, want string) {
		t.Helper()
		if r.status != status {
			t.Fatalf("%s: status %d, want %d: %s", what, r.status, status, r.body)
		}
		if diff := cmp.Diff(compact(t, want), r.body); diff != "" {
			t.Errorf("%s (-want +got):\n%s", what, diff)
		}
	}

	create := fmt.Sprintf(`CREATE SOURCE CONNECTOR %%s%s WITH ('connector.class'='FileStreamSource', 'file'='%s', 'topic'='%s', 'tasks.max'=1, `+
		`'value.converter'='org.apache.kafka.connect.storage.StringConverter');`, name, file, topic)
	// The statement echoes with its settings masked, as ksqlDB's does.
	masked := "CREATE SOURCE CONNECTOR %s" + name + " WITH ('connector.class'='FileStreamSource', 'file'='[string]', 'topic'='[string]', " +
		"'tasks.max'='[string]', 'value.converter'='[string]');"
	check("create", post(fmt.Sprintf(create, "")), 200, `[{"@type":"connector_info","statementText":`+jsonString(fmt.Sprintf(masked, ""))+`,
		"info":{"name":"`+name+`","config":{"connector.class":"FileStreamSource","file":`+jsonString(file)+`,"name":"`+name+`","tasks.max":"1","topic":"`+topic+`",
		"value.converter":"org.apache.kafka.connect.storage.StringConverter"},"tasks":[],"type":"source"},"warnings":[]}]`)
	check("create if not exists", post(fmt.Sprintf(create, "IF NOT EXISTS ")), 200, `[{"@type":"warning_entity","statementText":`+
		jsonString(fmt.Sprintf(masked, "IF NOT EXISTS "))+`,"message":"Connector `+name+` already exists","warnings":[]}]`)
	check("create again", post(fmt.Sprintf(create, "")), 409, `{"@type":"generic_error","error_code":40900,"message":"Connector `+name+` already exists"}`)

	list := `[{"@type":"connector_list","statementText":"SHOW SOURCE CONNECTORS;","warnings":[],
		"connectors":[{"name":"` + name + `","type":"source","className":"FileStreamSource","state":"RUNNING (1/1 tasks RUNNING)"}]}]`
	testkafka.Await(t, 60*time.Second, "the connector running", func() bool { return post("SHOW SOURCE CONNECTORS;").body == compact(t, list) })

	stream := fmt.Sprintf("CREATE STREAM lines (line VARCHAR) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='KAFKA');", topic)
	if r := post(stream); r.status != 200 {
		t.Fatalf("create stream: %d %s", r.status, r.body)
	}
	worker := u.Host
	describe := `[{"@type":"connector_description","statementText":"DESCRIBE CONNECTOR ` + name + `;","connectorClass":"FileStreamSource",
		"status":{"name":"` + name + `","connector":{"state":"RUNNING","worker_id":"` + worker + `"},"tasks":[{"id":0,"state":"RUNNING","worker_id":"` + worker + `"}],"type":"source"},
		"sources":[{"name":"LINES","windowType":null,"readQueries":[],"writeQueries":[],"fields":[{"name":"LINE","schema":{"type":"STRING","fields":null,"memberSchema":null}}],
			"type":"STREAM","timestamp":"","statistics":"","errorStats":"","extended":false,"keyFormat":"KAFKA","valueFormat":"KAFKA","topic":"` + topic + `",
			"partitions":1,"replication":1,"statement":` + jsonString(strings.TrimSuffix(stream, ";")) + `}],
		"topics":["` + topic + `"],"warnings":[]}]`
	var last string
	testkafka.Await(t, 60*time.Second, "the connector's topic listed", func() bool {
		last = post("DESCRIBE CONNECTOR " + name + ";").body
		return strings.Contains(last, `"topics":["`+topic+`"]`)
	})
	if diff := cmp.Diff(compact(t, describe), last); diff != "" {
		t.Errorf("describe (-want +got):\n%s", diff)
	}

	r := post("SHOW CONNECTOR PLUGINS;")
	var plugins []struct {
		Type    string `json:"@type"`
		Plugins []struct {
			ClassName, Type string
		} `json:"connectorsPlugins"`
	}
	if err := json.Unmarshal([]byte(r.body), &plugins); err != nil || r.status != 200 || len(plugins) != 1 || plugins[0].Type != "connector_plugins_list" {
		t.Fatalf("plugins: %d %s (%v)", r.status, r.body, err)
	}
	found := false
	for _, p := range plugins[0].Plugins {
		found = found || (p.ClassName == "org.apache.kafka.connect.file.FileStreamSourceConnector" && p.Type == "source")
	}
	if !found {
		t.Errorf("plugins lack the FileStream source: %s", r.body)
	}

	check("drop", post("DROP CONNECTOR "+name+";"), 200, `[{"@type":"drop_connector","statementText":"DROP CONNECTOR `+name+`;","connectorName":"`+name+`","warnings":[]}]`)
	check("drop again", post("DROP CONNECTOR "+name+";"), 404, `{"@type":"generic_error","error_code":40400,"message":"Failed to drop connector: Connector `+name+` not found"}`)
	check("drop if exists", post("DROP CONNECTOR IF EXISTS "+name+";"), 200, `[{"@type":"warning_entity","statementText":"DROP CONNECTOR IF EXISTS `+name+`;",
		"message":"Connector '`+name+`' does not exist.","warnings":[]}]`)
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
