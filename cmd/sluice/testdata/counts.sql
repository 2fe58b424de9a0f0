-- A stateful query, for log tests: its task logs "state restored" once.
SET 'auto.offset.reset' = 'earliest';

CREATE STREAM hits (page VARCHAR KEY, ms INT) WITH (kafka_topic='hits', value_format='JSON', partitions=1);

CREATE TABLE hit_counts AS SELECT page, COUNT(*) AS n FROM hits GROUP BY page;

INSERT INTO hits (page, ms) VALUES ('home', 5);
INSERT INTO hits (page, ms) VALUES ('home', 7);

SELECT page, n FROM hit_counts EMIT CHANGES;
