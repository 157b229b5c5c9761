-- rewritten: IN (subquery) (not supported yet) becomes a join with the
-- grouped subquery, whose auction column is distinct
CREATE VIEW nexmark_q103 AS
SELECT a.id AS auction_id, a.item_name AS auction_item_name
FROM auction a JOIN (
    SELECT b.auction FROM bid b GROUP BY b.auction HAVING COUNT(*) >= 20
) s ON a.id = s.auction;
