// Package pgwire is Sluice's Postgres front door: the PostgreSQL v3
// protocol (messages by jackc/pgx's pgproto3, values by its pgtype) in
// `sluice server --pg-listen`, so psql, JDBC, psycopg, Grafana and BI
// tools query Sluice's streams and tables.
//
// Place in the flow: a client connects → startup (SSLRequest answered
// with the server's TLS, or refused when the server has TLS and the
// client does not ask; SCRAM-SHA-256 or cleartext password against the
// server's users; CancelRequest) → a session per connection reads the
// simple and extended query protocols. Each statement is routed:
// DECLARE/FETCH/MOVE/CLOSE are cursors here; what pgcatalog.Session
// Claims (pg_catalog, information_schema, SET of client parameters,
// version(), BEGIN) pgcatalog answers; everything else is Sluice SQL and
// goes to the Backend, which package server implements over the same
// paths as its REST API (/ksql for statements, pull queries routed to
// the instances owning their partitions, push queries). Rows come back
// typed by pgcatalog.TypeOf and written in text or binary per the
// client's Bind. The session's Postgres state is pgcatalog's: the startup
// parameters it checks, the ParameterStatus it reports (at the start and
// after a statement changes one), the transaction status ReadyForQuery
// carries, and the source oid and attnum a query's columns point at.
//
// Parameters ($1, $2, …) in Sluice SQL are typed by what they are
// compared with or inserted into (a column, a literal; a client's
// declared type wins for how the value is sent) and replaced at Execute
// by a literal of that type, a string always one quoted string. A
// parameter where the grammar wants a number rather than an expression
// (LIMIT $1) is a BIGINT; one nothing types is text. A NULL parameter
// is a NULL of its type, so "C" = $1 with NULL is unknown (no row), as
// in Postgres. The same rule reads what the text itself leaves untyped
// (literals.go): a quoted literal meeting another type than STRING is
// that type's Postgres text input ("ID" = '1' is the INTEGER 1), and a
// bare NULL there a NULL of that type — what clients that inline their
// values (pgx's simple protocol, psycopg2, a person at psql) rely on.
//
// Push queries (… EMIT CHANGES) stream their rows as they come, flushed
// row by row, until their LIMIT, a CancelRequest (57014, "canceling
// statement due to user request"; the session goes on) or the client
// going away. A CancelRequest that arrives after the client sent a query
// but before the session started it (psql sends its own on a second
// connection right after Ctrl-C) cancels that query when it starts; one
// to an idle session, nothing sent since ReadyForQuery, does nothing. A
// cursor over one (DECLARE c CURSOR FOR SELECT … EMIT CHANGES) pages it: FETCH n waits for the first row as long as it takes
// (a CancelRequest ends the wait), then returns when n rows arrived, the
// query ended, or no further row came within 100 ms of the last; so it
// returns at least one row unless the query ended. FETCH on a pull
// query's cursor returns at once. A BINARY cursor's rows come in binary
// unless the client's Bind names formats.
//
// Example (what the server does with --pg-listen):
//
//	pg, err := pgwire.New(backend, pgwire.Options{Users: users, TLS: tlsConfig})
//	if err != nil { … }
//	go pg.Serve(ln)
//	…
//	pg.Shutdown(ctx)
package pgwire
