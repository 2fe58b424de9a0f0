-- The interop test's query (cmd/sluice/interop_test.go, which names the
-- topics): Python's confluent-kafka JSONSerializer wrote ${IN} and
-- registered its JSON Schema; the stream declares no columns, so they come
-- from that schema. confluent-kafka's JSONDeserializer reads ${OUT} back,
-- validating each record against the JSON Schema Sluice registered.
SET 'auto.offset.reset'='earliest';
CREATE STREAM orders WITH (KAFKA_TOPIC='${IN}', VALUE_FORMAT='JSON_SR');
CREATE STREAM orders_out WITH (KAFKA_TOPIC='${OUT}', PARTITIONS=1) AS
  SELECT id, qty, qty * 2 AS qty2, total, total + 1 AS total1, price, paid, note,
         tags, tags[1] AS first_tag, attrs, attrs['x'] AS x, address,
         address->city AS city
  FROM orders;
