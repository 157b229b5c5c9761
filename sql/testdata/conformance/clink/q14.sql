-- count_char(extra, 'c') inlined: clink has no CREATE FUNCTION
CREATE VIEW nexmark_q14 AS
SELECT
  auction,
  bidder,
  0.908 * price AS price,
  CASE
    WHEN extract(hour FROM date_time) >= 8 AND extract(hour FROM date_time) <= 18 THEN 'dayTime'
    WHEN extract(hour FROM date_time) <= 6 OR extract(hour FROM date_time) >= 20 THEN 'nightTime'
    ELSE 'otherTime'
  END AS bidTimeType,
  date_time,
  LENGTH(extra) - LENGTH(REPLACE(extra, 'c', '')) AS c_counts
FROM bid
WHERE 0.908 * price > 1000000 AND 0.908 * price < 50000000;
