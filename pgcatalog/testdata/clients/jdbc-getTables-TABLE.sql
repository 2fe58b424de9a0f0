-- PostgreSQL JDBC driver 42.7.14 (org.postgresql:postgresql), Java 17, through scripts/pgclients/jdbc (URL ...?ApplicationName=NAME, so the driver sends SET application_name first): DatabaseMetaData.getTables(null, "public", "%", {"TABLE"})
-- Captured on a real PostgreSQL 15.18 (Debian) through a loopback proxy that decodes the v3 protocol
-- (tools/pgproxy.py; full transcript with ParameterStatus/auth in wire/). Schema: tools/schema.sql
-- (table public.orders with a bigint primary key and every common type, view big_orders).
-- Each statement: comment lines say the protocol (simple Query, or extended Parse with its
-- parameter type OIDs, then Bind with formats and values), and what PostgreSQL answered
-- (RowDescription as name:typeOID[/fmt1 for binary], CommandComplete); then the text exactly.
-- first connection: StartupMessage v3.0 {'user': 'sluice', 'database': 'sluice', 'client_encoding': 'UTF8', 'DateStyle': 'ISO', 'TimeZone': 'Etc/UTC'}
-- protocol: simple (Query)
-- PostgreSQL: CommandComplete SET
SET application_name = 'jdbc-tables'
-- next
-- protocol: extended; Parse name='' paramOIDs=[1043, 1043]
-- client: Bind portal='' stmt='' paramFormats=[0, 0] params=[$1='public', $2='%'] resultFormats=[]
-- client: Describe P ''
-- client: Execute portal='' maxRows=0
-- PostgreSQL: RowDescription [TABLE_CAT:19, TABLE_SCHEM:19, TABLE_NAME:19, TABLE_TYPE:25, REMARKS:25, TYPE_CAT:25, TYPE_SCHEM:25, TYPE_NAME:25, SELF_REFERENCING_COL_NAME:25, REF_GENERATION:25]
-- PostgreSQL: CommandComplete SELECT 1
SELECT current_database() AS "TABLE_CAT", n.nspname AS "TABLE_SCHEM", c.relname AS "TABLE_NAME",  CASE n.nspname ~ '^pg_' OR n.nspname = 'information_schema'  WHEN true THEN CASE  WHEN n.nspname = 'pg_catalog' OR n.nspname = 'information_schema' THEN CASE c.relkind   WHEN 'r' THEN 'SYSTEM TABLE'   WHEN 'v' THEN 'SYSTEM VIEW'   WHEN 'i' THEN 'SYSTEM INDEX'   ELSE NULL   END  WHEN n.nspname = 'pg_toast' THEN CASE c.relkind   WHEN 'r' THEN 'SYSTEM TOAST TABLE'   WHEN 'i' THEN 'SYSTEM TOAST INDEX'   ELSE NULL   END  ELSE CASE c.relkind   WHEN 'r' THEN 'TEMPORARY TABLE'   WHEN 'p' THEN 'TEMPORARY TABLE'   WHEN 'i' THEN 'TEMPORARY INDEX'   WHEN 'S' THEN 'TEMPORARY SEQUENCE'   WHEN 'v' THEN 'TEMPORARY VIEW'   ELSE NULL   END  END  WHEN false THEN CASE c.relkind  WHEN 'r' THEN 'TABLE'  WHEN 'p' THEN 'PARTITIONED TABLE'  WHEN 'i' THEN 'INDEX'  WHEN 'P' then 'PARTITIONED INDEX'  WHEN 'S' THEN 'SEQUENCE'  WHEN 'v' THEN 'VIEW'  WHEN 'c' THEN 'TYPE'  WHEN 'f' THEN 'FOREIGN TABLE'  WHEN 'm' THEN 'MATERIALIZED VIEW'  ELSE NULL  END  ELSE NULL  END  AS "TABLE_TYPE", d.description AS "REMARKS",  '' as "TYPE_CAT", '' as "TYPE_SCHEM", '' as "TYPE_NAME", '' AS "SELF_REFERENCING_COL_NAME", '' AS "REF_GENERATION"  FROM pg_catalog.pg_namespace n, pg_catalog.pg_class c  LEFT JOIN pg_catalog.pg_description d ON (c.oid = d.objoid AND d.objsubid = 0  and d.classoid = 'pg_class'::regclass)  WHERE c.relnamespace = n.oid  AND n.nspname LIKE $1 AND c.relname LIKE $2 AND (false  OR ( c.relkind = 'r' AND n.nspname !~ '^pg_' AND n.nspname <> 'information_schema' ) )  ORDER BY "TABLE_TYPE","TABLE_SCHEM","TABLE_NAME" 
