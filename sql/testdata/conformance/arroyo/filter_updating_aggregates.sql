-- Arroyo: crates/arroyo-sql-testing/src/test/queries/filter_updating_aggregates.sql
-- (ArroyoSystems/arroyo@1c09c449a2ccfb3e4e98d2c209f99df20b6b2a2d; that
-- version still expected a planning error, the golden is from the later
-- version that runs it).
-- Source: Arroyo's impulse.json (not in the shared data, not in Arroyo's
-- repository: written by its test harness) is rebuilt by the test as
-- impulse.jsonl: 100 rows, counter 0..99, subtask_index 0, timestamp
-- 2023-10-09 17:13:20 + 200 ms x counter (the goldens pin each of these).
-- bigint unsigned is BIGINT (clink has no unsigned integers).
-- No event time, as in Arroyo. Sink: debezium_json (final state). The
-- derived table gets an alias (clink requires one).
CREATE TABLE impulse_source (
  timestamp TIMESTAMP,
  counter BIGINT NOT NULL,
  subtask_index BIGINT NOT NULL
) WITH (connector = 'jsonl', path = 'impulse.jsonl');

SELECT * FROM (
  SELECT count(DISTINCT subtask_index) AS subtasks FROM impulse_source
) AS s
WHERE subtasks >= 1;
