-- Chatts, in posting order. The migrator wraps this file in a transaction: no BEGIN/COMMIT here.

CREATE TABLE chatts (
    -- Posting order: unlike time, it is strictly increasing, even for two chatts in the same microsecond.
    seq bigint GENERATED ALWAYS AS IDENTITY,
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    -- Lengths count characters (Unicode scalar values), as the API does.
    name text NOT NULL CONSTRAINT chatts_name_length CHECK (char_length(name) BETWEEN 1 AND 32),
    message text NOT NULL CONSTRAINT chatts_message_length CHECK (char_length(message) <= 255),
    time timestamptz NOT NULL DEFAULT now(),
    geodata text CONSTRAINT chatts_geodata_length CHECK (char_length(geodata) <= 255)
);

-- Reading everything ORDER BY seq walks this index.
CREATE UNIQUE INDEX chatts_seq_key ON chatts (seq);
