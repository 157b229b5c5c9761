-- Arroyo: crates/arroyo-sql-testing/src/test/queries/most_active_driver_last_hour_unaligned.sql
-- (ArroyoSystems/arroyo@62c913fdaa1f5d000fb1e07d77ce3ac972db8379; that
-- version still expected a planning error, the golden is from the later
-- version that runs it).
-- Source: jsonl table over cars.jsonl; event_time_field = 'timestamp' is a
-- WATERMARK FOR timestamp with a 1 minute delay (the input is at most 23 s
-- out of order, so no row is late).
-- Window: hop(INTERVAL '40' minute, INTERVAL '1' hour) AS window is the
-- HOP TVF (slide 40 minutes, size 1 hour: not a multiple of the slide, so
-- windows start at multiples of the slide); ROW_NUMBER() OVER (PARTITION
-- BY window ...) partitions by both bounds.
CREATE TABLE cars (
  timestamp TIMESTAMP,
  driver_id BIGINT,
  event_type TEXT,
  location TEXT,
  WATERMARK FOR timestamp AS timestamp - INTERVAL '1' MINUTE
) WITH (connector = 'jsonl', path = 'cars.jsonl');

SELECT driver_id, count, window_start AS start, window_end AS "end", row_number
FROM (
  SELECT window_start, window_end, driver_id, count,
         ROW_NUMBER() OVER (PARTITION BY window_start, window_end
                            ORDER BY count DESC, driver_id DESC) AS row_number
  FROM (
    SELECT driver_id, window_start, window_end, COUNT(*) AS count
    FROM TABLE(HOP(TABLE cars, DESCRIPTOR(timestamp), INTERVAL '40' MINUTE, INTERVAL '1' HOUR))
    GROUP BY driver_id, window_start, window_end
  ) counts
) ranked
WHERE row_number = 1;
