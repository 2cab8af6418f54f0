-- Tells every listening chatterd (LISTEN chatts_changed) that chatts changed, whoever changed them: a post, or
-- an operator's DELETE, UPDATE or TRUNCATE in psql. Their cached feeds then re-read instead of polling a version.
-- One notification per statement, not per row; PostgreSQL sends it only when the transaction commits, and
-- folds identical notifications of one transaction into one.
-- Cost: a notifying transaction holds a server-wide lock (PostgreSQL 15) from just before its commit until after it, so
-- notifying commits never share a WAL flush. chatterd commits once per batch of posts, so it barely notices;
-- many concurrent one-row writers do (pgbench -c64 with one INSERT a transaction drops from ~8k to ~0.3-1.3k tps
-- here), which is why a pgbench baseline must run with this trigger disabled.
-- The migrator wraps this file in a transaction
-- (no BEGIN/COMMIT here; the BEGIN below is PL/pgSQL's block, inside a dollar-quoted body).

CREATE FUNCTION notify_chatts_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('chatts_changed', '');
    RETURN NULL;
END;
$$;

CREATE TRIGGER chatts_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON chatts
    FOR EACH STATEMENT EXECUTE FUNCTION notify_chatts_changed();
