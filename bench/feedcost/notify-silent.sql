-- The marked insert alone: what a commit costs with no notification at all.
INSERT INTO chatts (name, message, geodata) SELECT 'bench', 'message', NULL WHERE set_config('chatterd.announces_insert', 'on', true) = 'on';
