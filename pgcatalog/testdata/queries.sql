-- Statements over the fixture (clients_test.go): one per line, each
-- answered in queries.golden. TestAgainstPostgres runs the same lines on
-- a real PostgreSQL holding the same tables and compares the answers.
SELECT 1, 'a', NULL::int, 1.5, true, false
SELECT 1 + 2 * 3, 7 / 2, 7 % 3, 7.0 / 2.0 > 3, -4, 2.5 * 2 = 5
SELECT 'ab' || 'cd', 'a' || NULL, NULL IS NULL, 1 IS NOT NULL, 'x' || 1
SELECT NULL AND false, NULL AND true, NULL OR true, NULL OR false, NOT NULL::bool
SELECT 1 = NULL, NULL IS DISTINCT FROM 1, NULL IS NOT DISTINCT FROM NULL, 1 IS DISTINCT FROM 1
SELECT 'abc' ~ '^a', 'abc' !~ 'b', 'ABC' ~* 'b', 'abc' !~* 'B', 'abc' LIKE 'a%', 'abc' NOT LIKE '_b_', 'ABC' ILIKE 'a%', 'a_c' LIKE 'a\_c', 'abc' OPERATOR(pg_catalog.~) '^(abc)$' COLLATE pg_catalog.default
SELECT 2 BETWEEN 1 AND 3, 5 NOT BETWEEN 1 AND 3, 2 BETWEEN SYMMETRIC 3 AND 1, NULL::int BETWEEN 1 AND 2
SELECT CASE WHEN 1 > 2 THEN 'x' WHEN 2 > 1 THEN 'y' END, CASE 2 WHEN 1 THEN 'one' WHEN 2 THEN 'two' ELSE 'many' END, CASE WHEN false THEN 1 END
SELECT coalesce(NULL, 2, 3), nullif(1, 1), nullif(1, 2), greatest(1, 3, 2), least('b', 'a'), coalesce(NULL, 'x')
SELECT 1 IN (1, 2), 3 IN (1, 2), 3 NOT IN (1, NULL), 1 = ANY(ARRAY[1,2]), 3 = ANY('{1,2}'::int[]), 1 <> ALL(ARRAY[2,3]), NULL = ANY(ARRAY[1])
SELECT ARRAY[1,2,3], (ARRAY['a','b'])[2], '{x,"y z",NULL}'::text[], array_to_string(ARRAY['a',NULL,'c'], ',', '*'), array_length(ARRAY[1,2], 1), array_upper(ARRAY[1,2,3], 1), array_lower(ARRAY[5], 1), (ARRAY[1])[5]
SELECT 'int4'::regtype, 'integer'::regtype::oid, 25::regtype, 'text[]'::regtype, 'character varying'::regtype
SELECT format_type(1700, 655366), format_type(1043, 36), format_type(1009, -1), format_type(1114, -1), format_type(18, -1), format_type(1083, NULL), format_type(3802, -1), format_type(16, -1)
SELECT '12'::int + 1, '1.5'::float8, 't'::bool, 'yes'::boolean, 42::text, 'xy'::char, 'abc'::name, 3.7::int, '{1,2}'::int2[]
SELECT quote_ident('abc'), quote_ident('Abc'), quote_ident('select'), lower('AbC'), upper('abc'), length('héllo'), replace('aaa', 'a', 'b'), concat('a', NULL, 1), trim('  x  ')
SELECT substring('hello', 2, 3), substring('hello' from 2), substring('hello' from 2 for 2), position('l' in 'hello'), strpos('hello', 'z')
SELECT to_regclass('orders') IS NOT NULL, to_regclass('nope'), to_regtype('integer'), to_regtype('nope'), to_regnamespace('public')::oid, split_part('a.b.c', '.', 2), split_part('a.b', '.', -1), left('hello', 2), right('hello', -2), ltrim('xxa', 'x'), rtrim('a  '), starts_with('abc', 'ab'), regexp_replace('a1b2', '[0-9]', '#', 'g'), regexp_replace('abc', '(b)', '<\1>')
SELECT c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind = ANY (ARRAY['r', 'p', 'f', 'v', 'm']) ORDER BY 1
SELECT typname AS name, oid, typarray AS array_oid, oid::regtype::text AS regtype, typdelim AS delimiter FROM pg_type t WHERE t.oid = to_regtype('jsonb') ORDER BY t.oid
SELECT count(*) FILTER (WHERE relkind = 'i'), count(*) FILTER (WHERE relkind = 'r') FROM pg_class WHERE relnamespace = 'public'::regnamespace
SELECT format('%s-%I-%L-%%', 'a', 'B c', 'it''s'), string_to_array('a,b,c', ','), parse_ident('"A".b')
SELECT current_schema(), current_schemas(true), current_schemas(false), current_database(), current_user, session_user, user, current_catalog
SELECT current_setting('server_version_num')::int / 10000, current_setting('DateStyle'), current_setting('standard_conforming_strings'), current_setting('no.such', true)
SELECT pg_is_in_recovery(), has_table_privilege('orders', 'SELECT'), has_schema_privilege('public', 'USAGE'), pg_encoding_to_char(6), pg_table_is_visible('orders'::regclass)
SELECT x FROM generate_series(1, 3) AS x
SELECT * FROM generate_series(1, 5, 2) WITH ORDINALITY
SELECT * FROM generate_series(3, 1, -1) g
SELECT generate_subscripts(ARRAY['a','b','c'], 1), octet_length('héllo')
SELECT pg_catalog.pg_attribute.attname FROM pg_catalog.pg_index, pg_catalog.pg_attribute WHERE pg_catalog.pg_index.indrelid = 'orders'::regclass AND pg_catalog.pg_attribute.attrelid = pg_catalog.pg_index.indrelid AND pg_catalog.pg_attribute.attnum = ANY (pg_catalog.pg_index.indkey)
SELECT unnest(ARRAY[1,2]), unnest(ARRAY['a','b','c'])
SELECT * FROM unnest(ARRAY['a','b']) u(v)
SELECT a, count(*), min(b), max(b), string_agg(b, ',' ORDER BY b), array_agg(b ORDER BY b DESC), bool_and(b > 'a'), bool_or(b > 'b'), count(DISTINCT a), sum(a) FROM (VALUES (1, 'a'), (1, 'b'), (2, 'c')) t(a, b) GROUP BY a ORDER BY a
SELECT a, count(*) FROM (VALUES (1), (1), (2)) t(a) GROUP BY a HAVING count(*) > 1
SELECT pg_typeof(sum(a)), pg_typeof(sum(a::int8)), pg_typeof(sum(a::float8)), pg_typeof(avg(a)), pg_typeof(avg(a::float8)), pg_typeof(min(a::int2)), pg_typeof(count(a)), sum(a::float8), avg(a::float8) FROM (VALUES (1), (2)) t(a)
SELECT count(*), max(a), string_agg(a::text, ',') FROM (VALUES (1)) t(a) WHERE false
SELECT a % 2 AS parity, count(*) FROM (VALUES (1), (2), (3)) t(a) GROUP BY 1 ORDER BY 1
SELECT DISTINCT a FROM (VALUES (2), (1), (2)) t(a) ORDER BY a DESC
SELECT DISTINCT ON (a) a, b FROM (VALUES (1, 'y'), (1, 'x'), (2, 'z')) t(a, b) ORDER BY a, b
SELECT DISTINCT ON (1) a, b FROM (VALUES (1, 'y'), (1, 'x'), (2, 'z')) t(a, b) ORDER BY 1, 2 DESC
SELECT a % 2 AS parity, count(*) FROM (VALUES (1), (2), (3)) t(a) GROUP BY parity ORDER BY parity
SELECT a FROM (VALUES (1), (NULL), (3)) t(a) ORDER BY a NULLS FIRST
SELECT a FROM (VALUES (1), (NULL), (3)) t(a) ORDER BY a DESC NULLS LAST LIMIT 2 OFFSET 1
SELECT a FROM (VALUES (1), (NULL), (3)) t(a) ORDER BY a
SELECT a FROM (VALUES (1), (NULL), (3)) t(a) ORDER BY a DESC
SELECT a AS z FROM (VALUES (2), (1)) t(a) ORDER BY z
SELECT a, b, row_number() OVER (PARTITION BY a ORDER BY b DESC) FROM (VALUES (1, 'x'), (1, 'y'), (2, 'z')) t(a, b) ORDER BY a, b
SELECT 1 UNION SELECT 1 UNION ALL SELECT 2 ORDER BY 1
SELECT 'a' AS x UNION SELECT 'b' ORDER BY x DESC
SELECT 1 AS a INTERSECT SELECT 1
SELECT l.a, r.b FROM (VALUES (1), (2)) l(a) LEFT JOIN (VALUES (1, 'x')) r(a, b) ON l.a = r.a ORDER BY 1
SELECT l.a, r.b FROM (VALUES (1)) l(a) RIGHT JOIN (VALUES (1, 'x'), (2, 'y')) r(a, b) ON l.a = r.a ORDER BY 2
SELECT l.a, r.a FROM (VALUES (1), (2)) l(a) FULL JOIN (VALUES (2), (3)) r(a) ON l.a = r.a ORDER BY 1, 2
SELECT a, b, c FROM (VALUES (1, 'x')) l(a, b) JOIN (VALUES (1, 'y')) r(a, c) USING (a)
SELECT l.a, r.a FROM (VALUES (1), (2)) l(a) CROSS JOIN (VALUES (3)) r(a) ORDER BY 1
SELECT l.a, r.a FROM (VALUES (1), (2)) l(a), (VALUES (3), (4)) r(a) WHERE l.a + r.a = 5 ORDER BY 1
SELECT a FROM (VALUES (1), (2)) t(a) WHERE EXISTS (SELECT 1 FROM (VALUES (2)) u(b) WHERE u.b = t.a)
SELECT a, (SELECT max(b) FROM (VALUES (1), (5)) u(b) WHERE b > a) FROM (VALUES (1), (5)) t(a) ORDER BY a
SELECT a FROM (VALUES (1), (2)) t(a) WHERE a IN (SELECT 2) AND a = ANY (SELECT 2)
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5) SELECT sum(i), count(*) FROM n
WITH RECURSIVE t(oid, elem) AS (SELECT oid, typelem FROM pg_type WHERE typname = '_int4' UNION SELECT p.oid, p.typelem FROM pg_type p JOIN t ON p.oid = t.elem) SELECT oid::regtype FROM t ORDER BY 1
WITH x AS (SELECT 1 AS a), y AS (SELECT a + 1 AS b FROM x) SELECT a, b FROM x, y
SELECT array(SELECT unnest(ARRAY[3,1,2]) ORDER BY 1)
SELECT c.relname, k.attnum, a.attname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid CROSS JOIN unnest(i.indkey) AS k(attnum) JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum WHERE c.relname = 'orders_pkey'
SELECT t.a, s.n FROM (VALUES (2), (3)) t(a) CROSS JOIN LATERAL (SELECT count(*) AS n FROM generate_series(1, t.a)) s ORDER BY 1
SELECT t.a, g FROM (VALUES (1), (2)) t(a) LEFT JOIN LATERAL generate_series(2, t.a) g ON true ORDER BY 1, 2
SELECT t.a, u FROM (VALUES (ARRAY[1, 2]), (ARRAY[3])) t(a), unnest(t.a) u ORDER BY 2
SELECT 1 WHERE NULL
SELECT relname, relkind, relnatts, relhasindex, relpersistence, reltuples FROM pg_class WHERE relnamespace = 'public'::regnamespace ORDER BY relname
SELECT 'orders'::regclass::oid = (SELECT oid FROM pg_class WHERE relname = 'orders'), 'public.orders'::regclass, '"PAGEVIEWS"'::regclass, 'pg_class'::regclass, 'pg_catalog.pg_type'::regclass::oid
SELECT attname, atttypid::regtype, attlen, attnum, atttypmod, attnotnull, attbyval, attalign, attstorage, attndims, attcollation, attisdropped, attidentity, attgenerated FROM pg_attribute WHERE attrelid = 'orders'::regclass AND attnum > 0 ORDER BY attnum
SELECT attname, atttypid::regtype, attnum FROM pg_attribute WHERE attrelid = 'orders_pkey'::regclass
SELECT c.relname, i.indnatts, i.indnkeyatts, i.indisunique, i.indisprimary, i.indkey, i.indkey[0], pg_get_indexdef(i.indexrelid), pg_get_indexdef(i.indexrelid, 1, true) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = 'orders'::regclass
SELECT conname, contype, conkey, convalidated, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'orders'::regclass
SELECT typname, typlen, typbyval, typtype, typcategory, typelem::regtype, typarray::regtype, typalign, typstorage, typnotnull, typbasetype, typtypmod, typndims, typdelim FROM pg_type WHERE oid IN (16, 17, 18, 20, 21, 23, 25, 26, 700, 701, 1009, 1082, 1083, 1114, 1700, 2205, 3802) ORDER BY oid
SELECT table_catalog, table_schema, table_name, table_type, is_insertable_into, is_typed, commit_action FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name
SELECT * FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position
SELECT constraint_type, constraint_name ~ '^2200_[0-9]+_1_not_null$' OR constraint_name = 'orders_pkey', table_name, is_deferrable, initially_deferred, enforced, nulls_distinct FROM information_schema.table_constraints WHERE table_schema = 'public' ORDER BY 1
SELECT * FROM information_schema.key_column_usage WHERE table_schema = 'public'
SELECT schemaname, tablename, tableowner, hasindexes FROM pg_tables WHERE schemaname = 'public' ORDER BY 2
SELECT nspname FROM pg_namespace WHERE nspname IN ('pg_catalog', 'public', 'information_schema') ORDER BY 1
SELECT datname, pg_encoding_to_char(encoding), datallowconn, datconnlimit FROM pg_database WHERE datname = current_database()
SELECT n.nspname, c.relname, a.attname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid WHERE n.nspname = 'public' AND c.relkind = 'r' AND a.attnum = 1 ORDER BY 2
SELECT name, setting FROM pg_settings WHERE name IN ('client_encoding', 'integer_datetimes', 'max_identifier_length') ORDER BY name
