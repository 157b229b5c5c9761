-- Arroyo: crates/arroyo-sql-testing/src/test/queries/updating_inner_join.sql
-- (ArroyoSystems/arroyo@b85bf10f17c49bca28f88314317bcdb2864f4f4f).
-- Source: Arroyo's impulse.json (not in the shared data, not in Arroyo's
-- repository: written by its test harness) is rebuilt by the test as
-- impulse.jsonl: 100 rows, counter 0..99, subtask_index 0, timestamp
-- 2023-10-09 17:13:20 + 200 ms x counter (the goldens pin each of these).
-- bigint unsigned is BIGINT (clink has no unsigned integers).
-- event_time_field = 'timestamp' is a WATERMARK with a 1 second delay (the
-- rows are in order; no window, so nothing depends on it).
-- The view's counter % 2 == 1 is counter % 2 = 1 (clink has no ==). The
-- sink's columns (left_count, right_count) take the SELECT's by position.
CREATE TABLE impulse (
  timestamp TIMESTAMP,
  counter BIGINT NOT NULL,
  subtask_index BIGINT NOT NULL,
  WATERMARK FOR timestamp AS timestamp - INTERVAL '1' SECOND
) WITH (connector = 'jsonl', path = 'impulse.jsonl');

CREATE VIEW impulse_odd AS
SELECT * FROM impulse WHERE counter % 2 = 1;

SELECT A.counter AS left_count, B.counter AS right_count
FROM impulse A
JOIN impulse_odd B ON A.counter = B.counter;
