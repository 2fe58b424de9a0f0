// Package testrunner runs ksqlDB's test file formats against Sluice and
// reports the results, so that ksqlDB's own query-validation tests and
// users' ksql-test-runner cases check Sluice's behaviour.
//
// Place in the flow: `sluice test` and `go test` load cases here and run
// them; this package drives the engine (and, for REST cases, a server)
// the way ksqlDB's runners drive ksqlDB.
//
//	LoadQTT         a QTT file {"tests": [...]}; `format: [...]` cases are
//	                expanded to one case per format ("name - JSON"), with
//	                {FORMAT} replaced in statements and topics
//	RunCase         a QTT case on the in-memory engine (real planner,
//	                operators and Badger state, no broker); RunCaseWith
//	                restarts its queries halfway
//	LoadRunnerCase  ksql-test-runner's statements.sql + {"inputs": [...]} +
//	                {"outputs": [...]}
//	LoadREST        a REST query-validation file (cases expecting
//	                "responses" or an "expectedError"; IsRESTFile tells)
//	RunREST         a REST case against its own embedded broker, Schema
//	                Registry and `sluice server` over HTTP, as ksqlDB's
//	                REST runner does: the statements before the first SELECT
//	                as one /ksql request, the inputs produced to the broker,
//	                a wait until the persistent queries committed them, each
//	                SELECT on /query (and on /query-stream in protobuf for
//	                testPullWithProtoFormat), then the output topics read
//	                and every response compared: expected objects name only
//	                the fields they check ("field|startsWith" for a prefix),
//	                query rows compare as a multiset unless
//	                outputConditions.verifyOrder, errors by type, message
//	                substring and HTTP status
//	CompareOutputs  per-topic, in-order comparison → difference lines
//	WriteReport     PASS/FAIL/SKIP lines and "N passed, N failed, N skipped"
//	WriteMarkdown   the same as a report for docs/
//
// Cases disabled upstream (`enabled: false`) and format variants Sluice
// does not implement are loaded with Skip set; the report counts them.
// Record keys and values keep JSON numbers as json.Number, so a BIGINT
// beyond 2^53 compares exactly. Input records without a timestamp get 0;
// output records without one are not checked on time. A JSON input object
// is produced as the file writes it, fields in order. Values compare as
// ksqlDB's ExpectedRecordComparator compares them: an expected field the
// record lacks reads as null, and an expected string names a DECIMAL of
// the same value and scale ("00.00" is 0.00).
//
// Example:
//
//	f, err := testrunner.LoadREST("pull-queries-against-streams.json")
//	...
//	var results []testrunner.Result
//	for i := range f.Cases {
//		results = append(results, testrunner.RunREST(filepath.Base(f.Path), &f.Cases[i]))
//	}
//	failed := testrunner.WriteReport(os.Stdout, results)
package testrunner
