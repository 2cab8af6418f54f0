-- Removals in the change log (README, "Live feed streams" and "Moderation"): a chatt deleted, by a moderator, by
-- retention or by `DELETE` in psql, is an event of the log like a post, in commit order, instead of an edit that
-- starts the log over. Each deleted row leaves a removal, which records its transaction as a chatt does; a tick
-- takes in the transactions of removals as it does those of chatts, and the log gives both, in the order of their
-- sequence numbers.
-- The migrator wraps this file in a transaction (no BEGIN/COMMIT here; BEGIN below is PL/pgSQL's block).

-- The removals, kept: they are the log's events and the audit of who removed what, when and why.
CREATE TABLE chatts_removals (
    -- The removal's place in its tick's events, from the chatts' own sequence, so that a tick's chatts and
    -- removals are ordered together (a removal's number is taken after its chatt was committed, so it is higher).
    seq bigint PRIMARY KEY,
    id uuid NOT NULL,
    -- Where the chatt stood in feed order, so that `since=<its id>` still finds its place.
    chatt_seq bigint NOT NULL,
    chatt_time timestamptz NOT NULL,
    xid xid8 NOT NULL DEFAULT pg_current_xact_id(),
    removed_at timestamptz NOT NULL DEFAULT now(),
    -- A moderator's name from chatterd's token file, `retention`, or `sql:<role>` for a DELETE made otherwise.
    removed_by text NOT NULL,
    reason text
);
CREATE INDEX chatts_removals_xid_seq_idx ON chatts_removals (xid, seq);
CREATE INDEX chatts_removals_id_idx ON chatts_removals (id);

-- Who removes and why, for the removals of this transaction: chatts_remove sets them; any other DELETE is named
-- after the role that made it.
CREATE FUNCTION record_chatt_removal() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO chatts_removals (seq, id, chatt_seq, chatt_time, removed_by, reason)
    VALUES (nextval(pg_get_serial_sequence('chatts', 'seq')), OLD.id, OLD.seq, OLD.time,
        coalesce(nullif(current_setting('chatterd.removed_by', true), ''), 'sql:' || session_user),
        nullif(current_setting('chatterd.removal_reason', true), ''));
    RETURN NULL;
END;
$$;

-- The log's events are looked up by transaction, then ordered by sequence number: the index holds both, so the
-- rows of a tick come from it in order for each transaction. 0006's index on xid alone goes: this one serves the
-- ticks' lookups too.
CREATE INDEX chatts_xid_seq_idx ON chatts (xid, seq);
DROP INDEX chatts_xid_idx;

-- A row deleted by the transaction that inserted it was never shown: no removal.
CREATE TRIGGER chatts_removal AFTER DELETE ON chatts
    FOR EACH ROW WHEN (OLD.xid <> pg_current_xact_id()) EXECUTE FUNCTION record_chatt_removal();

-- A DELETE no longer moves the epoch; an UPDATE (of anything a reader sees) and a TRUNCATE still do.
DROP TRIGGER chatts_epoch ON chatts;
CREATE CONSTRAINT TRIGGER chatts_epoch AFTER UPDATE ON chatts DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (OLD.xid <> pg_current_xact_id()) EXECUTE FUNCTION advance_chatts_epoch();

-- Removes one chatt, as `by` and for `reason`: true if it was there to remove. In the caller's transaction (a
-- statement of its own is one), which the removal's record joins.
CREATE FUNCTION chatts_remove(chatt uuid, by text, why text) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('chatterd.removed_by', by, true);
    PERFORM set_config('chatterd.removal_reason', coalesce(why, ''), true);
    DELETE FROM chatts WHERE id = chatt;
    RETURN FOUND;
END;
$$;

-- Retention (`--retention-days`): removes up to `batch` of the oldest chatts posted more than `days` days ago, as
-- `retention`, and returns how many. One process at a time: another's batch under way, it removes nothing (its
-- advisory lock is not waited for; the key is the ASCII of 'chattret'). In the caller's transaction.
CREATE FUNCTION chatts_retain(days integer, batch integer) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    removed integer;
BEGIN
    IF NOT pg_try_advisory_xact_lock(7163486017159505268) THEN
        RETURN 0;
    END IF;
    PERFORM set_config('chatterd.removed_by', 'retention', true);
    PERFORM set_config('chatterd.removal_reason', format('older than %s days', days), true);
    DELETE FROM chatts WHERE id IN (
        SELECT id FROM chatts WHERE time < now() - make_interval(days => days) ORDER BY time, seq LIMIT batch);
    GET DIAGNOSTICS removed = ROW_COUNT;
    RETURN removed;
