-- Arroyo: crates/arroyo-sql-testing/src/test/queries/nexmark_q5.sql
-- (ArroyoSystems/arroyo@91ecf7183e1e863f5ec6b36c87b8ee10df175ee0).
-- Not comparable: its input, $input_dir/nexmark_bids.json, is neither in
-- the shared data nor in Arroyo's stored repository, and clink's Nexmark
-- generator is not Arroyo's, so the golden cannot be reproduced. The test
-- only checks that this translation plans (EXPLAIN).
-- Source: a jsonl table over nexmark_bids.jsonl; event_time_field =
-- 'datetime' is a WATERMARK with a 1 minute delay (the input's disorder is
-- unknown).
-- Windows: each hop(interval '2 second', interval '10 seconds') AS window
-- is the HOP TVF grouped by window_start, window_end; the join ON
-- AuctionBids.window = MaxBids.window compares both bounds. The sink's
-- columns (auction, count) take the SELECT's by position.
CREATE TABLE bids (
  datetime TIMESTAMP,
  auction BIGINT,
  WATERMARK FOR datetime AS datetime - INTERVAL '1' MINUTE
) WITH (connector = 'jsonl', path = 'nexmark_bids.jsonl');

SELECT AuctionBids.auction AS auction, AuctionBids.num AS count
FROM (
  SELECT auction, count(*) AS num, window_start, window_end
  FROM TABLE(HOP(TABLE bids, DESCRIPTOR(datetime), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
  GROUP BY auction, window_start, window_end
) AS AuctionBids
JOIN (
  SELECT max(CountBids.num) AS maxn, CountBids.window_start, CountBids.window_end
  FROM (
    SELECT count(*) AS num, window_start, window_end
    FROM TABLE(HOP(TABLE bids, DESCRIPTOR(datetime), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
    GROUP BY auction, window_start, window_end
  ) AS CountBids
  GROUP BY CountBids.window_start, CountBids.window_end
) AS MaxBids
ON AuctionBids.window_start = MaxBids.window_start AND AuctionBids.window_end = MaxBids.window_end
   AND AuctionBids.num >= MaxBids.maxn;
