-- Batches of 16 rows in one statement, as chatterd's group commit writes them, notified by the trigger.
INSERT INTO chatts (name, message, geodata) SELECT n, m, g FROM unnest(array_fill('bench'::text, ARRAY[16]), array_fill('message'::text, ARRAY[16]), array_fill(NULL::text, ARRAY[16])) AS b(n, m, g);
