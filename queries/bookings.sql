-- Hotel bookings, counted and summed per hotel in 5-minute windows.
--
--   go run ./cmd/sluice run queries/bookings.sql
--
-- Event time comes from BOOKED_AT (epoch millis). Each aggregation task
-- keeps a stream time: the largest BOOKED_AT it has seen. A window accepts
-- records until stream time reaches the window's end plus the 2-minute
-- grace; a later record is dropped and counted, never silently merged.
--
-- 1767261600000 is 2026-01-01T10:00:00Z. Windows of this file:
--   [10:00, 10:05) closes when stream time reaches 10:07
--   [10:05, 10:10) closes when stream time reaches 10:12

SET 'auto.offset.reset' = 'earliest';

-- Keyed by hotel, so all bookings of a hotel share a partition and arrive
-- in the order they were written: stream time, and so lateness, is well
-- defined per hotel.
CREATE STREAM bookings (hotel VARCHAR KEY, id VARCHAR, price DOUBLE, booked_at BIGINT)
  WITH (KAFKA_TOPIC='bookings', VALUE_FORMAT='JSON', TIMESTAMP='booked_at', PARTITIONS=4);

CREATE TABLE hotel_5m AS
  SELECT hotel, COUNT(*) AS bookings, SUM(price) AS revenue
  FROM bookings WINDOW TUMBLING 5m GRACE 2m
  GROUP BY hotel EMIT CHANGES;

INSERT INTO bookings (hotel, id, price, booked_at) VALUES ('Ritz',  'b1', 220.0, 1767261600000); -- 10:00
INSERT INTO bookings (hotel, id, price, booked_at) VALUES ('Savoy', 'b2', 180.0, 1767261660000); -- 10:01
INSERT INTO bookings (hotel, id, price, booked_at) VALUES ('Ritz',  'b3', 250.0, 1767261840000); -- 10:04
INSERT INTO bookings (hotel, id, price, booked_at) VALUES ('Ritz',  'b4', 200.0, 1767261960000); -- 10:06: stream time 10:06
-- Late, but inside grace (stream time 10:06 < 10:07): the 10:00 window of
-- Ritz is corrected to 3 bookings and emitted again.
INSERT INTO bookings (hotel, id, price, booked_at) VALUES ('Ritz',  'b5', 300.0, 1767261780000); -- 10:03
INSERT INTO bookings (hotel, id, price, booked_at) VALUES ('Savoy', 'b6', 190.0, 1767262020000); -- 10:07
INSERT INTO bookings (hotel, id, price, booked_at) VALUES ('Ritz',  'b7', 210.0, 1767262140000); -- 10:09: stream time 10:09
-- Beyond grace (the 10:00 window closed at 10:07): dropped and counted.
INSERT INTO bookings (hotel, id, price, booked_at) VALUES ('Ritz',  'b8', 999.0, 1767261720000); -- 10:02

-- Every update of every window, as it happens (Ctrl-C to stop).
SELECT hotel, WINDOWSTART, WINDOWEND, bookings, revenue FROM hotel_5m EMIT CHANGES;
