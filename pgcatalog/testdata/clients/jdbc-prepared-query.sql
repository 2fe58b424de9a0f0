-- PostgreSQL JDBC driver 42.7.14 (org.postgresql:postgresql), Java 17, through scripts/pgclients/jdbc (URL ...?ApplicationName=NAME, so the driver sends SET application_name first): a PreparedStatement with one parameter of each type: setLong, setInt, setDouble, setBigDecimal, setString, setBoolean, setBytes, setDate, setTime, setTimestamp, setNull(BIGINT), setNull(VARCHAR); then ResultSetMetaData (getColumnLabel/getColumnType/getColumnTypeName) and getObject/getString per column (the second statement is the driver's own, fetching column metadata)
-- Captured on a real PostgreSQL 15.18 (Debian) through a loopback proxy that decodes the v3 protocol
-- (tools/pgproxy.py; full transcript with ParameterStatus/auth in wire/). Schema: tools/schema.sql
-- (table public.orders with a bigint primary key and every common type, view big_orders).
-- Each statement: comment lines say the protocol (simple Query, or extended Parse with its
-- parameter type OIDs, then Bind with formats and values), and what PostgreSQL answered
-- (RowDescription as name:typeOID[/fmt1 for binary], CommandComplete); then the text exactly.
-- first connection: StartupMessage v3.0 {'user': 'sluice', 'database': 'sluice', 'client_encoding': 'UTF8', 'DateStyle': 'ISO', 'TimeZone': 'Etc/UTC'}
-- protocol: simple (Query)
-- PostgreSQL: CommandComplete SET
SET application_name = 'jdbc-query'
-- next
-- protocol: extended; Parse name='' paramOIDs=[20, 23, 701, 1700, 1043, 16, 17, 0, 0, 0, 20, 1043]
-- client: Bind portal='' stmt='' paramFormats=[1, 1, 1, 1, 0, 0, 1, 0, 0, 0, 1, 0] params=[$1=binary:0000000000000001, $2=binary:00000003, $3=binary:4004000000000000, $4=binary:0002000000000002000c0d48, $5='alice', $6='TRUE', $7=binary:0102, $8='2024-01-02 +00', $9='03:04:05+00', $10='2024-01-02 03:04:05.123+00', $11=NULL, $12=NULL] resultFormats=[]
-- client: Describe P ''
-- client: Execute portal='' maxRows=0
-- PostgreSQL: RowDescription [id:20, qty:23, price:701, amount:1700, customer:25, shipped:16, payload:17, day:1082, at_time:1083, ts:1114, tags:1009, attrs:3802]
-- PostgreSQL: CommandComplete SELECT 1
SELECT * FROM orders WHERE id = $1 OR qty = $2 OR price = $3 OR amount = $4 OR customer = $5 OR shipped = $6 OR payload = $7 OR day = $8 OR at_time = $9 OR ts = $10 OR id = $11 OR customer = $12 ORDER BY id
-- next
-- protocol: extended; Parse name='' paramOIDs=[]
-- client: Bind portal='' stmt='' paramFormats=[] params=[] resultFormats=[]
-- client: Describe P ''
-- client: Execute portal='' maxRows=0
-- PostgreSQL: RowDescription [oid:26, attnum:21, attname:19, relname:19, nspname:19, ?column?:16, ?column?:16]
-- PostgreSQL: CommandComplete SELECT 12
SELECT c.oid, a.attnum, a.attname, c.relname, n.nspname, a.attnotnull OR (t.typtype = 'd' AND t.typnotnull), a.attidentity != '' OR pg_catalog.pg_get_expr(d.adbin, d.adrelid) LIKE '%nextval(%' FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON (c.relnamespace = n.oid) JOIN pg_catalog.pg_attribute a ON (c.oid = a.attrelid) JOIN pg_catalog.pg_type t ON (a.atttypid = t.oid) LEFT JOIN pg_catalog.pg_attrdef d ON (d.adrelid = a.attrelid AND d.adnum = a.attnum) JOIN (SELECT 16386 AS oid , 1 AS attnum UNION ALL SELECT 16386, 2 UNION ALL SELECT 16386, 3 UNION ALL SELECT 16386, 4 UNION ALL SELECT 16386, 5 UNION ALL SELECT 16386, 6 UNION ALL SELECT 16386, 7 UNION ALL SELECT 16386, 8 UNION ALL SELECT 16386, 9 UNION ALL SELECT 16386, 10 UNION ALL SELECT 16386, 11 UNION ALL SELECT 16386, 12) vals ON (c.oid = vals.oid AND a.attnum = vals.attnum) where c.oid in (16386)
