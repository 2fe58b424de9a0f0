-- PostgreSQL JDBC driver 42.7.14 (org.postgresql:postgresql), Java 17, through scripts/pgclients/jdbc (URL ...?ApplicationName=NAME, so the driver sends SET application_name first): DatabaseMetaData.getTypeInfo()
-- Captured on a real PostgreSQL 15.18 (Debian) through a loopback proxy that decodes the v3 protocol
-- (tools/pgproxy.py; full transcript with ParameterStatus/auth in wire/). Schema: tools/schema.sql
-- (table public.orders with a bigint primary key and every common type, view big_orders).
-- Each statement: comment lines say the protocol (simple Query, or extended Parse with its
-- parameter type OIDs, then Bind with formats and values), and what PostgreSQL answered
-- (RowDescription as name:typeOID[/fmt1 for binary], CommandComplete); then the text exactly.
-- first connection: StartupMessage v3.0 {'user': 'sluice', 'database': 'sluice', 'client_encoding': 'UTF8', 'DateStyle': 'ISO', 'TimeZone': 'Etc/UTC'}
-- protocol: simple (Query)
-- PostgreSQL: CommandComplete SET
SET application_name = 'jdbc-typeinfo'
-- next
-- protocol: extended; Parse name='' paramOIDs=[]
-- client: Bind portal='' stmt='' paramFormats=[] params=[] resultFormats=[]
-- client: Describe P ''
-- client: Execute portal='' maxRows=0
-- PostgreSQL: RowDescription [typname:19, oid:26]
-- PostgreSQL: CommandComplete SELECT 405
SELECT t.typname,t.oid FROM pg_catalog.pg_type t JOIN pg_catalog.pg_namespace n ON (t.typnamespace = n.oid)  WHERE n.nspname  != 'pg_toast' AND  (t.typrelid = 0 OR (SELECT c.relkind = 'c' FROM pg_catalog.pg_class c WHERE c.oid = t.typrelid))
-- next
-- protocol: extended; Parse name='' paramOIDs=[]
-- client: Bind portal='' stmt='' paramFormats=[] params=[] resultFormats=[]
-- client: Describe P ''
-- client: Execute portal='' maxRows=0
-- PostgreSQL: RowDescription [is_array:16, typtype:18, typname:19, oid:26]
-- PostgreSQL: CommandComplete SELECT 615
SELECT typinput='pg_catalog.array_in'::regproc as is_array, typtype, typname, pg_type.oid   FROM pg_catalog.pg_type   LEFT JOIN (select ns.oid as nspoid, ns.nspname, r.r           from pg_namespace as ns           join ( select s.r, (current_schemas(false))[s.r] as nspname                    from generate_series(1, array_upper(current_schemas(false), 1)) as s(r) ) as r          using ( nspname )        ) as sp     ON sp.nspoid = typnamespace  ORDER BY sp.r, pg_type.oid DESC
