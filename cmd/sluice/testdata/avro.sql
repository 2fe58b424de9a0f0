-- An AVRO stream on the embedded broker and its embedded Schema Registry:
-- the source's schema is registered at CREATE, INSERT writes with it, and
-- the derived stream registers its own.
SET 'auto.offset.reset'='earliest';
CREATE STREAM avro_src (id VARCHAR KEY, n INT, price DECIMAL(5, 2), tags ARRAY<STRING>)
  WITH (KAFKA_TOPIC='avro_src', VALUE_FORMAT='AVRO', PARTITIONS=1);
INSERT INTO avro_src (id, n, price, tags) VALUES ('a', 1, 2.50, ARRAY['x', 'y']);
INSERT INTO avro_src (id, n, price, tags) VALUES ('b', 2, NULL, ARRAY['z']);
CREATE STREAM avro_doubled AS SELECT id, n * 2 AS n2, price, tags FROM avro_src;
SELECT * FROM avro_doubled EMIT CHANGES LIMIT 2;
