-- The WITH clause misses a comma on line 3.
CREATE STREAM s (id VARCHAR KEY, v INT)
  WITH (kafka_topic='s' value_format='JSON', partitions=1);
