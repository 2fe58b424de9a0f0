-- PostgreSQL JDBC driver 42.7.14 (org.postgresql:postgresql), Java 17, through scripts/pgclients/jdbc (URL ...?ApplicationName=NAME, so the driver sends SET application_name first): DatabaseMetaData.getColumns(null, "public", "%", "%")
-- Captured on a real PostgreSQL 15.18 (Debian) through a loopback proxy that decodes the v3 protocol
-- (tools/pgproxy.py; full transcript with ParameterStatus/auth in wire/). Schema: tools/schema.sql
-- (table public.orders with a bigint primary key and every common type, view big_orders).
-- Each statement: comment lines say the protocol (simple Query, or extended Parse with its
-- parameter type OIDs, then Bind with formats and values), and what PostgreSQL answered
-- (RowDescription as name:typeOID[/fmt1 for binary], CommandComplete); then the text exactly.
-- first connection: StartupMessage v3.0 {'user': 'sluice', 'database': 'sluice', 'client_encoding': 'UTF8', 'DateStyle': 'ISO', 'TimeZone': 'Etc/UTC'}
-- protocol: simple (Query)
-- PostgreSQL: CommandComplete SET
SET application_name = 'jdbc-columns'
-- next
-- protocol: extended; Parse name='' paramOIDs=[]
-- client: Bind portal='' stmt='' paramFormats=[] params=[] resultFormats=[]
-- client: Describe P ''
-- client: Execute portal='' maxRows=0
-- PostgreSQL: RowDescription [current_catalog:19]
-- PostgreSQL: CommandComplete SELECT 1
select current_catalog
-- next
-- protocol: extended; Parse name='' paramOIDs=[1043, 1043, 1043]
-- client: Bind portal='' stmt='' paramFormats=[0, 0, 0] params=[$1='public', $2='%', $3='%'] resultFormats=[]
-- client: Describe P ''
-- client: Execute portal='' maxRows=0
-- PostgreSQL: RowDescription [current_database:19, nspname:19, relname:19, attname:19, atttypid:26, attnotnull:16, atttypmod:23, attlen:21, typtypmod:23, attnum:20, attidentity:18, attgenerated:18, adsrc:25, description:25, typbasetype:26, typtype:18]
-- PostgreSQL: CommandComplete SELECT 14
SELECT * FROM (SELECT current_database() AS current_database, n.nspname,c.relname,a.attname,a.atttypid,a.attnotnull  OR (t.typtype = 'd' AND t.typnotnull) AS attnotnull,a.atttypmod,a.attlen,t.typtypmod,row_number() OVER (PARTITION BY a.attrelid ORDER BY a.attnum) AS attnum, nullif(a.attidentity, '') as attidentity,nullif(a.attgenerated, '') as attgenerated,pg_catalog.pg_get_expr(def.adbin, def.adrelid) AS adsrc,dsc.description,t.typbasetype,t.typtype  FROM pg_catalog.pg_namespace n  JOIN pg_catalog.pg_class c ON (c.relnamespace = n.oid)  JOIN pg_catalog.pg_attribute a ON (a.attrelid=c.oid)  JOIN pg_catalog.pg_type t ON (a.atttypid = t.oid)  LEFT JOIN pg_catalog.pg_attrdef def ON (a.attrelid=def.adrelid AND a.attnum = def.adnum)  LEFT JOIN pg_catalog.pg_description dsc ON (c.oid=dsc.objoid AND a.attnum = dsc.objsubid)  LEFT JOIN pg_catalog.pg_class dc ON (dc.oid=dsc.classoid AND dc.relname='pg_class')  LEFT JOIN pg_catalog.pg_namespace dn ON (dc.relnamespace=dn.oid AND dn.nspname='pg_catalog')  WHERE c.relkind in ('r','p','v','f','m') and a.attnum > 0 AND NOT a.attisdropped  AND n.nspname LIKE $1 AND c.relname LIKE $2) c WHERE true  AND attname LIKE $3 ORDER BY nspname,c.relname,attnum 
