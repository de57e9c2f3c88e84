-- +goose Up
-- The calendar revision (00008) was kept by a deferred trigger run once per
-- written calendar row at commit: an import of 50,000 providers writes two
-- million blocked periods, and two million calls of the function were most
-- of its commit, with nothing else able to go on meanwhile. Statement
-- triggers now gather the providers each statement changed (from its
-- transition tables) into one calendar_pending row, and the deferred
-- trigger runs once per such row at commit. What it does is unchanged: the
-- transaction takes its revision (and the counter's row lock) only while it
-- commits, once (the number is kept in a transaction-local setting), so
-- revision order is still commit order; every provider gathered is marked
-- with it. A calendar_pending row lives and dies inside its transaction.
CREATE TABLE calendar_pending (
    id        BIGSERIAL PRIMARY KEY,
    providers TEXT[] NOT NULL
);

-- +goose StatementBegin
CREATE FUNCTION calendar_entries_gather() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- A statement that wrote no row (a trigger fires for it all the same)
    -- gathers nothing.
    IF TG_OP = 'INSERT' THEN
        INSERT INTO calendar_pending (providers)
            SELECT array_agg(DISTINCT provider_id) FROM new_rows HAVING count(*) > 0;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO calendar_pending (providers)
            SELECT array_agg(DISTINCT provider_id) FROM old_rows HAVING count(*) > 0;
    ELSE
        INSERT INTO calendar_pending (providers)
            SELECT array_agg(DISTINCT provider_id)
              FROM (SELECT provider_id FROM old_rows UNION ALL SELECT provider_id FROM new_rows) changed
            HAVING count(*) > 0;
    END IF;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION calendar_pending_commit() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    r BIGINT := NULLIF(current_setting('bokat.calendar_revision', true), '')::BIGINT;
BEGIN
    IF r IS NULL THEN
        UPDATE calendar_revision SET revision = revision + 1 WHERE id = 1 RETURNING revision INTO r;
        PERFORM set_config('bokat.calendar_revision', r::TEXT, true);
    END IF;
    INSERT INTO calendar_changes (provider_id, rev)
        SELECT DISTINCT p, r FROM unnest(NEW.providers) AS p
        ON CONFLICT (provider_id) DO UPDATE SET rev = excluded.rev WHERE calendar_changes.rev < excluded.rev;
    DELETE FROM calendar_pending WHERE id = NEW.id;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

DROP TRIGGER calendar_entries_revision ON calendar_entries;
DROP FUNCTION calendar_entries_changed();

-- Transition tables allow one event per trigger.
CREATE TRIGGER calendar_entries_inserted AFTER INSERT ON calendar_entries
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION calendar_entries_gather();
CREATE TRIGGER calendar_entries_updated AFTER UPDATE ON calendar_entries
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION calendar_entries_gather();
CREATE TRIGGER calendar_entries_deleted AFTER DELETE ON calendar_entries
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION calendar_entries_gather();
CREATE CONSTRAINT TRIGGER calendar_pending_commit
    AFTER INSERT ON calendar_pending
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION calendar_pending_commit();

-- +goose Down
DROP TRIGGER calendar_pending_commit ON calendar_pending;
DROP TRIGGER calendar_entries_inserted ON calendar_entries;
DROP TRIGGER calendar_entries_updated ON calendar_entries;
DROP TRIGGER calendar_entries_deleted ON calendar_entries;
DROP FUNCTION calendar_pending_commit();
DROP FUNCTION calendar_entries_gather();
DROP TABLE calendar_pending;
-- +goose StatementBegin
CREATE FUNCTION calendar_entries_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    r BIGINT := NULLIF(current_setting('bokat.calendar_revision', true), '')::BIGINT;
BEGIN
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
