-- psql 15.18: \dt
-- Captured on a real PostgreSQL 15.18 (Debian) through a loopback proxy that decodes the v3 protocol
-- (tools/pgproxy.py; full transcript with ParameterStatus/auth in wire/). Schema: tools/schema.sql
-- (table public.orders with a bigint primary key and every common type, view big_orders).
-- Each statement: comment lines say the protocol (simple Query, or extended Parse with its
-- parameter type OIDs, then Bind with formats and values), and what PostgreSQL answered
-- (RowDescription as name:typeOID[/fmt1 for binary], CommandComplete); then the text exactly.
-- first connection: StartupMessage v3.0 {'user': 'sluice', 'database': 'sluice', 'application_name': 'psql-dt'}
-- protocol: simple (Query)
-- PostgreSQL: RowDescription [Schema:19, Name:19, Type:25, Owner:19]
-- PostgreSQL: CommandComplete SELECT 1
SELECT n.nspname as "Schema",
  c.relname as "Name",
  CASE c.relkind WHEN 'r' THEN 'table' WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized view' WHEN 'i' THEN 'index' WHEN 'S' THEN 'sequence' WHEN 't' THEN 'TOAST table' WHEN 'f' THEN 'foreign table' WHEN 'p' THEN 'partitioned table' WHEN 'I' THEN 'partitioned index' END as "Type",
  pg_catalog.pg_get_userbyid(c.relowner) as "Owner"
FROM pg_catalog.pg_class c
     LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
     LEFT JOIN pg_catalog.pg_am am ON am.oid = c.relam
WHERE c.relkind IN ('r','p','')
      AND n.nspname <> 'pg_catalog'
      AND n.nspname !~ '^pg_toast'
      AND n.nspname <> 'information_schema'
  AND pg_catalog.pg_table_is_visible(c.oid)
ORDER BY 1,2;
