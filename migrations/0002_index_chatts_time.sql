-- Feeds list chatts oldest first: by time, then by seq for chatts posted in the same microsecond.
-- Ordering by seq alone could put an older chatt after a newer one, because concurrent inserts take
-- their sequence numbers and their timestamps (statement start) in different orders.

CREATE INDEX chatts_time_seq_idx ON chatts (time, seq);
