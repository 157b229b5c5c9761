-- Arroyo: crates/arroyo-sql-testing/src/test/queries/unnest_in_view.sql
-- (ArroyoSystems/arroyo@0daa76a2f31285afb16b5aa8a244264debb617a6).
-- Source: Arroyo's impulse.json (not in the shared data, not in Arroyo's
-- repository: written by its test harness) is rebuilt by the test as
-- impulse.jsonl: 100 rows, counter 0..99, subtask_index 0, timestamp
-- 2023-10-09 17:13:20 + 200 ms x counter (the goldens pin each of these).
-- bigint unsigned is BIGINT (clink has no unsigned integers).
-- event_time_field = 'timestamp' is a WATERMARK with a 1 second delay (the
-- rows are in order, so none is late).
-- Window: tumble(interval '1 day') in GROUP BY is the TUMBLE TVF grouped
-- by window_start, window_end.
-- ARRAY_AGG and a SELECT-list unnest run as written (issue 19, item 6).
CREATE TABLE impulse_source (
  timestamp TIMESTAMP,
  counter BIGINT NOT NULL,
  subtask_index BIGINT NOT NULL,
  WATERMARK FOR timestamp AS timestamp - INTERVAL '1' SECOND
) WITH (connector = 'jsonl', path = 'impulse.jsonl');

CREATE VIEW unnest_view AS
SELECT unnest(counters) AS counter FROM (
  SELECT array_agg(counter) AS counters
  FROM TABLE(TUMBLE(TABLE impulse_source, DESCRIPTOR(timestamp), INTERVAL '1' DAY))
  GROUP BY window_start, window_end
) AS days;

SELECT counter FROM unnest_view;
