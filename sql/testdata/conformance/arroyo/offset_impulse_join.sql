-- Arroyo: crates/arroyo-sql-testing/src/test/queries/offset_impulse_join.sql
-- (ArroyoSystems/arroyo@1a2e80fa6eac2b21efec1da16fe54eb7b9cbf4de).
-- Source: Arroyo's impulse.json (not in the shared data, not in Arroyo's
-- repository: written by its test harness) is rebuilt by the test as
-- impulse.jsonl: 100 rows, counter 0..99, subtask_index 0, timestamp
-- 2023-10-09 17:13:20 + 200 ms x counter (the goldens pin each of these).
-- bigint unsigned is BIGINT (clink has no unsigned integers).
-- Two tables over the same file: event_time_field = 'timestamp' is a
-- WATERMARK with a 1 second delay; the delayed one's watermark = timestamp
-- - INTERVAL '10 minute' is a WATERMARK with a 10 minute delay (the rows
-- are in order, so none is late in either).
-- Windows: each TUMBLE(interval '1 second') in GROUP BY 1, 2 is the TUMBLE
-- TVF grouped by window_start, window_end and counter; window.start names
-- b's window (a's is unnamed), so it is b.window_start.
CREATE TABLE impulse_source (
  timestamp TIMESTAMP,
  counter BIGINT NOT NULL,
  subtask_index BIGINT NOT NULL,
  WATERMARK FOR timestamp AS timestamp - INTERVAL '1' SECOND
) WITH (connector = 'jsonl', path = 'impulse.jsonl');

CREATE TABLE delayed_impulse_source (
  timestamp TIMESTAMP,
  counter BIGINT NOT NULL,
  subtask_index BIGINT NOT NULL,
  WATERMARK FOR timestamp AS timestamp - INTERVAL '10' MINUTE
) WITH (connector = 'jsonl', path = 'impulse.jsonl');

SELECT b.window_start AS start, a.counter AS counter
FROM (
  SELECT window_start, window_end, counter, count(*) AS n
  FROM TABLE(TUMBLE(TABLE impulse_source, DESCRIPTOR(timestamp), INTERVAL '1' SECOND))
  GROUP BY window_start, window_end, counter
) a
JOIN (
  SELECT window_start, window_end, counter, count(*) AS n
  FROM TABLE(TUMBLE(TABLE delayed_impulse_source, DESCRIPTOR(timestamp), INTERVAL '1' SECOND))
  GROUP BY window_start, window_end, counter
) b
ON a.counter = b.counter;
