-- +goose Up
-- The calendar revision: one counter that moves on with every committed
-- transaction that writes calendar_entries, and per provider the revision
-- of its latest change, so a search process can keep the busy intervals in
-- memory and reread only the providers whose calendar changed since the
-- revision it holds. Triggers keep both, so no write path can forget them.
CREATE TABLE calendar_revision (
    id       INTEGER PRIMARY KEY CHECK (id = 1),
    revision BIGINT NOT NULL
);
INSERT INTO calendar_revision (id, revision) VALUES (1, 0);

-- One row per provider whose calendar ever changed: bounded by the number
-- of providers, so it needs no pruning.
CREATE TABLE calendar_changes (
    provider_id TEXT PRIMARY KEY,
    rev         BIGINT NOT NULL
);
CREATE INDEX calendar_changes_rev ON calendar_changes (rev);

-- The trigger is deferred to commit: a transaction takes its revision (and
-- the counter's row lock) only while it commits, once per transaction (the
-- number is kept in a transaction-local setting), so revision order is
-- commit order: a reader that sees revision R sees every change up to R.
-- +goose StatementBegin
CREATE FUNCTION calendar_entries_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    r BIGINT := NULLIF(current_setting('bokat.calendar_revision', true), '')::BIGINT;
BEGIN
    -- A run of rows of one provider (an import writes a provider's blocked
    -- periods together) marks it once.
    IF r IS NOT NULL AND TG_OP = 'INSERT'
       AND NEW.provider_id = current_setting('bokat.calendar_last_provider', true) THEN
        RETURN NULL;
    END IF;
    IF r IS NULL THEN
        UPDATE calendar_revision SET revision = revision + 1 WHERE id = 1 RETURNING revision INTO r;
        PERFORM set_config('bokat.calendar_revision', r::TEXT, true);
    END IF;
    IF TG_OP = 'INSERT' THEN
        PERFORM set_config('bokat.calendar_last_provider', NEW.provider_id, true);
    END IF;
    IF TG_OP <> 'INSERT' THEN
        INSERT INTO calendar_changes (provider_id, rev) VALUES (OLD.provider_id, r)
            ON CONFLICT (provider_id) DO UPDATE SET rev = excluded.rev WHERE calendar_changes.rev < excluded.rev;
    END IF;
    IF TG_OP <> 'DELETE' THEN
        INSERT INTO calendar_changes (provider_id, rev) VALUES (NEW.provider_id, r)
            ON CONFLICT (provider_id) DO UPDATE SET rev = excluded.rev WHERE calendar_changes.rev < excluded.rev;
    END IF;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd
CREATE CONSTRAINT TRIGGER calendar_entries_revision
    AFTER INSERT OR UPDATE OR DELETE ON calendar_entries
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION calendar_entries_changed();

-- +goose Down
DROP TRIGGER calendar_entries_revision ON calendar_entries;
DROP FUNCTION calendar_entries_changed();
DROP TABLE calendar_changes;
DROP TABLE calendar_revision;
