-- ksql-test-runner form: sluice test --statements statements.sql --input input.json --output output.json
CREATE STREAM readings (sensor VARCHAR KEY, temp DOUBLE) WITH (kafka_topic='readings', value_format='JSON');

CREATE STREAM hot AS
  SELECT sensor, temp * 2.0 AS doubled FROM readings WHERE temp > 30.0;
