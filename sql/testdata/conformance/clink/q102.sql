-- rewritten: the scalar subquery in HAVING (not supported yet) becomes a join
-- with the one-row global aggregate on a constant key
CREATE VIEW nexmark_q102 AS
SELECT c.auction_id, c.auction_item_name, c.bid_count
FROM (
    SELECT a.id AS auction_id, a.item_name AS auction_item_name, COUNT(b.auction) AS bid_count, 1 AS one
    FROM auction a JOIN bid b ON a.id = b.auction
    GROUP BY a.id, a.item_name
) c JOIN (
    SELECT COUNT(*) / COUNT(DISTINCT auction) AS threshold, 1 AS one FROM bid
) t ON c.one = t.one
WHERE c.bid_count >= t.threshold;
