-- rewritten: NOT IN (subquery) (not supported yet) becomes an anti-join:
-- a LEFT JOIN keeping the unmatched rows (a.id and s.auction are never NULL)
CREATE VIEW nexmark_q104 AS
SELECT a.id AS auction_id, a.item_name AS auction_item_name
FROM auction a LEFT JOIN (
    SELECT b.auction FROM bid b GROUP BY b.auction HAVING COUNT(*) < 20
) s ON a.id = s.auction
WHERE s.auction IS NULL;
