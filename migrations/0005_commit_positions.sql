-- Commit positions (the live feed's `E-N`, docs/API.md): every committed chatt takes the next number of a one-row
-- clock, under the clock row's lock held to its commit, so position order is commit order and visibility order,
-- and the numbers are dense (a rollback gives its numbers back). Whoever has read up to position N has seen every
-- chatt numbered up to N, and reads the later ones by position. The epoch changes with every UPDATE, DELETE and
-- TRUNCATE of chatts: positions read before it can no longer be resumed from.
--
-- chatterd numbers its own inserts in the inserting statement (ChattStore's ChattBatchInsert), the last before its
-- commit, so it holds the lock only through the commit. Any other insert (psql, an older chatterd) leaves position
-- NULL, and a deferred trigger numbers the row at commit; an UPDATE or DELETE moves the epoch at its commit too. So
-- a long-open psql transaction holds up nobody until it commits. (TRUNCATE locks the whole table anyway.)
-- The migrator wraps this file in a transaction (no BEGIN/COMMIT here; BEGIN below is PL/pgSQL's block).

-- Locks chatts (ACCESS EXCLUSIVE) before counting it, so no insert commits between the count and the numbering.
ALTER TABLE chatts ADD COLUMN position bigint;

CREATE TABLE chatts_clock (
    epoch bigint NOT NULL,
    last bigint NOT NULL
);
-- One row: a second would make two clocks.
CREATE UNIQUE INDEX chatts_clock_one_row ON chatts_clock ((true));
INSERT INTO chatts_clock (epoch, last) SELECT 1, count(*) FROM chatts;

UPDATE chatts SET position = numbered.position
FROM (SELECT seq, row_number() OVER (ORDER BY seq) AS position FROM chatts) AS numbered
WHERE chatts.seq = numbered.seq;
CREATE UNIQUE INDEX chatts_position_key ON chatts (position);

-- Numbers, at commit, a row inserted (or set back to NULL) by anyone but chatterd. The row may be gone by then, or
-- numbered already; its own transaction wrote it, so nobody else can change it meanwhile. The numbering UPDATE says
-- so in a transaction-local setting, so that it does not notify an edit (nor does it move the epoch: see below).
CREATE FUNCTION number_chatt() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    next bigint;
BEGIN
    PERFORM 1 FROM chatts WHERE id = NEW.id AND position IS NULL;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    UPDATE chatts_clock SET last = last + 1 RETURNING last INTO next;
    PERFORM set_config('chatterd.numbering', 'on', true);
    UPDATE chatts SET position = next WHERE id = NEW.id;
    PERFORM set_config('chatterd.numbering', 'off', true);
    RETURN NULL;
END;
$$;

CREATE CONSTRAINT TRIGGER chatts_number AFTER INSERT OR UPDATE ON chatts DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (NEW.position IS NULL) EXECUTE FUNCTION number_chatt();

-- Once per transaction, however many rows it edits (a transaction-local setting remembers).
CREATE FUNCTION advance_chatts_epoch() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('chatterd.epoch_advanced', true) IS DISTINCT FROM 'on' THEN
        PERFORM set_config('chatterd.epoch_advanced', 'on', true);
        UPDATE chatts_clock SET epoch = epoch + 1;
    END IF;
    RETURN NULL;
END;
$$;

-- Only rows others may have seen: a numbered one. The numbering UPDATE changes only rows not numbered yet, and a
-- transaction editing its own new rows has shown them to nobody.
CREATE CONSTRAINT TRIGGER chatts_epoch AFTER UPDATE OR DELETE ON chatts DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (OLD.position IS NOT NULL) EXECUTE FUNCTION advance_chatts_epoch();
CREATE TRIGGER chatts_epoch_truncate AFTER TRUNCATE ON chatts
    FOR EACH STATEMENT EXECUTE FUNCTION advance_chatts_epoch();

-- 0004's, but silent for the numbering UPDATE, which changes nothing a reader sees.
CREATE OR REPLACE FUNCTION notify_chatts_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        IF current_setting('chatterd.announces_insert', true) = 'on' THEN
            RETURN NULL;
        END IF;
        PERFORM pg_notify('chatts_changed', 'insert');
    ELSIF current_setting('chatterd.numbering', true) IS DISTINCT FROM 'on' THEN
        PERFORM pg_notify('chatts_changed', '');
    END IF;
    RETURN NULL;
END;
$$;
