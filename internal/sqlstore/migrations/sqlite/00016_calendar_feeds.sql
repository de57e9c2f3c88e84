-- +goose Up
-- Calendar subscriptions (issue 24): a provider's iCalendar feeds, polled
-- by the calendar sync worker. The address is a secret (Google's "secret
-- address" grants read access to the whole calendar): it is sealed like
-- customer contact data (url_key_id, url_sealed: base64 of nonce ||
-- ciphertext, bound to the feed id) and deduplicated per provider by its
-- blind index (a keyed hash); label is the host only, for display.
-- The worker claims due feeds (next_poll_at) with a lease (lease_until,
-- lease_token) as the outbox claims rows, so several serve processes share
-- the work; a worker writes its result only while it holds the lease.
-- etag, last_modified and body_hash let an unchanged feed write nothing to
-- the calendar; expanded_until is how far its recurring events were
-- expanded. failing_since is the first failure of the current run of
-- failures; stale_notified_at when the provider was told it went stale.
CREATE TABLE calendar_feeds (
    id                TEXT PRIMARY KEY,
    provider_id       TEXT NOT NULL REFERENCES providers (id),
    url_key_id        TEXT NOT NULL,
    url_sealed        TEXT NOT NULL,
    url_index         TEXT NOT NULL,
    label             TEXT NOT NULL DEFAULT '',
    rule              TEXT NOT NULL DEFAULT 'busy_only' CHECK (rule IN ('busy_only', 'everything', 'all_day_busy')),
    source            TEXT NOT NULL CHECK (source IN ('supply', 'operator', 'provider')),
    created_at        BIGINT NOT NULL,
    next_poll_at      BIGINT NOT NULL,
    lease_until       BIGINT,
    lease_token       TEXT NOT NULL DEFAULT '',
    etag              TEXT NOT NULL DEFAULT '',
    last_modified     TEXT NOT NULL DEFAULT '',
    body_hash         TEXT NOT NULL DEFAULT '',
    expanded_until    BIGINT,
    last_attempt_at   BIGINT,
    last_synced_at    BIGINT,
    last_error        TEXT NOT NULL DEFAULT '',
    failing_since     BIGINT,
    stale_notified_at BIGINT,
    busy_count        INTEGER NOT NULL DEFAULT 0,
    UNIQUE (provider_id, url_index)
);
CREATE INDEX calendar_feeds_due ON calendar_feeds (next_poll_at);

-- A synced busy time over a confirmed booking raises
-- booking.provider_action_required (reason calendar_conflict) once per
-- booking and slot: the row is written with the sync, raised_at once the
-- event is queued.
CREATE TABLE calendar_conflicts (
    booking_id    TEXT NOT NULL REFERENCES bookings (id),
    slot_start_at BIGINT NOT NULL,
    provider_id   TEXT NOT NULL,
    feed_id       TEXT NOT NULL,
    detected_at   BIGINT NOT NULL,
    raised_at     BIGINT,
    PRIMARY KEY (booking_id, slot_start_at)
);
CREATE INDEX calendar_conflicts_unraised ON calendar_conflicts (detected_at) WHERE raised_at IS NULL;

-- A feed's busy times are calendar entries of kind 'synced' (feed_id set),
-- so every reader of the calendar (search's availability read, the
-- revalidation of confirm and reschedule) and the calendar revision see
-- them without a change. The no-overlap trigger covers booking entries
-- only: a synced busy time over a confirmed booking is a conflict to
-- report, never a failed write. SQLite cannot change a CHECK constraint in
-- place: the table is rebuilt with its indexes and the triggers of
-- migrations 00003 and 00008, unchanged (dropping the table drops them).
CREATE TABLE calendar_entries_new (
    id          TEXT PRIMARY KEY,
    provider_id TEXT NOT NULL REFERENCES providers (id),
    booking_id  TEXT,
    kind        TEXT NOT NULL CHECK (kind IN ('booking', 'blocked', 'synced')),
    start_at    BIGINT NOT NULL,
    end_at      BIGINT NOT NULL,
    active      BOOLEAN NOT NULL,
    note        TEXT NOT NULL DEFAULT '',
    created_at  BIGINT NOT NULL,
    feed_id     TEXT REFERENCES calendar_feeds (id),
    CHECK (start_at < end_at),
    CHECK ((kind = 'booking') = (booking_id IS NOT NULL)),
    CHECK ((kind = 'synced') = (feed_id IS NOT NULL))
);
INSERT INTO calendar_entries_new (id, provider_id, booking_id, kind, start_at, end_at, active, note, created_at)
    SELECT id, provider_id, booking_id, kind, start_at, end_at, active, note, created_at FROM calendar_entries;
DROP TABLE calendar_entries;
ALTER TABLE calendar_entries_new RENAME TO calendar_entries;
CREATE INDEX calendar_entries_provider_start ON calendar_entries (provider_id, start_at);
CREATE INDEX calendar_entries_provider_end ON calendar_entries (provider_id, end_at) WHERE active;
CREATE UNIQUE INDEX calendar_entries_booking_unique ON calendar_entries (booking_id) WHERE booking_id IS NOT NULL;
CREATE INDEX calendar_entries_feed ON calendar_entries (feed_id) WHERE feed_id IS NOT NULL;

-- +goose StatementBegin
CREATE TRIGGER calendar_entries_booking_fk
BEFORE INSERT ON calendar_entries
WHEN NEW.booking_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM bookings WHERE id = NEW.booking_id)
BEGIN
    SELECT RAISE(ABORT, 'calendar_entries_booking_fk: no such booking');
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER calendar_entries_no_overlap_insert
BEFORE INSERT ON calendar_entries
WHEN NEW.active AND NEW.kind = 'booking'
BEGIN
    SELECT RAISE(ABORT, 'calendar_entries_no_overlap')
     WHERE EXISTS (SELECT 1 FROM calendar_entries c
                    WHERE c.provider_id = NEW.provider_id AND c.active AND c.kind = 'booking'
                      AND c.end_at > NEW.start_at AND c.start_at < NEW.end_at);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER calendar_entries_no_overlap_update
