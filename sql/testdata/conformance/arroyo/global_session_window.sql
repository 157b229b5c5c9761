-- Arroyo: crates/arroyo-sql-testing/src/test/queries/global_session_window.sql
-- (ArroyoSystems/arroyo@be265cedf4c228e2d11ca2b429c2127dce676385).
-- Source: Arroyo's impulse.json (not in the shared data, not in Arroyo's
-- repository: written by its test harness) is rebuilt by the test as
-- impulse.jsonl: 100 rows, counter 0..99, subtask_index 0, timestamp
-- 2023-10-09 17:13:20 + 200 ms x counter (the goldens pin each of these).
-- bigint unsigned is BIGINT (clink has no unsigned integers).
-- Arroyo's WATERMARK FOR timestamp is a WATERMARK with a 1 second delay
-- (the rows are in order, so none is late).
-- Window: SESSION(INTERVAL '20 seconds') AS window with no other GROUP BY
-- column is one global session: the SESSION TVF without PARTITION BY.
CREATE TABLE impulse_source (
  timestamp TIMESTAMP,
  counter BIGINT NOT NULL,
  subtask_index BIGINT NOT NULL,
  WATERMARK FOR timestamp AS timestamp - INTERVAL '1' SECOND
) WITH (connector = 'jsonl', path = 'impulse.jsonl');

SELECT window_start AS start, window_end AS "end", COUNT(*) AS rows
FROM TABLE(SESSION(TABLE impulse_source, DESCRIPTOR(timestamp), INTERVAL '20' SECOND))
GROUP BY window_start, window_end;
