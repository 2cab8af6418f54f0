-- As chatterd now does it: the insert marked as announced by chatterd, then the announcement, a transaction
-- of its own that does not wait for its WAL flush.
INSERT INTO chatts (name, message, geodata) SELECT 'bench', 'message', NULL WHERE set_config('chatterd.announces_insert', 'on', true) = 'on';
SELECT set_config('synchronous_commit', 'off', true), pg_notify('chatts_changed', 'insert bench');
