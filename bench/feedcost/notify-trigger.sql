-- One chatt per transaction, notified by migration 0004's trigger inside the transaction (an unmarked insert).
INSERT INTO chatts (name, message, geodata) VALUES ('bench', 'message', NULL);
