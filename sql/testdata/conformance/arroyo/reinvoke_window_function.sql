-- Arroyo: crates/arroyo-sql-testing/src/test/queries/reinvoke_window_function.sql
-- (ArroyoSystems/arroyo@4488acbb47e472a591bc34b9277cc617cef9510b).
-- Source: jsonl table over cars.jsonl; event_time_field = 'timestamp' is a
-- WATERMARK FOR timestamp with a 1 minute delay (the input is at most 23 s
-- out of order, so no row is late).
-- Windows: the inner GROUP BY 1, tumble(interval '1 hour') is a legacy
-- TUMBLE group window; Arroyo's outer tumble(interval '1 hour') re-windows
-- the inner windows' rows by their event time, which in clink is the inner
-- window's rowtime (TUMBLE_ROWTIME, the window's end - 1 ms) re-windowed
-- with TUMBLE. window.start, window.end are TUMBLE_START, TUMBLE_END.
CREATE TABLE cars (
  timestamp TIMESTAMP,
  driver_id BIGINT,
  event_type TEXT,
  location TEXT,
  WATERMARK FOR timestamp AS timestamp - INTERVAL '1' MINUTE
) WITH (connector = 'jsonl', path = 'cars.jsonl');

SELECT TUMBLE_START(rt, INTERVAL '1' HOUR) AS start, TUMBLE_END(rt, INTERVAL '1' HOUR) AS "end",
       COUNT(DISTINCT driver_id) AS drivers
FROM (
  SELECT driver_id, TUMBLE_ROWTIME(timestamp, INTERVAL '1' HOUR) AS rt, COUNT(*) AS pickups
  FROM cars
  WHERE event_type = 'pickup'
  GROUP BY driver_id, TUMBLE(timestamp, INTERVAL '1' HOUR)
) hourly
WHERE pickups > 2
GROUP BY TUMBLE(rt, INTERVAL '1' HOUR);
