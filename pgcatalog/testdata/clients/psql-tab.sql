-- psql 15.18 (Debian)'s tab completion, taken from PostgreSQL 15.18's statement log while psql ran in
-- a terminal: "SELECT * FROM ord<TAB>", "SELECT * FROM pg_catalog.pg_cl<TAB>", "\d PAG<TAB>" and the
-- \d that followed; each a simple Query. Fixture tables as in psql-more.sql.
-- (pgcatalog) oid 16402 is orders
-- (pgcatalog) oid 16409 is PAGEVIEWS
-- next
-- protocol: simple (Query)
SELECT c.relname, NULL::pg_catalog.text FROM pg_catalog.pg_class c WHERE c.relkind IN ('r', 'S', 'v', 'm', 'f', 'p') AND (c.relname) LIKE 'ord%' AND pg_catalog.pg_table_is_visible(c.oid) AND c.relnamespace <> (SELECT oid FROM pg_catalog.pg_namespace WHERE nspname = 'pg_catalog')
UNION ALL
SELECT NULL::pg_catalog.text, n.nspname FROM pg_catalog.pg_namespace n WHERE n.nspname LIKE 'ord%' AND n.nspname NOT LIKE E'pg\\_%'
LIMIT 1000
-- next
-- protocol: simple (Query)
SELECT c.relname, n.nspname FROM pg_catalog.pg_class c, pg_catalog.pg_namespace n WHERE c.relnamespace = n.oid AND c.relkind IN ('r', 'S', 'v', 'm', 'f', 'p') AND (c.relname) LIKE 'pg\_cl%' AND n.nspname = 'pg_catalog'
LIMIT 1000
-- next
-- protocol: simple (Query)
SELECT c.relname, NULL::pg_catalog.text FROM pg_catalog.pg_class c WHERE (c.relname) LIKE 'pag%' AND pg_catalog.pg_table_is_visible(c.oid) AND c.relnamespace <> (SELECT oid FROM pg_catalog.pg_namespace WHERE nspname = 'pg_catalog')
UNION ALL
SELECT NULL::pg_catalog.text, n.nspname FROM pg_catalog.pg_namespace n WHERE n.nspname LIKE 'pag%' AND n.nspname NOT LIKE E'pg\\_%'
LIMIT 1000
-- next
-- protocol: simple (Query)
SELECT c.oid,
  n.nspname,
  c.relname
FROM pg_catalog.pg_class c
     LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE c.relname OPERATOR(pg_catalog.~) '^(pag)$' COLLATE pg_catalog.default
  AND pg_catalog.pg_table_is_visible(c.oid)
ORDER BY 2, 3;
