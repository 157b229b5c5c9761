-- Arroyo: crates/arroyo-sql-testing/src/test/queries/most_active_driver_last_hour.sql
-- (ArroyoSystems/arroyo@1a2e80fa6eac2b21efec1da16fe54eb7b9cbf4de).
-- Source: jsonl table over cars.jsonl; Arroyo's watermark_field =
-- 'watermark' with watermark = timestamp - 1 hour is WATERMARK FOR
-- timestamp AS timestamp - INTERVAL '1' HOUR (more than the input's 23 s
-- of disorder, so no row is late).
-- Window: hop(INTERVAL '1' minute, INTERVAL '1' hour) AS window is the HOP
-- TVF (slide 1 minute, size 1 hour) grouped by window_start, window_end;
-- ROW_NUMBER() OVER (PARTITION BY window ...) partitions by both bounds,
-- and window.start, window.end are window_start, window_end.
CREATE TABLE cars (
  timestamp TIMESTAMP,
  driver_id BIGINT,
  event_type TEXT,
  location TEXT,
  WATERMARK FOR timestamp AS timestamp - INTERVAL '1' HOUR
) WITH (connector = 'jsonl', path = 'cars.jsonl');

SELECT window_start AS start, window_end AS "end", driver_id, count, row_number
FROM (
  SELECT window_start, window_end, driver_id, count,
         ROW_NUMBER() OVER (PARTITION BY window_start, window_end
                            ORDER BY count DESC, driver_id DESC) AS row_number
  FROM (
    SELECT driver_id, window_start, window_end, COUNT(*) AS count
    FROM TABLE(HOP(TABLE cars, DESCRIPTOR(timestamp), INTERVAL '1' MINUTE, INTERVAL '1' HOUR))
    GROUP BY driver_id, window_start, window_end
  ) counts
) ranked
WHERE row_number = 1;
