-- Arroyo: crates/arroyo-sql-testing/src/test/queries/tight_watermark.sql
-- (ArroyoSystems/arroyo@1a2e80fa6eac2b21efec1da16fe54eb7b9cbf4de).
-- Source: jsonl table over cars.jsonl. Arroyo sets watermark_field =
-- 'timestamp' (no delay), but its watermark is periodic, so none of the
-- out-of-order rows is late there (the golden counts all 7,932 rows).
-- clink's watermark follows every row, so a zero delay would drop the
-- 488 out-of-order rows; the delay is 1 minute instead (the input is at
-- most 23 s out of order, so no row is late).
-- Window: TUMBLE(INTERVAL '1' hour) with window.end in a view is the
-- TUMBLE TVF's window_end in a view.
CREATE TABLE cars (
  timestamp TIMESTAMP,
  driver_id BIGINT,
  event_type TEXT,
  location TEXT,
  WATERMARK FOR timestamp AS timestamp - INTERVAL '1' MINUTE
) WITH (connector = 'jsonl', path = 'cars.jsonl');

CREATE VIEW group_by_view AS
SELECT window_end AS timestamp, COUNT(*) AS count
FROM TABLE(TUMBLE(TABLE cars, DESCRIPTOR(timestamp), INTERVAL '1' HOUR))
GROUP BY window_start, window_end;

SELECT timestamp, count FROM group_by_view;
