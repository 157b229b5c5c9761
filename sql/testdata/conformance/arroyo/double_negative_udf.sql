-- Arroyo: crates/arroyo-sql-testing/src/test/queries/double_negative_udf.sql
-- (ArroyoSystems/arroyo@c47b7f0bf5d683c320bf56635b70c5f5db2202a7), with
-- the Rust UDF of crates/arroyo-sql-testing/src/udfs.rs:
-- double_negative(x: u64) -> i64 { -2 * (x as i64) }.
-- Source: Arroyo's impulse.json (not in the shared data, not in Arroyo's
-- repository: written by its test harness) is rebuilt by the test as
-- impulse.jsonl: 100 rows, counter 0..99, subtask_index 0, timestamp
-- 2023-10-09 17:13:20 + 200 ms x counter (the goldens pin each of these).
-- bigint unsigned is BIGINT (clink has no unsigned integers).
-- Unsupported: user-defined functions (docs/sql.md "Not supported yet";
-- no open issue; CREATE FUNCTION is rejected). Inlined as -2 * counter,
-- as the Nexmark q14 translation inlines count_char, it would pass.
CREATE TABLE impulse_source (
  timestamp TIMESTAMP,
  counter BIGINT NOT NULL,
  subtask_index BIGINT NOT NULL
) WITH (connector = 'jsonl', path = 'impulse.jsonl');

SELECT double_negative(counter) AS counter FROM impulse_source;