BEFORE UPDATE OF provider_id, start_at, end_at, active, kind ON calendar_entries
WHEN NEW.active AND NEW.kind = 'booking'
BEGIN
    SELECT RAISE(ABORT, 'calendar_entries_no_overlap')
     WHERE EXISTS (SELECT 1 FROM calendar_entries c
                    WHERE c.provider_id = NEW.provider_id AND c.active AND c.kind = 'booking' AND c.id <> NEW.id
                      AND c.end_at > NEW.start_at AND c.start_at < NEW.end_at);
END;
-- +goose StatementEnd
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
DELETE FROM calendar_entries WHERE kind = 'synced';
CREATE TABLE calendar_entries_new (
    id          TEXT PRIMARY KEY,
    provider_id TEXT NOT NULL REFERENCES providers (id),
    booking_id  TEXT,
    kind        TEXT NOT NULL CHECK (kind IN ('booking', 'blocked')),
    start_at    BIGINT NOT NULL,
    end_at      BIGINT NOT NULL,
    active      BOOLEAN NOT NULL,
    note        TEXT NOT NULL DEFAULT '',
    created_at  BIGINT NOT NULL,
    CHECK (start_at < end_at),
    CHECK ((kind = 'booking') = (booking_id IS NOT NULL))
);
INSERT INTO calendar_entries_new (id, provider_id, booking_id, kind, start_at, end_at, active, note, created_at)
    SELECT id, provider_id, booking_id, kind, start_at, end_at, active, note, created_at FROM calendar_entries;
DROP TABLE calendar_entries;
ALTER TABLE calendar_entries_new RENAME TO calendar_entries;
CREATE INDEX calendar_entries_provider_start ON calendar_entries (provider_id, start_at);
CREATE INDEX calendar_entries_provider_end ON calendar_entries (provider_id, end_at) WHERE active;
CREATE UNIQUE INDEX calendar_entries_booking_unique ON calendar_entries (booking_id) WHERE booking_id IS NOT NULL;

-- +goose StatementBegin
CREATE TRIGGER calendar_entries_booking_fk
BEFORE INSERT ON calendar_entries
WHEN NEW.booking_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM bookings WHERE id = NEW.booking_id)
BEGIN
    SELECT RAISE(ABORT, 'calendar_entries_booking_fk: no such booking');
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER calendar_entries_no_overlap_insert
BEFORE INSERT ON calendar_entries
WHEN NEW.active AND NEW.kind = 'booking'
BEGIN
    SELECT RAISE(ABORT, 'calendar_entries_no_overlap')
     WHERE EXISTS (SELECT 1 FROM calendar_entries c
                    WHERE c.provider_id = NEW.provider_id AND c.active AND c.kind = 'booking'
                      AND c.end_at > NEW.start_at AND c.start_at < NEW.end_at);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER calendar_entries_no_overlap_update
BEFORE UPDATE OF provider_id, start_at, end_at, active, kind ON calendar_entries
WHEN NEW.active AND NEW.kind = 'booking'
BEGIN
    SELECT RAISE(ABORT, 'calendar_entries_no_overlap')
     WHERE EXISTS (SELECT 1 FROM calendar_entries c
                    WHERE c.provider_id = NEW.provider_id AND c.active AND c.kind = 'booking' AND c.id <> NEW.id
                      AND c.end_at > NEW.start_at AND c.start_at < NEW.end_at);
END;
-- +goose StatementEnd
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
DROP TABLE calendar_conflicts;
DROP TABLE calendar_feeds;
