-- +goose Up
-- The calendar revision: one counter that moves on with every change of
-- calendar_entries, and per provider the revision of its latest change, so
-- a search process can keep the busy intervals in memory and reread only
-- the providers whose calendar changed since the revision it holds.
-- Triggers keep both, so no write path can forget them. SQLite has one
-- writer at a time, so revision order is commit order.
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

-- +goose StatementBegin
CREATE TRIGGER calendar_entries_revision_insert
AFTER INSERT ON calendar_entries
BEGIN
    UPDATE calendar_revision SET revision = revision + 1 WHERE id = 1;
    INSERT INTO calendar_changes (provider_id, rev)
        VALUES (NEW.provider_id, (SELECT revision FROM calendar_revision WHERE id = 1))
        ON CONFLICT (provider_id) DO UPDATE SET rev = excluded.rev;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER calendar_entries_revision_update
AFTER UPDATE ON calendar_entries
BEGIN
    UPDATE calendar_revision SET revision = revision + 1 WHERE id = 1;
    INSERT INTO calendar_changes (provider_id, rev)
        VALUES (NEW.provider_id, (SELECT revision FROM calendar_revision WHERE id = 1))
        ON CONFLICT (provider_id) DO UPDATE SET rev = excluded.rev;
    INSERT INTO calendar_changes (provider_id, rev)
        SELECT OLD.provider_id, revision FROM calendar_revision WHERE id = 1 AND OLD.provider_id <> NEW.provider_id
        ON CONFLICT (provider_id) DO UPDATE SET rev = excluded.rev;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER calendar_entries_revision_delete
AFTER DELETE ON calendar_entries
BEGIN
    UPDATE calendar_revision SET revision = revision + 1 WHERE id = 1;
    INSERT INTO calendar_changes (provider_id, rev)
        VALUES (OLD.provider_id, (SELECT revision FROM calendar_revision WHERE id = 1))
        ON CONFLICT (provider_id) DO UPDATE SET rev = excluded.rev;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER calendar_entries_revision_delete;
DROP TRIGGER calendar_entries_revision_update;
DROP TRIGGER calendar_entries_revision_insert;
DROP TABLE calendar_changes;
DROP TABLE calendar_revision;
