CREATE VIEW nexmark_q18 AS
SELECT auction, bidder, price, channel, url, date_time, extra
FROM (
    SELECT *,
        ROW_NUMBER() OVER (
            PARTITION BY bidder, auction
            ORDER BY date_time DESC, extra
            -- extra is addtionally added here to make the result deterministic
        ) AS rank_number
    FROM bid
)
WHERE rank_number <= 1;
