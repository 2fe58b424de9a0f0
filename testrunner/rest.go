package testrunner

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/planner"
)

// RESTCase is one case of a ksqlDB REST query-validation file: statements
// sent to a running server as a client would (the statements before the
// first SELECT as one /ksql request, each SELECT to /query), inputs
// produced to the broker in between, and the responses (admin entities,
// query headers, rows and final messages), output records or error the
// case expects.
type RESTCase struct {
	Name       string
	Statements []string
	Inputs     []Record
	Outputs    []Record
	// Topics declares topics up front (partitions, schemas), kept raw.
	Topics json.RawMessage
	// Properties are sent with every request, as ksqlDB's test client
	// sets them on its REST client.
	Properties map[string]string
	// Responses are the expected responses, in statement order: each
	// {"admin": {...}}, {"query": [...]} or {"queryProto": [...]}.
	Responses []map[string]any
	// ExpectedError is the error the last request must answer with.
	ExpectedError *RESTError
	// Proto asks for each query again on /query-stream in protobuf
	// (testPullWithProtoFormat); the answers are the queryProto responses.
	Proto bool
	// VerifyOrder compares query rows in order; otherwise as a multiset.
	VerifyOrder bool
	// WaitForPushQuery produces the inputs only once the (single) query
	// has started: its header has arrived.
	WaitForPushQuery bool
	Format           string
	Skip             string
}

// RESTError is the error response a case expects: the error entity's
// type (ksqlDB's class name), a substring of its message, and the HTTP
// status.
type RESTError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
	Status  int    `json:"status"`
}

type rawRESTFile struct {
	Tests []rawRESTCase `json:"tests"`
}

type rawRESTCase struct {
	Name             string           `json:"name"`
	Format           []string         `json:"format"`
	Enabled          *bool            `json:"enabled"`
	Statements       []string         `json:"statements"`
	Topics           json.RawMessage  `json:"topics"`
	Inputs           []rawRecord      `json:"inputs"`
	Outputs          []rawRecord      `json:"outputs"`
	Responses        []map[string]any `json:"responses"`
	ExpectedError    *RESTError       `json:"expectedError"`
	Properties       map[string]any   `json:"properties"`
	TestPullWithProt bool             `json:"testPullWithProtoFormat"`
	InputConditions  *struct {
		WaitForActivePushQuery bool `json:"waitForActivePushQuery"`
	} `json:"inputConditions"`
	OutputConditions *struct {
		VerifyOrder bool `json:"verifyOrder"`
	} `json:"outputConditions"`
}

// RESTFile is one REST query-validation file after format expansion.
type RESTFile struct {
	Path  string
	Cases []RESTCase
}

// IsRESTFile reports whether a test file is a REST query-validation file
// (its cases expect responses or an expectedError) rather than a QTT file
// (outputs or an expectedException).
func IsRESTFile(path string) (bool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return false, err
	}
	var raw struct {
		Tests []map[string]json.RawMessage `json:"tests"`
	}
	if err := decodeStrict(data, &raw); err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	for _, t := range raw.Tests {
		if _, ok := t["responses"]; ok {
			return true, nil
		}
		if _, ok := t["expectedError"]; ok {
			return true, nil
		}
	}
	return false, nil
}

// LoadREST reads a REST query-validation file, expanding `format: [...]`
// cases as LoadQTT does.
func LoadREST(path string) (*RESTFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var raw rawRESTFile
	if err := decodeStrict(data, &raw); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f := &RESTFile{Path: path}
	for i, rc := range raw.Tests {
		base, err := rc.toCase()
		if err != nil {
			return nil, fmt.Errorf("%s: test %d (%q): %w", path, i, rc.Name, err)
		}
		for _, v := range formatVariants(base.Name, rc.Format, base.Statements, base.Topics) {
			c := base
			c.Name, c.Format, c.Statements, c.Topics = v.name, v.format, v.statements, v.topics
			c.Skip = skipReason(rc.Enabled, v.format, c.Statements)
			f.Cases = append(f.Cases, c)
		}
	}
	return f, nil
}

func (rc rawRESTCase) toCase() (RESTCase, error) {
	c := RESTCase{
		Name:          rc.Name,
		Statements:    rc.Statements,
		Topics:        rc.Topics,
		Responses:     rc.Responses,
		ExpectedError: rc.ExpectedError,
		Proto:         rc.TestPullWithProt,
		Properties:    map[string]string{},
	}
	if rc.InputConditions != nil {
		c.WaitForPushQuery = rc.InputConditions.WaitForActivePushQuery
	}
	if rc.OutputConditions != nil {
		c.VerifyOrder = rc.OutputConditions.VerifyOrder
	}
	for k, v := range rc.Properties {
		c.Properties[k] = propertyText(v)
	}
	var err error
	if c.Inputs, err = toRecords(rc.Inputs, true); err != nil {
		return c, fmt.Errorf("inputs: %w", err)
	}
	if c.Outputs, err = toRecords(rc.Outputs, false); err != nil {
		return c, fmt.Errorf("outputs: %w", err)
	}
	return c, nil
}

// serverProperties are the engine properties a REST case's server runs
// with: ksqlDB's semantics where Sluice deliberately differs, queries
// reading their inputs from the start (the inputs are produced before
// the queries that read them), and quick commits so that pull queries see
// the inputs soon. As ksqlDB's REST test server does, it serves pull
// queries that scan a table and scalable push queries (a push query that
// qualifies — auto.offset.reset latest in the case's properties, over a
// persistent query's sink — is served from that query's output).
func serverProperties() map[string]string {
	return map[string]string{
		planner.CompatProperty:        planner.CompatKsqlDB,
		"auto.offset.reset":           "earliest",
		"commit.interval.ms":          "100",
		engine.PushV2EnabledProperty:  "true",
		planner.PullTableScanProperty: "true",
	}
}
