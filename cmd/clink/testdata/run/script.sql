-- a bounded script for the clink run golden tests
CREATE TABLE sales (region VARCHAR, amount BIGINT, price DOUBLE, ts TIMESTAMP(3))
  WITH (connector = 'csv', path = 'sales.csv', header = 'true');
SELECT region, COUNT(*) AS n, SUM(amount) AS total FROM sales GROUP BY region;
SELECT region, price, ts FROM sales WHERE amount > 1;
