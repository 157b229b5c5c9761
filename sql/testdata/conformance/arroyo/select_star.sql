-- Arroyo: crates/arroyo-sql-testing/src/test/queries/select_star.sql
-- (ArroyoSystems/arroyo@1c09c449a2ccfb3e4e98d2c209f99df20b6b2a2d).
-- Source: Arroyo's single_file json source over $input_dir/cars.json is
-- clink's jsonl table over cars.jsonl (fields matched by name). Arroyo
-- declares no event time here, so neither does clink (no WATERMARK).
-- Sink: INSERT INTO cars_output SELECT * is the query itself.
CREATE TABLE cars (
  timestamp TIMESTAMP,
  driver_id BIGINT,
  event_type TEXT,
  location TEXT
) WITH (connector = 'jsonl', path = 'cars.jsonl');

SELECT * FROM cars;
