-- Arroyo: crates/arroyo-sql-testing/src/test/queries/hourly_by_event_type.sql
-- (ArroyoSystems/arroyo@b42cbb3c1673b53892d6e2ab01792e1b0c5d1438).
-- Source: jsonl table over cars.jsonl; event_time_field = 'timestamp' is a
-- WATERMARK FOR timestamp with a 1 minute delay: the input is at most 23 s
-- out of order, so no row is late (Arroyo's periodic watermark drops none).
-- Window: Arroyo's TUMBLE(INTERVAL '1' HOUR) AS window in GROUP BY with
-- window.start is the TUMBLE TVF grouped by window_start, window_end.
CREATE TABLE cars (
  timestamp TIMESTAMP,
  driver_id BIGINT,
  event_type TEXT,
  location TEXT,
  WATERMARK FOR timestamp AS timestamp - INTERVAL '1' MINUTE
) WITH (connector = 'jsonl', path = 'cars.jsonl');

SELECT event_type, window_start AS hour, COUNT(*) AS count
FROM TABLE(TUMBLE(TABLE cars, DESCRIPTOR(timestamp), INTERVAL '1' HOUR))
GROUP BY event_type, window_start, window_end;
