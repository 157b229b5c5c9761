-- Arroyo: crates/arroyo-sql-testing/src/test/queries/updating_left_join.sql
-- (ArroyoSystems/arroyo@1a2e80fa6eac2b21efec1da16fe54eb7b9cbf4de; that version still
-- expected a planning error, the golden is from the later version that
-- runs it).
-- Source: Arroyo's impulse.json (not in the shared data, not in Arroyo's
-- repository: written by its test harness) is rebuilt by the test as
-- impulse.jsonl: 100 rows, counter 0..99, subtask_index 0, timestamp
-- 2023-10-09 17:13:20 + 200 ms x counter (the goldens pin each of these).
-- bigint unsigned is BIGINT (clink has no unsigned integers).
-- event_time_field = 'timestamp' is a WATERMARK with a 1 second delay (the
-- rows are in order; no window, so nothing depends on it).
-- A LEFT JOIN of the stream with an updating aggregate: the sink is
-- debezium_json, so the golden is the final state. cast(count(*) as
-- bigint UNSIGNED) is CAST(count(*) AS BIGINT); the derived table gets an
-- alias (clink requires one). WHERE counter < 3 is over the joined rows,
-- as in Arroyo.
CREATE TABLE impulse (
  timestamp TIMESTAMP,
  counter BIGINT NOT NULL,
  subtask_index BIGINT NOT NULL,
  WATERMARK FOR timestamp AS timestamp - INTERVAL '1' SECOND
) WITH (connector = 'jsonl', path = 'impulse.jsonl');

SELECT counter AS left_counter, counter_mod_2, right_count
FROM impulse
LEFT JOIN (
  SELECT counter % 2 AS counter_mod_2, CAST(count(*) AS BIGINT) AS right_count
  FROM impulse WHERE counter < 3 GROUP BY counter % 2
) AS r
ON counter = right_count
WHERE counter < 3;
