-- Arroyo: crates/arroyo-sql-testing/src/test/queries/session_window.sql
-- (ArroyoSystems/arroyo@1c09c449a2ccfb3e4e98d2c209f99df20b6b2a2d).
-- Source: Arroyo's impulse.json (not in the shared data, not in Arroyo's
-- repository: written by its test harness) is rebuilt by the test as
-- impulse.jsonl: 100 rows, counter 0..99, subtask_index 0, timestamp
-- 2023-10-09 17:13:20 + 200 ms x counter (the goldens pin each of these).
-- bigint unsigned is BIGINT (clink has no unsigned integers).
-- event_time_field = 'timestamp' is a WATERMARK FOR timestamp with a 1
-- second delay (the rows are in order, so none is late).
-- Window: SESSION(interval '20 seconds') AS window grouped with user_id, a
-- CASE over counter, is a session per user_id. clink's SESSION TVF takes a
-- table, not a subquery (issue 19, item 3), so this uses the legacy group
-- window GROUP BY user_id, SESSION(timestamp, gap) over a subquery that
-- computes user_id (timestamp stays a time attribute through it);
-- window.start, window.end are SESSION_START, SESSION_END.
CREATE TABLE impulse_source (
  timestamp TIMESTAMP,
  counter BIGINT NOT NULL,
  subtask_index BIGINT NOT NULL,
  WATERMARK FOR timestamp AS timestamp - INTERVAL '1' SECOND
) WITH (connector = 'jsonl', path = 'impulse.jsonl');

SELECT SESSION_START(timestamp, INTERVAL '20' SECOND) AS start,
       SESSION_END(timestamp, INTERVAL '20' SECOND) AS "end",
       user_id, count(*) AS rows
FROM (
  SELECT timestamp, CASE WHEN counter % 10 = 0 THEN 0 ELSE counter END AS user_id
  FROM impulse_source
) AS users
GROUP BY user_id, SESSION(timestamp, INTERVAL '20' SECOND);
