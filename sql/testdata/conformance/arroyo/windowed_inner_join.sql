-- Arroyo: crates/arroyo-sql-testing/src/test/queries/windowed_inner_join.sql
-- (ArroyoSystems/arroyo@0e36f3600c07191a6f682f0e957f0c71a169e0ff).
-- Source: jsonl table over cars.jsonl; event_time_field = 'timestamp' is a
-- WATERMARK FOR timestamp with a 1 minute delay (the input is at most 23 s
-- out of order, so no row is late).
-- Windows: each TUMBLE(INTERVAL '1' hour) AS window is the TUMBLE TVF
-- grouped by window_start, window_end; the join ON dropoffs.window =
-- pickups.window compares both bounds. The sink's columns (hour, drivers,
-- pickups) take the SELECT's by position: drivers is dropoff_drivers,
-- pickups is pickup_drivers.
CREATE TABLE cars (
  timestamp TIMESTAMP,
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
INNER JOIN (
  SELECT window_start, window_end, COUNT(DISTINCT driver_id) AS pickup_drivers
  FROM TABLE(TUMBLE(TABLE cars, DESCRIPTOR(timestamp), INTERVAL '1' HOUR))
  WHERE event_type = 'pickup'
  GROUP BY window_start, window_end
) pickups
ON dropoffs.window_start = pickups.window_start AND dropoffs.window_end = pickups.window_end;
