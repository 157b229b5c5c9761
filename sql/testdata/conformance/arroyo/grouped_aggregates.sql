-- Arroyo: crates/arroyo-sql-testing/src/test/queries/grouped_aggregates.sql
-- (ArroyoSystems/arroyo@8a1e31a6b62c80fdf5e03548ecb3027456ec94a9).
-- Source: Arroyo's impulse.json (not in the shared data, not in Arroyo's
-- repository: written by its test harness) is rebuilt by the test as
-- impulse.jsonl: 100 rows, counter 0..99, subtask_index 0, timestamp
-- 2023-10-09 17:13:20 + 200 ms x counter (the goldens pin each of these).
-- bigint unsigned is BIGINT (clink has no unsigned integers).
-- No event time, as in Arroyo. Sink: debezium_json (final state per
-- group). GROUP BY 1 (an ordinal) is written as the expression.
CREATE TABLE impulse_source (
  timestamp TIMESTAMP,
  counter BIGINT NOT NULL,
  subtask_index BIGINT NOT NULL
) WITH (connector = 'jsonl', path = 'impulse.jsonl');

SELECT counter % 5 AS counter_mod, min(counter) AS min, max(counter) AS max,
       sum(counter) AS sum, count(*) AS count, avg(counter) AS avg
FROM impulse_source
GROUP BY counter % 5;
