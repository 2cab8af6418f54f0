-- chatterd announces its own inserts itself, in a transaction of their own after they commit (ChattStore's
-- ChattsChangedNotice): a NOTIFY inside the inserting transaction holds PostgreSQL's server-wide notify lock from
-- before its commit until after its WAL flush (0003), so no two notifying inserts could share a flush. Its inserts
-- say so with the transaction-local setting chatterd.announces_insert; every other insert (psql, an older
-- chatterd) and every UPDATE, DELETE and TRUNCATE still notifies here, inside its transaction, as before.
-- The payload tells listeners what changed: 'insert' (rows were only added: fetching the new ones is enough) or ''
-- (anything else: read everything again). The trigger itself is 0003's: disabling chatts_changed still silences
-- every other writer, and listeners still check that one trigger before they trust notifications.
-- The migrator wraps this file in a transaction (no BEGIN/COMMIT here; the BEGIN below is PL/pgSQL's block).

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
