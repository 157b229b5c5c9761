-- Arroyo: crates/arroyo-sql-testing/src/test/queries/udaf.sql
-- (ArroyoSystems/arroyo@16aa377697f66d5db06328678b30da012d8e3274), with
-- the Rust UDAFs of crates/arroyo-sql-testing/src/udfs.rs: my_median (the
-- median as f64; the sink's BIGINT column truncates 49.5 to 49),
-- none_udf (always NULL) and max_product (max of counter x
-- subtask_index).
-- Source: Arroyo's impulse.json (not in the shared data, not in Arroyo's
-- repository: written by its test harness) is rebuilt by the test as
-- impulse.jsonl: 100 rows, counter 0..99, subtask_index 0, timestamp
-- 2023-10-09 17:13:20 + 200 ms x counter (the goldens pin each of these).
-- bigint unsigned is BIGINT (clink has no unsigned integers).
-- Window: tumble(interval '30' day) AS window is the TUMBLE TVF (one
-- window holds every row); no event time in Arroyo, so no WATERMARK: the
-- window aggregates as an updating GROUP BY with the same final result.
-- Unsupported: user-defined aggregate functions (docs/sql.md "Not
-- supported yet"; no open issue). none_udf and max_product could be
-- inlined (CAST(NULL AS DOUBLE), max(counter * subtask_index)); my_median
-- could not: clink has no MEDIAN or percentile aggregate.
CREATE TABLE impulse_source (
  timestamp TIMESTAMP,
  counter BIGINT NOT NULL,
  subtask_index BIGINT NOT NULL
) WITH (connector = 'jsonl', path = 'impulse.jsonl');

SELECT median, none_value, max_product FROM (
  SELECT window_start,
         my_median(counter) AS median,
         none_udf(counter) AS none_value,
         max_product(counter, subtask_index) AS max_product
  FROM TABLE(TUMBLE(TABLE impulse_source, DESCRIPTOR(timestamp), INTERVAL '30' DAY))
  GROUP BY window_start, window_end
) AS w;
