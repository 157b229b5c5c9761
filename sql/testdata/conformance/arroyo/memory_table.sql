-- Arroyo: crates/arroyo-sql-testing/src/test/queries/memory_table.sql
-- (ArroyoSystems/arroyo@e6b7dd057da9c8fbcec21b935216fdadf5183124).
-- Source: jsonl table over cars.jsonl (no event time, as in Arroyo).
-- Arroyo's memory table (a CREATE TABLE without connector, written by one
-- INSERT and read by another) is clink's values table (also the default
-- without WITH): INSERT INTO memory SELECT ... appends the cars' rows,
-- then the query reads them. Arroyo inserts by position (driver_id AS
-- other_driver_id lands in memory.driver_id), so does clink. The sink
-- cars_output (driver_id, event_type) is the final SELECT.
CREATE TABLE cars (
  timestamp TIMESTAMP,
  driver_id BIGINT,
  event_type TEXT,
  location TEXT
) WITH (connector = 'jsonl', path = 'cars.jsonl');

CREATE TABLE memory (
  event_type TEXT,
  location TEXT,
  driver_id BIGINT
);

INSERT INTO memory SELECT event_type, location, driver_id AS other_driver_id FROM cars;

SELECT driver_id, event_type FROM memory;
