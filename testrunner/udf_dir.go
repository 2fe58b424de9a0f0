package testrunner

// UDFDir is the directory of user-defined functions every case's engine
// loads (engine.Config.UDFDir), as ksqlDB's test runner puts its test-only
// functions on the classpath: `sluice test --udf-dir` sets it, before any
// case runs; testdata/ksqlfunctions is the one ksqlDB's cases need
// (BuildKsqlFunctions). Default "": none.
var UDFDir string
