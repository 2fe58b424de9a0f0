-- Nexmark q8, monitor new users: the persons who created an auction in the 10 s tumbling window they
-- registered in. A join of two group windows' results on the id and the window's bounds.
CREATE TABLE nexmark_q8 (
  id  BIGINT,
  name  VARCHAR,
  stime  TIMESTAMP(3)
) WITH (
  'connector' = 'blackhole'
);

INSERT INTO nexmark_q8
SELECT P.id, P.name, P.starttime
FROM (
  SELECT P.id, P.name,
         TUMBLE_START(P.`dateTime`, INTERVAL '10' SECOND) AS starttime,
         TUMBLE_END(P.`dateTime`, INTERVAL '10' SECOND) AS endtime
  FROM person P
  GROUP BY P.id, P.name, TUMBLE(P.`dateTime`, INTERVAL '10' SECOND)
) P
JOIN (
  SELECT A.seller,
         TUMBLE_START(A.`dateTime`, INTERVAL '10' SECOND) AS starttime,
         TUMBLE_END(A.`dateTime`, INTERVAL '10' SECOND) AS endtime
  FROM auction A
  GROUP BY A.seller, TUMBLE(A.`dateTime`, INTERVAL '10' SECOND)
) A
ON P.id = A.seller AND P.starttime = A.starttime AND P.endtime = A.endtime;
