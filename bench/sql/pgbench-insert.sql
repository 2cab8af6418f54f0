-- pgbench: one chatt per transaction with the very statement chatterd prepares for a post. The values
-- come from pgbench -D (name, message, geodata) so that, with -M prepared, they travel as parameters
-- exactly as chatterd's do.
INSERT INTO chatts (name, message, geodata) VALUES (:name, :message, :geodata);
