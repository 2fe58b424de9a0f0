-- Run against a separate broker: sluice run pings.sql --brokers ADDR
SET 'auto.offset.reset' = 'earliest';

CREATE STREAM pings (host VARCHAR KEY, ms INT) WITH (kafka_topic='pings', value_format='JSON', partitions=1);

CREATE STREAM slow AS SELECT host, ms * 2 AS double_ms FROM pings WHERE ms > 100;

INSERT INTO pings (host, ms) VALUES ('a', 50);
INSERT INTO pings (host, ms) VALUES ('b', 150);
INSERT INTO pings (host, ms) VALUES ('c', 300);

SELECT host, double_ms FROM slow EMIT CHANGES;
