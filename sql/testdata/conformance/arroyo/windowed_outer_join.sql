-- Arroyo: crates/arroyo-sql-testing/src/test/queries/windowed_outer_join.sql
-- (ArroyoSystems/arroyo@1a2e80fa6eac2b21efec1da16fe54eb7b9cbf4de).
-- Source: jsonl table over cars.jsonl; event_time_field = 'timestamp' is a
-- WATERMARK FOR timestamp with a 1 minute delay (the input is at most 23 s
-- out of order, so no row is late).
-- Windows: each TUMBLE(INTERVAL '1' hour) AS window is the TUMBLE TVF
-- grouped by window_start, window_end; ON dropoffs.window.start =
-- pickups.window.start is on window_start. hour is dropoffs' window start,
-- so NULL for an hour with pickups but no dropoffs, as in Arroyo. The
-- sink's columns (hour, drivers, pickups) take the SELECT's by position.
CREATE TABLE cars (
  timestamp TIMESTAMP NOT NULL,
  driver_id BIGINT,
  event_type TEXT,
  location TEXT,
  WATERMARK FOR timestamp AS timestamp - INTERVAL '1' MINUTE
) WITH (connector = 'jsonl', path = 'cars.jsonl');

SELECT dropoffs.window_start AS hour, dropoff_drivers AS drivers, pickup_drivers AS pickups
FROM (
  SELECT window_start, window_end, COUNT(DISTINCT driver_id) AS dropoff_drivers
  FROM TABLE(TUMBLE(TABLE cars, DESCRIPTOR(timestamp), INTERVAL '1' HOUR))
  WHERE event_type = 'dropoff'
  GROUP BY window_start, window_end
) dropoffs
FULL OUTER JOIN (
  SELECT window_start, window_end, COUNT(DISTINCT driver_id) AS pickup_drivers
  FROM TABLE(TUMBLE(TABLE cars, DESCRIPTOR(timestamp), INTERVAL '1' HOUR))
  WHERE event_type = 'pickup'
  GROUP BY window_start, window_end
) pickups
ON dropoffs.window_start = pickups.window_start;
