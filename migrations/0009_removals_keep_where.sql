-- Where a removed chatt was (README, "Viewports"): a live stream filtered by a box (`?bbox=` on /getmaps/stream)
-- sends a removal only to the clients whose box held the chatt, so a removal records the chatt's geodata ('' for a
-- chatt that had none), and the log's reads give it with the removal in their `geodata` column. NULL there is a
-- removal recorded before this file, whose place is unknown: every filtered client gets it. The migrator wraps
-- this file in a transaction.

ALTER TABLE chatts_removals ADD COLUMN chatt_geodata text;

CREATE OR REPLACE FUNCTION record_chatt_removal() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO chatts_removals (seq, id, chatt_seq, chatt_time, chatt_geodata, removed_by, reason)
    VALUES (nextval(pg_get_serial_sequence('chatts', 'seq')), OLD.id, OLD.seq, OLD.time, coalesce(OLD.geodata, ''),
        coalesce(nullif(current_setting('chatterd.removed_by', true), ''), 'sql:' || session_user),
        nullif(current_setting('chatterd.removal_reason', true), ''));
    RETURN NULL;
END;
$$;

-- 0007's read of the log, the removals' geodata in place of NULL.
CREATE OR REPLACE FUNCTION chatts_events(after_tick bigint, after_seq bigint, row_limit integer)
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
                            chatts_removals.chatt_time, chatts_removals.chatt_geodata, chatts_removals.chatt_seq
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
                SELECT chatts_removals.seq, true, NULL, NULL, chatts_removals.id, chatts_removals.chatt_time,
                    chatts_removals.chatt_geodata, chatts_removals.chatt_seq
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
