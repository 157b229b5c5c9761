-- Arroyo: crates/arroyo-sql-testing/src/test/queries/union.sql
-- (ArroyoSystems/arroyo@b13a5ea07618855a88facb0862b8a289032e52b5).
-- Source: Arroyo's impulse.json (not in the shared data, not in Arroyo's
-- repository: written by its test harness) is rebuilt by the test as
-- impulse.jsonl: 100 rows, counter 0..99, subtask_index 0, timestamp
-- 2023-10-09 17:13:20 + 200 ms x counter (the goldens pin each of these).
-- bigint unsigned is BIGINT (clink has no unsigned integers).
-- Two tables over the same file, as in Arroyo; no event time.
CREATE TABLE impulse_source (
  timestamp TIMESTAMP,
  counter BIGINT NOT NULL,
  subtask_index BIGINT NOT NULL
) WITH (connector = 'jsonl', path = 'impulse.jsonl');

CREATE TABLE second_impulse_source (
  timestamp TIMESTAMP,
  counter BIGINT NOT NULL,
  subtask_index BIGINT NOT NULL
) WITH (connector = 'jsonl', path = 'impulse.jsonl');

SELECT counter, 'first' AS source FROM impulse_source
UNION ALL SELECT counter, 'second' AS source FROM second_impulse_source;
