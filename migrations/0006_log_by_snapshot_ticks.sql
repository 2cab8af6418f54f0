-- The change log by snapshot ticks, replacing 0005's clock (README, "Live feed streams"). 0005 numbered every
-- committed chatt under one row lock that each insert held to its commit, so no two batches shared a WAL flush.
-- Now an insert takes no lock of the log's: each chatt records its transaction (`xid`), and a ticker, serialised by
-- an advisory lock that inserts never take, stores the snapshot it saw (`pg_current_snapshot()`). The chatts of tick
-- b are those whose transaction is visible in b's snapshot and was not in the snapshot of the tick before; the
-- ticker stores those transactions with the tick, so a reader of the log joins on them. Positions are (tick, seq):
-- ticks in the order they were made, chatts within a tick by seq. A transaction still open at a tick is in that
-- snapshot's in-progress list, and lands in the first tick after its commit: it holds back only its own rows.
-- The migrator wraps this file in a transaction (no BEGIN/COMMIT here; BEGIN below is PL/pgSQL's block).

-- Rows from before get xid 2 (FrozenTransactionId), which every snapshot sees: they are where the log begins.
-- A constant default, then the real one, so that existing rows are not rewritten.
ALTER TABLE chatts ADD COLUMN xid xid8 NOT NULL DEFAULT '2';
ALTER TABLE chatts ALTER COLUMN xid SET DEFAULT pg_current_xact_id();
CREATE INDEX chatts_xid_idx ON chatts (xid);
-- The log's functions below look chatts up by a few transaction ids, which only the index serves well; but the
-- planner's statistics of `xid` mislead it. A store loaded in one transaction, or migrated here (every older row
-- has xid 2), has one xid for nearly every row, and a lookup of xids not known when it is planned then looks like
-- one of the whole table: after a bulk load of 65 000 rows a tick scanned them all (12.7 ms a tick, against 0.2 ms
-- by the index). So a tick plans each lookup with its xids known, and the read of the log, which cannot (they come
-- from the ticks it joins), runs with sequential scans off (and JIT off, which their cost would set going).

-- 0005's numbering goes: nothing takes the clock's row lock at commit any more. The position column and the
-- clock's `last` stay, unused, so that an older chatterd still running through an upgrade can still insert; its
-- unique index goes, as it would cost every insert an index entry for nothing.
DROP TRIGGER chatts_number ON chatts;
DROP FUNCTION number_chatt();
DROP INDEX chatts_position_key;

-- The epoch (chatts_clock.epoch) still moves at the commit of an edit of a row others may have seen: any row but
-- those its own transaction wrote. A tick records the epoch its snapshot saw; a change of epoch between two
-- ticks cannot be followed, and readers of the log start over from the later one.
DROP TRIGGER chatts_epoch ON chatts;
CREATE CONSTRAINT TRIGGER chatts_epoch AFTER UPDATE OR DELETE ON chatts DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (OLD.xid <> pg_current_xact_id()) EXECUTE FUNCTION advance_chatts_epoch();

-- 0004's function again: 0005's numbering UPDATE, which it left out, is gone. chatterd's own inserts still say
-- they are its (chatterd.announces_insert) and notify nothing: the tick that takes them in is announced instead.
CREATE OR REPLACE FUNCTION notify_chatts_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        IF current_setting('chatterd.announces_insert', true) = 'on' THEN
            RETURN NULL;
        END IF;
        PERFORM pg_notify('chatts_changed', 'insert');
    ELSE
        PERFORM pg_notify('chatts_changed', '');
    END IF;
    RETURN NULL;
END;
$$;

CREATE TABLE chatts_ticks (
    tick bigint PRIMARY KEY,
    snapshot pg_snapshot NOT NULL,
    -- The transactions whose chatts this tick's snapshot was the first to see.
    xids xid8[] NOT NULL,
    -- chatts_clock.epoch in the same snapshot.
    epoch bigint NOT NULL,
    -- Random: a store restored from a backup, or a standby promoted without the last ticks, makes ticks again
    -- under numbers it has given before; their tokens tell them apart, so a position is never taken for another.
    token bigint NOT NULL,
    made timestamptz NOT NULL DEFAULT now()
);

-- The first tick: what the store holds now.
INSERT INTO chatts_ticks (tick, snapshot, xids, epoch, token)
SELECT 1, pg_current_snapshot(), '{}', epoch, floor(random() * 281474976710656)::bigint FROM chatts_clock;

-- Makes a tick when the store has anything new since the last one (chatts of transactions it did not see, or
-- another epoch), and returns the newest tick. Run it in a transaction of its own at READ COMMITTED, as a plain
-- `SELECT * FROM chatts_tick()`: each statement below then takes its own snapshot, after the lock is held.
-- A tick made is announced (`NOTIFY chatts_changed, 'tick <origin>'`, the origin naming the chatterd process that
-- ticked, if one did), at its commit: the other readers of the log read it then, and need not tick themselves.
CREATE FUNCTION chatts_tick(origin text DEFAULT NULL) RETURNS chatts_ticks
LANGUAGE plpgsql AS $$
DECLARE
    last chatts_ticks;
    made chatts_ticks;
    late xid8[];