END;
$$;

-- 0006's, with the transactions of removals taken in beside those of chatts.
CREATE OR REPLACE FUNCTION chatts_tick(origin text DEFAULT NULL) RETURNS chatts_ticks
LANGUAGE plpgsql AS $$
DECLARE
    last chatts_ticks;
    made chatts_ticks;
    late xid8[];
BEGIN
    PERFORM pg_advisory_xact_lock(7163486017160162407);
    SELECT * INTO last FROM chatts_ticks ORDER BY tick DESC LIMIT 1;
    IF NOT FOUND OR pg_snapshot_xmax(last.snapshot) > pg_snapshot_xmax(pg_current_snapshot()) THEN
        RETURN chatts_restart_log();
    END IF;
    SELECT last.tick + 1, pg_current_snapshot(), '{}', epoch, floor(random() * 281474976710656)::bigint, now()
    INTO made FROM chatts_clock;
    made.xids := ARRAY(
        SELECT c.xid FROM chatts c
        WHERE c.xid >= pg_snapshot_xmax(last.snapshot) AND c.xid < pg_snapshot_xmax(made.snapshot)
            AND pg_visible_in_snapshot(c.xid, made.snapshot)
        UNION
        SELECT r.xid FROM chatts_removals r
        WHERE r.xid >= pg_snapshot_xmax(last.snapshot) AND r.xid < pg_snapshot_xmax(made.snapshot)
            AND pg_visible_in_snapshot(r.xid, made.snapshot)
        ORDER BY 1);
    late := ARRAY(SELECT x FROM pg_snapshot_xip(last.snapshot) AS x WHERE pg_visible_in_snapshot(x, made.snapshot));
    IF cardinality(late) > 0 THEN
        made.xids := ARRAY(SELECT x FROM unnest(made.xids) AS x
            UNION SELECT c.xid FROM chatts c WHERE c.xid = ANY (late)
            UNION SELECT r.xid FROM chatts_removals r WHERE r.xid = ANY (late) ORDER BY 1);
    END IF;
    IF cardinality(made.xids) = 0 AND made.epoch = last.epoch THEN
        RETURN last;
    END IF;
    INSERT INTO chatts_ticks SELECT made.*;
    PERFORM pg_notify('chatts_changed', 'tick' || coalesce(' ' || origin, ''));
    IF made.tick % 1000 = 0 THEN
        DELETE FROM chatts_ticks WHERE tick <= made.tick - 10000;
    END IF;
    RETURN made;
END;
$$;

-- 0006's reads of the log, with the removals: a row is a chatt posted (`removed` false), a chatt removed (true:
-- its id, and its time and sequence number as `timestamp` and `chatt_seq`), or a tick with neither (NULL). Under
-- new names: 0006's chatts_log and chatts_log_after stay, for an older chatterd still running through an upgrade
-- (they give the chatts alone, so such a process keeps a removed chatt in its feed until it is restarted).
-- A page is the ticks from `after_tick` on (its events after `after_seq`; every event of a later tick) up to about
-- `row_limit` rows: the last tick comes whole, its ties kept, however many rows that makes, but for a tick of a few
-- transactions, whose events come a page at a time, each transaction's from the (xid, seq) index in order (a bulk
-- load's one transaction of 100 000 rows is read 1 000 a page). A tick of many transactions (pgbench's, one row
-- each) is given whole, each transaction looked up once: a page stopping inside it would look them all up again
-- (4.2 s a page at 16 000). One statement: a thousand ticks whose chatts were deleted since cost a join, not a
-- query each.
CREATE FUNCTION chatts_events(after_tick bigint, after_seq bigint, row_limit integer)
RETURNS TABLE (tick bigint, token bigint, epoch bigint,
    seq bigint, removed boolean, name text, message text, id text, "timestamp" text, geodata text, chatt_seq bigint)
