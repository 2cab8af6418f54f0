-- Batches of 16 rows, marked, then announced as chatterd does.
INSERT INTO chatts (name, message, geodata) SELECT n, m, g FROM unnest(array_fill('bench'::text, ARRAY[16]), array_fill('message'::text, ARRAY[16]), array_fill(NULL::text, ARRAY[16])) AS b(n, m, g) WHERE set_config('chatterd.announces_insert', 'on', true) = 'on';
SELECT set_config('synchronous_commit', 'off', true), pg_notify('chatts_changed', 'insert bench');
