-- Nexmark q4, average price for a category: the average of the winning (highest) bids in each category, a bid
-- counting when it came within its auction's life. The sink declares the key (PRIMARY KEY (id)), which makes the
-- harness's sink upsert-kafka (the latest value per key); the reference declares none. expires is BIGINT here (the
-- auctions topic holds epoch milliseconds, which Flink's JSON format does not read as a TIMESTAMP), so the reference's
-- A.expires is TO_TIMESTAMP_LTZ(A.expires, 3) as a TIMESTAMP(3) in the job's time zone (UTC), as dateTime is.
CREATE TABLE nexmark_q4 (
  id BIGINT,
  final BIGINT,
  PRIMARY KEY (id) NOT ENFORCED
) WITH (
  'connector' = 'blackhole'
);

INSERT INTO nexmark_q4
SELECT
    Q.category,
    AVG(Q.final)
FROM (
    SELECT MAX(B.price) AS final, A.category
    FROM auction A, bid B
    WHERE A.id = B.auction AND B.`dateTime` BETWEEN A.`dateTime` AND CAST(TO_TIMESTAMP_LTZ(A.expires, 3) AS TIMESTAMP(3))
    GROUP BY A.id, A.category
) Q
GROUP BY Q.category;
