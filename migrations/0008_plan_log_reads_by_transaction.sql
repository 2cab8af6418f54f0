-- The log's reads (0007's chatts_events) look up each transaction of a tick in the (xid, seq) indexes. PostgreSQL
-- plans them from the xid column's statistics, and a store loaded in one statement (a restore, a bulk import, the
-- bench's seed) has one xid for nearly every row: n_distinct 1, so a lookup was planned as a walk of the whole seq
-- index, filtered. At 100 000 such chatts a tick holding a removal took 27 ms to read instead of 0.3 ms.
-- Transactions here are batches of posts, a few rows each, and one bulk load is the exception: the planner is told
-- so (about 20 rows a transaction), and ANALYZE applies it now rather than at the next autovacuum.
ALTER TABLE chatts ALTER COLUMN xid SET (n_distinct = -0.05);
ALTER TABLE chatts_removals ALTER COLUMN xid SET (n_distinct = -0.05);
ANALYZE chatts;
ANALYZE chatts_removals;
