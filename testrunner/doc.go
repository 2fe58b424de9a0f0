// Package testrunner reads ksqlDB's test file formats, compares the
// records an engine produced with the expected ones, and prints a report,
// so that ksqlDB's own query-validation tests (QTT) and users'
// ksql-test-runner cases check Sluice's behaviour.
//
// Place in the flow: this package knows nothing of the engine. The glue
// (in `go test` and `sluice test`) loads cases here, runs each case's
// statements on an engine against the embedded broker, produces Inputs,
// collects the sink records as JSON-shaped values (format.ToJSON), and
// hands both sides to CompareOutputs; WriteReport prints the results.
//
//	LoadQTT         a QTT file {"tests": [...]}; `format: [...]` cases are
//	                expanded to one case per format ("name - JSON"), with
//	                {FORMAT} replaced in statements and topics
//	LoadRunnerCase  ksql-test-runner's statements.sql + {"inputs": [...]} +
//	                {"outputs": [...]}; the SQL text is one Statements entry
//	                which the engine splits with the parser
//	EqualJSON       deep equality with numbers compared by value, exactly
//	CompareOutputs  per-topic, in-order comparison → difference lines
//	WriteReport     PASS/FAIL/SKIP lines and "N passed, N failed, N skipped"
//
// Cases the engine cannot run are loaded with Skip set (the report counts
// them): `enabled: false`, format variants other than JSON, DELIMITED,
// KAFKA and NONE, and statements naming AVRO, PROTOBUF, PROTOBUF_NOSR or
// JSON_SR. Record keys and values keep JSON numbers as json.Number, so a
// BIGINT beyond 2^53 compares exactly. Input records without a timestamp
// get 0; output records without one are not checked on time.
//
// Example:
//
//	f, err := testrunner.LoadQTT("tumbling-windows.json")
//	...
//	var results []testrunner.Result
//	for _, c := range f.Cases {
//		r := testrunner.Result{File: filepath.Base(f.Path), Case: c.Name}
//		if c.Skip != "" {
//			r.Status, r.Reason = testrunner.Skipped, c.Skip
//		} else if r.Diff = testrunner.CompareOutputs(c.Outputs, run(c)); len(r.Diff) > 0 {
//			r.Status = testrunner.Failed
//		}
//		results = append(results, r)
//	}
//	failed := testrunner.WriteReport(os.Stdout, results)
package testrunner
