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
package pgcatalog
