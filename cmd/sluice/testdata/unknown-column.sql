CREATE STREAM s (id VARCHAR KEY, v INT) WITH (kafka_topic='s', value_format='JSON', partitions=1);
CREATE STREAM o AS
  SELECT id, w FROM s;
