-- Nexmark q18, find last bid: each bidder's last bid on each auction. A deduplication keeping the last row by dateTime:
-- its output is a changelog, so the sink declares the key (PRIMARY KEY (bidder, auction)), which makes the harness's
-- sink upsert-kafka (the latest value per key); the reference declares none.
CREATE TABLE nexmark_q18 (
    auction  BIGINT,
    bidder  BIGINT,
    price  BIGINT,
    channel  VARCHAR,
    url  VARCHAR,
    `dateTime`  TIMESTAMP(3),
    extra  VARCHAR,
    PRIMARY KEY (bidder, auction) NOT ENFORCED
) WITH (
  'connector' = 'blackhole'
);

INSERT INTO nexmark_q18
SELECT auction, bidder, price, channel, url, `dateTime`, extra
 FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY bidder, auction ORDER BY `dateTime` DESC) AS rank_number
       FROM bid)
 WHERE rank_number <= 1;
