-- Arroyo: crates/arroyo-sql-testing/src/test/queries/json_operators.sql
-- (ArroyoSystems/arroyo@7d7e9768b23c0a35c23188a534600d4fc05ad171).
-- Source: Arroyo reads each cars.json line whole as one JSON value
-- ('json.unstructured' = 'true'); clink has no JSON type, so the column
-- is declared JSON as in Arroyo and the table fails at CREATE TABLE.
-- The query uses PostgreSQL's -> operator (JSON in, JSON text out); clink
-- has -> on VARCHAR, where a missing member is NULL as in PostgreSQL (Arroyo's
-- golden has the text null). Unsupported: the JSON type (issue 19, item 5).
CREATE TABLE cars (
  value JSON
) WITH (connector = 'jsonl', path = 'cars.jsonl');

SELECT 'test' AS a, value->'driver_id' AS b, value->'event_type' AS c, value->'not_a_field' AS d
FROM cars;
