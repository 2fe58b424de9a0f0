SET 'auto.offset.reset' = 'earliest';
CREATE STREAM pings (host VARCHAR KEY, ms INT)
  WITH (KAFKA_TOPIC='server_pings', VALUE_FORMAT='JSON', PARTITIONS=1);
CREATE TABLE ping_totals AS SELECT host, COUNT(*) AS n, SUM(ms) AS total FROM pings GROUP BY host;
INSERT INTO pings VALUES ('a', 12);
