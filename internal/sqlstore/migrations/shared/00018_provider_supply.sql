-- +goose Up
-- The supply a provider keeps itself (docs/providers.md): a pause, hours of
-- single dates, blocks of time (once or weekly), and which field groups a
-- provider user has changed, so that a re-imported supply file no longer
-- overwrites them. Instants are BIGINT Unix milliseconds.

-- "Not taking bookings until": no slot starts before it; 0 is no pause.
ALTER TABLE providers ADD COLUMN paused_until BIGINT NOT NULL DEFAULT 0;

-- Hours of one Stockholm date ('2026-03-10'), replacing the weekly hours of
-- that date: one row per range, or one row 0-0 for a closed day.
CREATE TABLE provider_day_hours (
    provider_id  TEXT NOT NULL REFERENCES providers (id) ON DELETE CASCADE,
    day          TEXT NOT NULL,
    start_minute INTEGER NOT NULL,
    end_minute   INTEGER NOT NULL,
    CHECK ((start_minute = 0 AND end_minute = 0)
        OR (0 <= start_minute AND start_minute < end_minute AND end_minute <= 1440)),
    PRIMARY KEY (provider_id, day, start_minute)
);

-- A block of time a provider user (or token) added: its first occurrence
-- and how many weeks it repeats (1: once). Its occurrences are blocked
-- calendar entries carrying its id in block_id, so search and confirmation
-- see them like any blocked period.
CREATE TABLE provider_blocks (
    id          TEXT PRIMARY KEY,
    provider_id TEXT NOT NULL REFERENCES providers (id),
    whole_days  BOOLEAN NOT NULL,
    weeks       INTEGER NOT NULL CHECK (weeks BETWEEN 1 AND 52),
    start_at    BIGINT NOT NULL,
    end_at      BIGINT NOT NULL,
    note        TEXT NOT NULL DEFAULT '',
    created_by  TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    CHECK (start_at < end_at)
);
CREATE INDEX provider_blocks_provider ON provider_blocks (provider_id, start_at);

ALTER TABLE calendar_entries ADD COLUMN block_id TEXT;
CREATE INDEX calendar_entries_block ON calendar_entries (block_id) WHERE block_id IS NOT NULL;

-- The field groups ('hours', 'prices', 'postcodes', 'blocks') a provider
-- manages itself: set by its first change of the group, read by the import.
CREATE TABLE provider_managed (
    provider_id TEXT NOT NULL REFERENCES providers (id),
    field_group TEXT NOT NULL CHECK (field_group IN ('hours', 'prices', 'postcodes', 'blocks')),
    actor       TEXT NOT NULL,
    changed_at  BIGINT NOT NULL,
    PRIMARY KEY (provider_id, field_group)
);

-- +goose Down
DROP TABLE provider_managed;
DROP INDEX calendar_entries_block;
ALTER TABLE calendar_entries DROP COLUMN block_id;
DROP TABLE provider_blocks;
DROP TABLE provider_day_hours;
ALTER TABLE providers DROP COLUMN paused_until;
