-- Arroyo: crates/arroyo-sql-testing/src/test/queries/debezium_agg.sql, the
-- version the golden was made with (its columns c, d, q: between
-- ArroyoSystems/arroyo@26e457f691fb080dd8671378e284e03a4db2aedb, which
-- has c and q, and @aa8cd24041dd613e8f100452bb66087f8001b625, which adds
-- d and m = median(quantity)).
-- Not comparable: its input, $input_dir/aggregate_updates.json (a Debezium
-- changelog of orders), is not in the shared data, so the test only
-- checks that this translation plans (EXPLAIN); clink's jsonl table reads
-- format = 'debezium-json' as a changelog (+I, -U/+U, -D).
-- Source: a jsonl table over aggregate_updates.jsonl with Arroyo's format;
-- FLOAT is DOUBLE, INTEGER is INT. Sink: debezium_json with PRIMARY KEY
-- id: the final state per product; c INT, d INT, q INT are BIGINT here.
CREATE TABLE debezium_source (
  id INT PRIMARY KEY,
  customer_name TEXT,
  product_name TEXT,
  quantity INTEGER,
  price FLOAT,
  order_date TIMESTAMP,
  status TEXT
) WITH (connector = 'jsonl', path = 'aggregate_updates.jsonl', format = 'debezium-json');

SELECT concat('p_', product_name) AS id, count(*) AS c, count(DISTINCT customer_name) AS d,
       sum(quantity + 5) + 10 AS q
FROM debezium_source
GROUP BY concat('p_', product_name);
