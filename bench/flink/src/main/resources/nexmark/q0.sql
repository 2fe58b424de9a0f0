-- Nexmark q0, pass through. The reference texts, with the blackhole connector replaced by the
-- harness (Nexmark.java) and `dateTime` quoted: Flink 2.2 reserves DATETIME.
CREATE TABLE nexmark_q0 (
  auction  BIGINT,
  bidder  BIGINT,
  price  BIGINT,
  `dateTime`  TIMESTAMP(3),
  extra  VARCHAR
) WITH (
  'connector' = 'blackhole'
);

INSERT INTO nexmark_q0
SELECT auction, bidder, price, `dateTime`, extra FROM bid;
