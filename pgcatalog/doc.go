// Package pgcatalog is the Postgres side of Sluice's Postgres front door
// (package pgwire): what a Postgres client asks that is not Sluice's
// dialect — the pg_catalog and information_schema relations psql, JDBC's
// DatabaseMetaData, Grafana and BI tools query, version(),
// current_schema(), SET/SHOW/RESET of client parameters, BEGIN/COMMIT —
// is parsed and answered here, over a snapshot of Sluice's streams and
// tables. It also says how each Sluice type looks to Postgres (TypeOf),
// for the row descriptions pgwire sends.
//
// Place in the flow: pgwire hands every statement text to a Session;
// statements the Session Claims run here, the rest go to the engine as
// Sluice SQL. Nothing here changes the engine's state.
//
// # Parsing
//
// Statements are parsed by PostgreSQL's own parser (pg_query_go, which
// compiles it in with cgo), so what psql or a driver sends reads exactly
// as Postgres reads it, and Split cuts a simple query with Postgres's own
// scanner. A text that parser cannot read — most of Sluice's dialect
// (EMIT CHANGES, SET 'prop'='value', CREATE STREAM) — is never claimed.
//
// # What is claimed
//
// SET, SHOW and RESET of Postgres parameters (settings.go declares them:
// ksqlDB's SHOW TABLES/STREAMS/QUERIES are not Postgres parameters, so
// they reach the engine), BEGIN/START TRANSACTION/COMMIT/ROLLBACK/END
// (accepted; nothing is transactional), DISCARD and DEALLOCATE; and
// SELECTs (with WITH, UNION, subqueries) whose every relation is a catalog
// relation or a WITH query, or that read no relation at all (SELECT 1,
// SELECT version()). A SELECT that names a Sluice source is the engine's.
//
// # The catalog
//
// Each execution builds a snapshot from the Source: every stream and
// table is a relation of schema public, relkind 'r' (a client lists and
// describes either as a table). What kind of source it is shows in its
// description — pg_description, obj_description(), JDBC's REMARKS,
// information_schema's tables list both as BASE TABLE — as "Sluice STREAM
// over topic T" or "Sluice TABLE over topic T". A TABLE's key columns are
// its primary key (an index NAME_pkey, a constraint, attnotnull), which
// psql's \d and JDBC's getPrimaryKeys show; a STREAM's key columns are
// plain columns, as a stream's key may repeat and be NULL. A source's oid
// is a hash of its name into the user oid range, the same in every
// session and query (Session.RelationOID gives it for a RowDescription's
// table oid). The catalog relations themselves (systemrels.go) are listed
// in pg_class and information_schema too, with Postgres 15's columns; the
// ones Sluice has nothing for (triggers, policies, sequences,
// publications, ...) are empty.
//
// # Evaluation
//
// A statement compiles once (Prepare: names, types and parameter types
// resolved, errors with Postgres's SQLSTATE, text and character position)
// into closures over virtual relations, which Execute runs over a fresh
// snapshot: nested-loop joins, grouping, window row numbers, SQL's
// three-valued logic. Result columns are named and typed as Postgres
// names and types them (testdata/queries.sql and the client captures in
// testdata/clients are compared with a real PostgreSQL 15 by
// TestAgainstPostgres). numeric values are computed as float64: the
// catalog has no numeric data of its own.
//
// # What the protocol side uses besides Claims, Prepare and Execute
//
// SetStartupParameter applies the startup packet's parameters;
// Reported gives the GUC_REPORT parameters to send as ParameterStatus
// after authentication (server_version is ServerVersion, "15.0"), and
// Changed those a statement changed since (SET application_name, SET
// TimeZone, RESET ALL, DISCARD ALL), to send before ReadyForQuery;
// InTransaction is ReadyForQuery's status ('T' after BEGIN). RelationOID
// and ColumnOrigin give a RowDescription's table oid and attnum for the
// columns of a Sluice query (the JDBC driver looks them up in
// pg_attribute). SetBackendPID makes pg_backend_pid() agree with
// BackendKeyData; SetSluiceVersion goes into version()'s text.
//
// Example: psql's \dt sends
//
//	SELECT n.nspname as "Schema", c.relname as "Name", ... FROM pg_catalog.pg_class c
//	     LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace ...
//	WHERE c.relkind IN ('r','p','') AND n.nspname <> 'pg_catalog' ...
//	  AND pg_catalog.pg_table_is_visible(c.oid) ORDER BY 1,2;
//
// Claims says yes (only pg_catalog relations), Prepare gives the fields
// Schema name, Name name, Type text, Owner name, and Execute one row per
// Sluice source: public | PAGEVIEWS | table | <user>.
package pgcatalog
