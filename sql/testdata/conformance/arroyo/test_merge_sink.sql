-- Arroyo: crates/arroyo-sql-testing/src/test/queries/test_merge_sink.sql
-- (ArroyoSystems/arroyo@45a54ed40af6ee7853491c14560f0ad174efa327).
-- Source: jsonl table over cars.jsonl (no event time, as in Arroyo).
-- Arroyo merges two INSERTs into the one sink cars_output; the sink's
-- content is the UNION ALL of the two SELECTs, which is the query here.
CREATE TABLE cars (
  timestamp TIMESTAMP,
  driver_id BIGINT,
  event_type TEXT,
  location TEXT
) WITH (connector = 'jsonl', path = 'cars.jsonl');

SELECT * FROM cars WHERE driver_id = 100 AND event_type = 'pickup'
UNION ALL
SELECT * FROM cars WHERE driver_id = 101 AND event_type = 'dropoff';
