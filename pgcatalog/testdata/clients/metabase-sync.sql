-- Metabase's PostgreSQL driver sync (metabase/metabase src/metabase/driver/postgres.clj, read with the
-- search tools; Metabase itself is not installed here). NOT captured from a live Metabase: the first
-- two texts are string literals in its source (exact); the rest is rendered by hand from its HoneySQL
-- maps ({:dialect :ansi}, so no identifier quoting; :inline strings become literals) and may differ in
-- spacing/parenthesisation from what Metabase sends. Metabase connects with the PostgreSQL JDBC driver
-- (see jdbc-*.sql for what the driver itself sends on connect and for DatabaseMetaData) and sends these
-- as PreparedStatements (extended protocol, no parameters unless noted).
-- Its sync also calls DatabaseMetaData (getSchemas etc. as in jdbc-getSchemas.sql) and, for
-- privileges, queries has_table_privilege-style checks (not transcribed).
-- next
-- db-default-timezone (exact):
show timezone;
-- next
-- enum types, before syncing fields (exact):
SELECT nspname, typname FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace WHERE t.oid IN (SELECT DISTINCT enumtypid FROM pg_enum e)
-- next
-- describe-database: the tables of the syncable schemas (rendered by hand; schemas as $n parameters
-- of type varchar, e.g. $1 = 'public'):
-- (added for pgcatalog's test) protocol: extended; Parse name='' paramOIDs=[1043]
-- (added for pgcatalog's test) client: Bind portal='' stmt='' params=[$1='public']
SELECT n.nspname AS schema, c.relname AS name, CASE c.relkind WHEN 'r' THEN 'TABLE' WHEN 'p' THEN 'PARTITIONED TABLE' WHEN 'v' THEN 'VIEW' WHEN 'f' THEN 'FOREIGN TABLE' WHEN 'm' THEN 'MATERIALIZED VIEW' ELSE NULL END AS type, d.description AS description, stat.n_live_tup AS estimated_row_count FROM pg_catalog.pg_class AS c INNER JOIN pg_catalog.pg_namespace AS n ON c.relnamespace = n.oid LEFT JOIN pg_catalog.pg_description AS d ON (c.oid = d.objoid) AND (d.objsubid = 0) AND (d.classoid = 'pg_class'::regclass) LEFT JOIN pg_stat_user_tables AS stat ON (n.nspname = stat.schemaname) AND (c.relname = stat.relname) WHERE (c.relnamespace = n.oid) AND (n.nspname !~ '^pg_') AND (n.nspname <> 'information_schema') AND c.relkind in ('r', 'p', 'v', 'f', 'm') AND (n.nspname IN ($1)) ORDER BY type ASC, schema ASC, name ASC
-- next
-- describe-fields (rendered by hand; first branch of a UNION ALL over information_schema.columns,
-- information_schema.table_constraints, information_schema.key_column_usage; the second branch reads
-- pg_attribute/pg_type/pg_class/pg_namespace for materialized views and the like):
-- (added for pgcatalog's test) protocol: extended; Parse name='' paramOIDs=[1043]
-- (added for pgcatalog's test) client: Bind portal='' stmt='' params=[$1='public']
SELECT c.column_name AS name, CASE WHEN c.udt_schema IN ('public', 'pg_catalog') THEN FORMAT('%s', c.udt_name) ELSE FORMAT('"%s"."%s"', c.udt_schema, c.udt_name) END AS "database-type", c.ordinal_position - 1 AS "database-position", c.table_schema AS "table-schema", c.table_name AS "table-name", pk.column_name IS NOT NULL AS "pk?", COL_DESCRIPTION(CAST(CAST(FORMAT('%I.%I', CAST(c.table_schema AS TEXT), CAST(c.table_name AS TEXT)) AS REGCLASS) AS OID), c.ordinal_position) AS "field-comment", ((column_default IS NULL) OR (LOWER(column_default) = 'null')) AND (is_nullable = 'NO') AND NOT (((column_default IS NOT NULL) AND (column_default LIKE '%nextval(%')) OR (is_identity <> 'NO')) AS "database-required", ((column_default IS NOT NULL) AND (column_default LIKE '%nextval(%')) OR (is_identity <> 'NO') AS "database-is-auto-increment" FROM information_schema.columns AS c LEFT JOIN (SELECT tc.table_schema, tc.table_name, kc.column_name FROM information_schema.table_constraints AS tc INNER JOIN information_schema.key_column_usage AS kc ON (tc.constraint_name = kc.constraint_name) AND (tc.table_schema = kc.table_schema) AND (tc.table_name = kc.table_name) WHERE tc.constraint_type = 'PRIMARY KEY') AS pk ON (c.table_schema = pk.table_schema) AND (c.table_name = pk.table_name) AND (c.column_name = pk.column_name) WHERE c.table_schema !~ '^information_schema|catalog_history|pg_' AND (c.table_schema IN ($1))
