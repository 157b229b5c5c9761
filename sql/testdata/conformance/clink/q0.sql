CREATE VIEW nexmark_q0 AS SELECT auction, bidder, price, date_time FROM bid;
