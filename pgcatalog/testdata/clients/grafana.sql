-- Grafana's PostgreSQL data source (current grafana/grafana main, its pgx backend): the Test button is pool.Ping = pgconn Exec("-- ping") (a simple Query holding only a comment; PostgreSQL answers EmptyQueryResponse); then the editor's queries from postgresMetaQuery.ts run as raw SQL through PgConn().Exec (simple protocol): version, timescaledb check, schemas, table picker (no schema, then schema 'public'), column picker for table orders, and a time-series panel query as Grafana sends it after macro expansion. Replayed with pgx v5.13.0 as Grafana runs them (texts rebuilt from the source exactly, whitespace included)
-- Captured on a real PostgreSQL 15.18 (Debian) through a loopback proxy that decodes the v3 protocol
-- (tools/pgproxy.py; full transcript with ParameterStatus/auth in wire/). Schema: tools/schema.sql
-- (table public.orders with a bigint primary key and every common type, view big_orders).
-- Each statement: comment lines say the protocol (simple Query, or extended Parse with its
-- parameter type OIDs, then Bind with formats and values), and what PostgreSQL answered
-- (RowDescription as name:typeOID[/fmt1 for binary], CommandComplete); then the text exactly.
-- first connection: StartupMessage v3.0 {'application_name': 'grafana', 'user': 'sluice', 'database': 'sluice'}
-- protocol: simple (Query)
-- PostgreSQL: EmptyQueryResponse
-- ping
-- next
-- protocol: simple (Query)
-- PostgreSQL: RowDescription [version:23]
-- PostgreSQL: CommandComplete SELECT 1
SELECT current_setting('server_version_num')::int/100 as version
-- next
-- protocol: simple (Query)
-- PostgreSQL: RowDescription [extversion:25]
-- PostgreSQL: CommandComplete SELECT 0
SELECT extversion FROM pg_extension WHERE extname = 'timescaledb'
-- next
-- protocol: simple (Query)
-- PostgreSQL: RowDescription [name:19]
-- PostgreSQL: CommandComplete SELECT 1
SELECT schema_name AS "name"
    FROM information_schema.schemata
    WHERE schema_name NOT IN ('information_schema',
                              'pg_catalog',
                              'pg_toast',
                              '_timescaledb_cache',
                              '_timescaledb_catalog',
                              '_timescaledb_internal',
                              '_timescaledb_config',
                              'timescaledb_information',
                              'timescaledb_experimental')
    ORDER BY schema_name
-- next
-- protocol: simple (Query)
-- PostgreSQL: RowDescription [table:25]
-- PostgreSQL: CommandComplete SELECT 2
SELECT
    CASE WHEN 
          quote_ident(table_schema) IN (
          SELECT
            CASE WHEN trim(s[i]) = '"$user"' THEN user ELSE trim(s[i]) END
          FROM
            generate_series(
              array_lower(string_to_array(current_setting('search_path'),','),1),
              array_upper(string_to_array(current_setting('search_path'),','),1)
            ) as i,
            string_to_array(current_setting('search_path'),',') s
          )
      THEN quote_ident(table_name)
      ELSE quote_ident(table_schema) || '.' || quote_ident(table_name)
    END AS "table"
    FROM information_schema.tables
    WHERE quote_ident(table_schema) NOT IN ('information_schema',
                             'pg_catalog',
                             '_timescaledb_cache',
                             '_timescaledb_catalog',
                             '_timescaledb_internal',
                             '_timescaledb_config',
                             'timescaledb_information',
                             'timescaledb_experimental')
    ORDER BY CASE WHEN 
          quote_ident(table_schema) IN (
          SELECT
            CASE WHEN trim(s[i]) = '"$user"' THEN user ELSE trim(s[i]) END
          FROM
            generate_series(
              array_lower(string_to_array(current_setting('search_path'),','),1),
              array_upper(string_to_array(current_setting('search_path'),','),1)
            ) as i,
            string_to_array(current_setting('search_path'),',') s
          ) THEN 0 ELSE 1 END, 1
-- next
-- protocol: simple (Query)
-- PostgreSQL: RowDescription [table:25]
-- PostgreSQL: CommandComplete SELECT 2
SELECT quote_ident(table_name) AS "table"
      FROM information_schema.tables
      WHERE quote_ident(table_schema) = 'public'
      ORDER BY 1
-- next
-- protocol: simple (Query)
-- PostgreSQL: RowDescription [column:25, type:1043]
-- PostgreSQL: CommandComplete SELECT 12
SELECT quote_ident(column_name) AS "column", data_type AS "type"
    FROM information_schema.columns
    WHERE
      CASE WHEN array_length(parse_ident('orders'),1) = 2
        THEN quote_ident(table_schema) = (parse_ident('orders'))[1]
          AND quote_ident(table_name) = (parse_ident('orders'))[2]
        ELSE quote_ident(table_name) = 'orders'
          AND 
          quote_ident(table_schema) IN (
          SELECT
            CASE WHEN trim(s[i]) = '"$user"' THEN user ELSE trim(s[i]) END
          FROM
            generate_series(
              array_lower(string_to_array(current_setting('search_path'),','),1),
              array_upper(string_to_array(current_setting('search_path'),','),1)
            ) as i,
            string_to_array(current_setting('search_path'),',') s
          )
      END
-- next
-- protocol: simple (Query)
-- PostgreSQL: RowDescription [time:1114, amount:1700]
-- PostgreSQL: CommandComplete SELECT 1
SELECT
  ts AS "time",
  amount
FROM orders
WHERE
  ts BETWEEN '2024-01-01T00:00:00Z' AND '2024-01-03T00:00:00Z'
ORDER BY 1
