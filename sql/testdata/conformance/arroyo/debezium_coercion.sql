-- Arroyo: crates/arroyo-sql-testing/src/test/queries/debezium_coercion.sql
-- (ArroyoSystems/arroyo@ac389cb9f1cc548254c404c52fdf4f60e5b05282).
-- Source: Arroyo's impulse.json (not in the shared data, not in Arroyo's
-- repository: written by its test harness) is rebuilt by the test as
-- impulse.jsonl: 100 rows, counter 0..99, subtask_index 0, timestamp
-- 2023-10-09 17:13:20 + 200 ms x counter (the goldens pin each of these).
-- bigint unsigned is BIGINT (clink has no unsigned integers).
-- No event time, as in Arroyo. Sink: a debezium_json sink fed an
-- append-only query (the test is Arroyo's coercion of inserts into
-- Debezium records); the golden is the final table, clink's result.
CREATE TABLE impulse_source (
  timestamp TIMESTAMP,
  counter BIGINT NOT NULL,
  subtask_index BIGINT NOT NULL
) WITH (connector = 'jsonl', path = 'impulse.jsonl');

SELECT counter FROM impulse_source;
