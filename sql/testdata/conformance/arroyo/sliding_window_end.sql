-- Arroyo: crates/arroyo-sql-testing/src/test/queries/sliding_window_end.sql
-- (ArroyoSystems/arroyo@bad19612c51da3d833bcac5a1e7d42bf24f6ac1f).
-- Source: Arroyo's impulse.json (not in the shared data, not in Arroyo's
-- repository: written by its test harness) is rebuilt by the test as
-- impulse.jsonl: 100 rows, counter 0..99, subtask_index 0, timestamp
-- 2023-10-09 17:13:20 + 200 ms x counter (the goldens pin each of these).
-- bigint unsigned is BIGINT (clink has no unsigned integers).
-- event_time_field = 'timestamp' is a WATERMARK FOR timestamp with a 1
-- second delay (the rows are in order, so none is late).
-- Window: hop(interval '2 second', interval '10 second') AS window is the
-- HOP TVF (slide 2 s, size 10 s) grouped by window_start, window_end.
CREATE TABLE impulse_source (
  timestamp TIMESTAMP,
  counter BIGINT NOT NULL,
  subtask_index BIGINT NOT NULL,
  WATERMARK FOR timestamp AS timestamp - INTERVAL '1' SECOND
) WITH (connector = 'jsonl', path = 'impulse.jsonl');

SELECT count(*) AS count, min(counter) AS min, max(counter) AS max,
       window_start AS start, window_end AS "end"
FROM TABLE(HOP(TABLE impulse_source, DESCRIPTOR(timestamp), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
GROUP BY window_start, window_end;