BEGIN
    -- Ticks follow one another: each is made after the one before has committed, so each snapshot sees at least
    -- what the one before saw. The key is the ASCII of 'chattlog'.
    PERFORM pg_advisory_xact_lock(7163486017160162407);
    SELECT * INTO last FROM chatts_ticks ORDER BY tick DESC LIMIT 1;
    IF NOT FOUND OR pg_snapshot_xmax(last.snapshot) > pg_snapshot_xmax(pg_current_snapshot()) THEN
        -- No tick to follow, or the last one was made in another transaction-id space (a dump restored into a
        -- younger cluster): the log starts over.
        RETURN chatts_restart_log();
    END IF;
    -- The snapshot stored and the epoch it saw, in one statement. The statements after it see at least what it saw
    -- committed, and a chatt is this tick's when its transaction is visible in the stored snapshot.
    SELECT last.tick + 1, pg_current_snapshot(), '{}', epoch, floor(random() * 281474976710656)::bigint, now()
    INTO made FROM chatts_clock;
    -- Only transactions from the last tick's horizon on, and those it saw in progress, can be new; so a
    -- transaction left open for long widens no scan (PgQ's batch query does the same).
    made.xids := coalesce((SELECT array_agg(DISTINCT c.xid ORDER BY c.xid) FROM chatts c
        WHERE c.xid >= pg_snapshot_xmax(last.snapshot) AND c.xid < pg_snapshot_xmax(made.snapshot)
            AND pg_visible_in_snapshot(c.xid, made.snapshot)), '{}');
    late := ARRAY(SELECT x FROM pg_snapshot_xip(last.snapshot) AS x WHERE pg_visible_in_snapshot(x, made.snapshot));
    IF cardinality(late) > 0 THEN
        made.xids := ARRAY(SELECT x FROM unnest(made.xids) AS x
            UNION SELECT c.xid FROM chatts c WHERE c.xid = ANY (late) ORDER BY 1);
    END IF;
    IF cardinality(made.xids) = 0 AND made.epoch = last.epoch THEN
        RETURN last;
    END IF;
    INSERT INTO chatts_ticks SELECT made.*;
    PERFORM pg_notify('chatts_changed', 'tick' || coalesce(' ' || origin, ''));
    -- Keep the last 10 000 ticks, pruned every thousandth: each carries at least one chatt when it is made, and a
    -- client further behind than the streams' 5 000 is reset anyway.
    IF made.tick % 1000 = 0 THEN
        DELETE FROM chatts_ticks WHERE tick <= made.tick - 10000;
    END IF;
    RETURN made;
END;
$$;

-- Starts the log over: a new epoch, whose first tick sees every chatt stored now (their transactions' ids are set
-- to 2, so that a later transaction given the same number in this cluster is not mistaken for them). Readers of
-- the log start over from it. chatts_tick calls it when it must; an operator calls it (`SELECT
-- chatts_restart_log()`) after restoring chatts by other means than pg_restore of a whole database.
CREATE FUNCTION chatts_restart_log() RETURNS chatts_ticks
LANGUAGE plpgsql AS $$
DECLARE
    first chatts_ticks;
BEGIN
    PERFORM pg_advisory_xact_lock(7163486017160162407);
    -- Not an edit anyone must be told of: the new epoch is.
    PERFORM set_config('chatterd.epoch_advanced', 'on', true);
    UPDATE chatts SET xid = '2' WHERE xid <> '2';
    UPDATE chatts_clock SET epoch = epoch + 1;
    SELECT (SELECT coalesce(max(tick), 0) + 1 FROM chatts_ticks), pg_current_snapshot(), '{}', epoch,
        floor(random() * 281474976710656)::bigint, now()
    INTO first FROM chatts_clock;
    DELETE FROM chatts_ticks;
    INSERT INTO chatts_ticks SELECT first.*;
    RETURN first;
END;
$$;

-- The log from tick `after_tick` on (its chatts after `after_seq`; every chatt of a later tick), at most
-- `row_limit` rows: a chatt, or a tick with none left to give (NULL chatt columns). Ticks walk their primary key
-- in order; each tick's chatts come from the xid index.
CREATE FUNCTION chatts_log(after_tick bigint, after_seq bigint, row_limit integer)
RETURNS TABLE (tick bigint, token bigint, epoch bigint,
    seq bigint, name text, message text, id text, "timestamp" text, geodata text)
LANGUAGE sql STABLE SET enable_seqscan = off SET jit = off AS $$
    SELECT t.tick, t.token, t.epoch, c.seq, c.name, c.message, c.id::text,
        to_char(c.time AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), c.geodata
    FROM chatts_ticks AS t LEFT JOIN LATERAL (
        SELECT chatts.seq, chatts.name, chatts.message, chatts.id, chatts.time, chatts.geodata FROM chatts
        WHERE chatts.xid = ANY (t.xids) AND (t.tick > after_tick OR chatts.seq > after_seq)
    ) AS c ON true
    WHERE t.tick >= after_tick
    ORDER BY t.tick, c.seq
    LIMIT row_limit
$$;

-- What a reader of the log does each time it is told something may have changed, in one statement and one round
-- trip: a tick (chatts_tick), then the log as chatts_log reads it, every row naming the newest tick too;
-- `after_tick` past every tick reads only that. In the tick's own transaction, so the log is read after the tick
-- is made, and its rows reach the reader only once the tick has committed. `origin` names the tick's
-- announcement, as chatts_tick's.
CREATE FUNCTION chatts_log_after(after_tick bigint, after_seq bigint, row_limit integer, origin text DEFAULT NULL)
RETURNS TABLE (newest_tick bigint, newest_token bigint, newest_epoch bigint, tick bigint, token bigint, epoch bigint,
    seq bigint, name text, message text, id text, "timestamp" text, geodata text)
LANGUAGE plpgsql AS $$
DECLARE
    newest chatts_ticks;
BEGIN
    newest := chatts_tick(origin);
    -- From the newest tick at the latest, so that a reader whose tick the store no longer has learns where it
    -- stands.
    RETURN QUERY
    SELECT newest.tick, newest.token, newest.epoch, l.*
    FROM chatts_log(least(after_tick, newest.tick), after_seq, row_limit) AS l;
END;
$$;