LANGUAGE sql STABLE SET enable_seqscan = off SET jit = off AS $$
    SELECT * FROM (
        SELECT t.tick, t.token, t.epoch, e.seq, e.removed, e.name, e.message, e.id::text,
            to_char(e.time AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), e.geodata, e.chatt_seq
        FROM chatts_ticks AS t LEFT JOIN LATERAL (
            SELECT few.* FROM (
                SELECT events.* FROM (
                    SELECT c.* FROM unnest(t.xids) AS x(xid), LATERAL (
                        SELECT chatts.seq, false AS removed, chatts.name, chatts.message, chatts.id, chatts.time,
                            chatts.geodata, NULL::bigint AS chatt_seq
                        FROM chatts
                        WHERE chatts.xid = x.xid
                            AND chatts.seq > CASE WHEN t.tick > after_tick THEN 0 ELSE after_seq END
                        ORDER BY chatts.seq LIMIT row_limit) AS c
                    UNION ALL
                    SELECT r.* FROM unnest(t.xids) AS x(xid), LATERAL (
                        SELECT chatts_removals.seq, true, NULL::text, NULL::text, chatts_removals.id,
                            chatts_removals.chatt_time, NULL::text, chatts_removals.chatt_seq
                        FROM chatts_removals
                        WHERE chatts_removals.xid = x.xid
                            AND chatts_removals.seq > CASE WHEN t.tick > after_tick THEN 0 ELSE after_seq END
                        ORDER BY chatts_removals.seq LIMIT row_limit) AS r
                ) AS events
                ORDER BY events.seq LIMIT row_limit
            ) AS few
            WHERE cardinality(t.xids) <= 64
            UNION ALL
            SELECT many.* FROM (
                SELECT chatts.seq, false, chatts.name, chatts.message, chatts.id, chatts.time, chatts.geodata,
                    NULL::bigint
                FROM chatts
                WHERE chatts.xid = ANY (t.xids)
                    AND chatts.seq > CASE WHEN t.tick > after_tick THEN 0 ELSE after_seq END
                UNION ALL
                SELECT chatts_removals.seq, true, NULL, NULL, chatts_removals.id, chatts_removals.chatt_time, NULL,
                    chatts_removals.chatt_seq
                FROM chatts_removals
                WHERE chatts_removals.xid = ANY (t.xids)
                    AND chatts_removals.seq > CASE WHEN t.tick > after_tick THEN 0 ELSE after_seq END
            ) AS many
            WHERE cardinality(t.xids) > 64
        ) AS e ON true
        WHERE t.tick >= after_tick
        ORDER BY t.tick
        FETCH FIRST row_limit ROWS WITH TIES
    ) AS page
    ORDER BY page.tick, page.seq
$$;

CREATE FUNCTION chatts_events_after(after_tick bigint, after_seq bigint, row_limit integer, origin text DEFAULT NULL)
RETURNS TABLE (newest_tick bigint, newest_token bigint, newest_epoch bigint, tick bigint, token bigint, epoch bigint,
    seq bigint, removed boolean, name text, message text, id text, "timestamp" text, geodata text, chatt_seq bigint)
LANGUAGE plpgsql AS $$
DECLARE
    newest chatts_ticks;
BEGIN
    newest := chatts_tick(origin);
    RETURN QUERY
    SELECT newest.tick, newest.token, newest.epoch, l.*
    FROM chatts_events(least(after_tick, newest.tick), after_seq, row_limit) AS l;
END;
$$;

-- 0006's, with the removals' transaction ids set to 2 as the chatts' are: ids of another cluster's past.
CREATE OR REPLACE FUNCTION chatts_restart_log() RETURNS chatts_ticks
LANGUAGE plpgsql AS $$
DECLARE
    first chatts_ticks;
BEGIN
    PERFORM pg_advisory_xact_lock(7163486017160162407);
    PERFORM set_config('chatterd.epoch_advanced', 'on', true);
    UPDATE chatts SET xid = '2' WHERE xid <> '2';
    UPDATE chatts_removals SET xid = '2' WHERE xid <> '2';
    UPDATE chatts_clock SET epoch = epoch + 1;
    SELECT (SELECT coalesce(max(tick), 0) + 1 FROM chatts_ticks), pg_current_snapshot(), '{}', epoch,
        floor(random() * 281474976710656)::bigint, now()
    INTO first FROM chatts_clock;
    DELETE FROM chatts_ticks;
    INSERT INTO chatts_ticks SELECT first.*;
    RETURN first;
END;
$$;
