-- ORDER BY bid_count DESC LIMIT 1000 dropped from the view: clink applies
-- ORDER BY / LIMIT only to a query's final result, and the expected result
-- (rowsort, 12 rows) is unaffected by a limit of 1000
CREATE VIEW nexmark_q105 AS
SELECT a.id AS auction_id, a.item_name AS auction_item_name, COUNT(b.auction) AS bid_count
FROM auction a JOIN bid b ON a.id = b.auction
GROUP BY a.id, a.item_name;
