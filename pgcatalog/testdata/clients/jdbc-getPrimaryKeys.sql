-- PostgreSQL JDBC driver 42.7.14 (org.postgresql:postgresql), Java 17, through scripts/pgclients/jdbc (URL ...?ApplicationName=NAME, so the driver sends SET application_name first): DatabaseMetaData.getPrimaryKeys(null, "public", "orders")
-- Captured on a real PostgreSQL 15.18 (Debian) through a loopback proxy that decodes the v3 protocol
-- (tools/pgproxy.py; full transcript with ParameterStatus/auth in wire/). Schema: tools/schema.sql
-- (table public.orders with a bigint primary key and every common type, view big_orders).
-- Each statement: comment lines say the protocol (simple Query, or extended Parse with its
-- parameter type OIDs, then Bind with formats and values), and what PostgreSQL answered
-- (RowDescription as name:typeOID[/fmt1 for binary], CommandComplete); then the text exactly.
-- first connection: StartupMessage v3.0 {'user': 'sluice', 'database': 'sluice', 'client_encoding': 'UTF8', 'DateStyle': 'ISO', 'TimeZone': 'Etc/UTC'}
-- protocol: simple (Query)
-- PostgreSQL: CommandComplete SET
SET application_name = 'jdbc-pk'
-- next
-- protocol: extended; Parse name='' paramOIDs=[]
-- client: Bind portal='' stmt='' paramFormats=[] params=[] resultFormats=[]
-- client: Describe P ''
-- client: Execute portal='' maxRows=0
-- PostgreSQL: RowDescription [current_catalog:19]
-- PostgreSQL: CommandComplete SELECT 1
select current_catalog
-- next
-- protocol: extended; Parse name='' paramOIDs=[1043, 1043]
-- client: Bind portal='' stmt='' paramFormats=[0, 0] params=[$1='public', $2='orders'] resultFormats=[]
-- client: Describe P ''
-- client: Execute portal='' maxRows=0
-- PostgreSQL: RowDescription [TABLE_CAT:19, TABLE_SCHEM:19, TABLE_NAME:19, COLUMN_NAME:19, KEY_SEQ:23, PK_NAME:19]
-- PostgreSQL: CommandComplete SELECT 1
SELECT        result.TABLE_CAT AS "TABLE_CAT",        result.TABLE_SCHEM AS "TABLE_SCHEM",        result.TABLE_NAME AS "TABLE_NAME",        result.COLUMN_NAME AS "COLUMN_NAME",        result.KEY_SEQ AS "KEY_SEQ",        result.PK_NAME AS "PK_NAME"FROM      (SELECT current_database() AS TABLE_CAT, n.nspname AS TABLE_SCHEM,   ct.relname AS TABLE_NAME, a.attname AS COLUMN_NAME,   (information_schema._pg_expandarray(con.conkey)).n AS KEY_SEQ, con.conname AS PK_NAME,   information_schema._pg_expandarray(con.conkey) AS KEYS, a.attnum AS A_ATTNUM FROM pg_catalog.pg_constraint con   JOIN pg_catalog.pg_class ct ON (con.conrelid = ct.oid)   JOIN pg_catalog.pg_namespace n ON (ct.relnamespace = n.oid)   JOIN pg_catalog.pg_attribute a ON (a.attrelid = ct.oid) WHERE con.contype = 'p'  AND n.nspname = $1 AND ct.relname = $2 ) result where  result.A_ATTNUM = (result.KEYS).x  ORDER BY result.table_name, result.pk_name, result.key_seq
