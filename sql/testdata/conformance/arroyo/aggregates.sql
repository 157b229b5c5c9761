-- Arroyo: crates/arroyo-sql-testing/src/test/queries/aggregates.sql
-- (ArroyoSystems/arroyo@1a2e80fa6eac2b21efec1da16fe54eb7b9cbf4de; that
-- version still expected a planning error, the golden is from the later
-- version that runs it).
-- Source: Arroyo's impulse.json (not in the shared data, not in Arroyo's
-- repository: written by its test harness) is rebuilt by the test as
-- impulse.jsonl: 100 rows, counter 0..99, subtask_index 0, timestamp
-- 2023-10-09 17:13:20 + 200 ms x counter (the goldens pin each of these).
-- bigint unsigned is BIGINT (clink has no unsigned integers).
-- No event time, as in Arroyo. Sink: debezium_json, so the golden is the
-- final state of the updating global aggregate.
CREATE TABLE impulse_source (
  timestamp TIMESTAMP,
  counter BIGINT NOT NULL,
  subtask_index BIGINT NOT NULL
) WITH (connector = 'jsonl', path = 'impulse.jsonl');

SELECT min(counter) AS min, max(counter) AS max, sum(counter) AS sum, count(*) AS count,
       avg(counter) AS avg
FROM impulse_source;
