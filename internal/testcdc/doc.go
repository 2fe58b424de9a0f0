// Package testcdc gives tests a real PostgreSQL with logical decoding and a
// real Kafka Connect worker with Debezium's PostgreSQL connector, started by
// the repository's own scripts (scripts/postgres, scripts/connect) and
// stopped when the test ends.
//
// Place in the flow: test-only support for the change-data-capture path,
// PostgreSQL → Debezium (a Kafka Connect source connector) → a Kafka topic
// of change envelopes → a Sluice table. It stands beside internal/testkafka:
// Connect needs a real broker, so the tests run only with
// SLUICE_TEST_CDC=1 and SLUICE_TEST_BROKERS set (Apache Kafka from
// scripts/kafka); otherwise they skip and say why.
//
// Example:
//
//	testcdc.Require(t)
//	pg := testcdc.StartPostgres(t)
//	connect := testcdc.StartConnect(t, testkafka.Brokers(t))
//	pg.Exec(t, `CREATE TABLE accounts (id int PRIMARY KEY, owner text)`)
//	connect.CreateConnector(t, "accounts", pg.DebeziumConfig("accounts", "public.accounts"))
//	connect.AwaitRunning(t, "accounts")
//	pg.Exec(t, `INSERT INTO accounts VALUES (1, 'ann')`)
//	// records arrive in the topic accounts.public.accounts
package testcdc
