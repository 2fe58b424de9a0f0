-- Nexmark q7, highest bid: the bids whose price is the highest of their 10 s tumbling window. The
-- sink's columns are in the order the SELECT writes them (the reference declares auction, bidder,
-- price and inserts auction, price, bidder by position, which would write the price as the bidder).
CREATE TABLE nexmark_q7 (
  auction  BIGINT,
  price  BIGINT,
  bidder  BIGINT,
  `dateTime`  TIMESTAMP(3),
  extra  VARCHAR
) WITH (
  'connector' = 'blackhole'
);

INSERT INTO nexmark_q7
SELECT B.auction, B.price, B.bidder, B.`dateTime`, B.extra
from bid B
JOIN (
  SELECT MAX(B1.price) AS maxprice, TUMBLE_ROWTIME(B1.`dateTime`, INTERVAL '10' SECOND) as `dateTime`
  FROM bid B1
  GROUP BY TUMBLE(B1.`dateTime`, INTERVAL '10' SECOND)
) B1
ON B.price = B1.maxprice
WHERE B.`dateTime` BETWEEN B1.`dateTime`  - INTERVAL '10' SECOND AND B1.`dateTime`;
