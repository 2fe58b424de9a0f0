-- psql 15.18: \df
-- Captured on a real PostgreSQL 15.18 (Debian) through a loopback proxy that decodes the v3 protocol
-- (tools/pgproxy.py; full transcript with ParameterStatus/auth in wire/). Schema: tools/schema.sql
-- (table public.orders with a bigint primary key and every common type, view big_orders).
-- Each statement: comment lines say the protocol (simple Query, or extended Parse with its
-- parameter type OIDs, then Bind with formats and values), and what PostgreSQL answered
-- (RowDescription as name:typeOID[/fmt1 for binary], CommandComplete); then the text exactly.
-- first connection: StartupMessage v3.0 {'user': 'sluice', 'database': 'sluice', 'application_name': 'psql-df'}
-- protocol: simple (Query)
-- PostgreSQL: RowDescription [Schema:19, Name:19, Result data type:25, Argument data types:25, Type:25]
-- PostgreSQL: CommandComplete SELECT 0
SELECT n.nspname as "Schema",
  p.proname as "Name",
  pg_catalog.pg_get_function_result(p.oid) as "Result data type",
  pg_catalog.pg_get_function_arguments(p.oid) as "Argument data types",
 CASE p.prokind
  WHEN 'a' THEN 'agg'
  WHEN 'w' THEN 'window'
  WHEN 'p' THEN 'proc'
  ELSE 'func'
 END as "Type"
FROM pg_catalog.pg_proc p
     LEFT JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
WHERE pg_catalog.pg_function_is_visible(p.oid)
      AND n.nspname <> 'pg_catalog'
      AND n.nspname <> 'information_schema'
ORDER BY 1, 2, 4;
