-- Arroyo: crates/arroyo-sql-testing/src/test/queries/async_udf.sql
-- (ArroyoSystems/arroyo@c6d90cfc454a3c7af6f0b89083eea83fe4dd5089), with
-- the Rust async UDF of crates/arroyo-sql-testing/src/udfs.rs:
-- async_double_negative(x: u64) -> i64 sleeps x % 100 ms, then returns
-- -2 * x (ordered: results keep the input order).
-- Source: Arroyo's impulse.json (not in the shared data, not in Arroyo's
-- repository: written by its test harness) is rebuilt by the test as
-- impulse.jsonl: 100 rows, counter 0..99, subtask_index 0, timestamp
-- 2023-10-09 17:13:20 + 200 ms x counter (the goldens pin each of these).
-- bigint unsigned is BIGINT (clink has no unsigned integers).
-- Unsupported: user-defined (async) functions (docs/sql.md "Not
-- supported yet"; no open issue). Inlined as -2 * counter it would pass;
-- the asynchrony is what Arroyo tests here, and clink's async operators
-- are lookup joins only.
CREATE TABLE impulse_source (
  timestamp TIMESTAMP,
  counter BIGINT NOT NULL,
  subtask_index BIGINT NOT NULL
) WITH (connector = 'jsonl', path = 'impulse.jsonl');

SELECT async_double_negative(counter) AS counter FROM impulse_source;
