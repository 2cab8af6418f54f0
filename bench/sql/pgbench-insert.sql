-- pgbench: one chatt per transaction with the insert chatterd prepares for a post, less its numbering from the
-- commit clock (migrations/0005), whose trigger bench_pgbench disables for the baseline. The values
-- come from pgbench -D (name, message, geodata) so that, with -M prepared, they travel as parameters
-- exactly as chatterd's do.
INSERT INTO chatts (name, message, geodata) VALUES (:name, :message, :geodata);
