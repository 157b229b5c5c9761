-- Arroyo: crates/arroyo-sql-testing/src/test/queries/active_drivers.sql
-- (ArroyoSystems/arroyo@8791db217893c51884e9dc629b129030314e22d0).
-- Source: jsonl table over cars.jsonl; Arroyo's WATERMARK FOR timestamp is
-- a 1 minute delay here (the input is at most 23 s out of order, so no row
-- is late; the query has no window, so nothing depends on it).
-- Sink: debezium_json, so the golden is the final state of an updating
-- global aggregate; clink's final table is that state.
-- The derived table gets an alias (clink, like PostgreSQL before 16,
-- requires one) and the inner count(*) a name.
CREATE TABLE cars (
  timestamp TIMESTAMP,
  driver_id BIGINT,
  event_type TEXT,
  location TEXT,
  WATERMARK FOR timestamp AS timestamp - INTERVAL '1' MINUTE
) WITH (connector = 'jsonl', path = 'cars.jsonl');

SELECT count(*) AS drivers FROM (
  SELECT driver_id, count(*) AS n FROM cars GROUP BY driver_id HAVING count(*) > 85
) AS busy;
