-- Arroyo: crates/arroyo-sql-testing/src/test/queries/cast_to_sink_type.sql
-- (ArroyoSystems/arroyo@b42cbb3c1673b53892d6e2ab01792e1b0c5d1438).
-- Source: jsonl table over cars.jsonl; event_time_field = 'timestamp' is a
-- WATERMARK FOR timestamp with a 1 minute delay (the input is at most 23 s
-- out of order, so no row is late; nothing here depends on it).
-- Sink: the sink declares driver_id TEXT and Arroyo casts the BIGINT to it
-- on the way in; clink has no typed sink in a SELECT, so the cast is
-- written out: CAST(driver_id AS VARCHAR).
CREATE TABLE cars (
  timestamp TIMESTAMP,
  driver_id BIGINT,
  event_type TEXT,
  location TEXT,
  WATERMARK FOR timestamp AS timestamp - INTERVAL '1' MINUTE
) WITH (connector = 'jsonl', path = 'cars.jsonl');

SELECT timestamp, CAST(driver_id AS VARCHAR) AS driver_id FROM cars;
