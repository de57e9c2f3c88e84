-- +goose Up
-- Supply: providers, the postcodes they cover, their own prices per catalog
-- service, weekly working hours (Europe/Stockholm wall clock, minutes after
-- 00:00) and the calendar that makes them busy. Prices are whole SEK.

CREATE TABLE providers (
    id                 TEXT PRIMARY KEY,
    name               TEXT NOT NULL,
    city               TEXT NOT NULL DEFAULT '',
    rating_label       TEXT NOT NULL DEFAULT '',
    -- Contact data for notifications to the provider; never in search.
    email              TEXT NOT NULL CHECK (email <> ''),
    phone              TEXT NOT NULL DEFAULT '',
    active             BOOLEAN NOT NULL,
    min_notice_minutes INTEGER NOT NULL CHECK (min_notice_minutes >= 0),
    horizon_days       INTEGER NOT NULL CHECK (horizon_days > 0),
    created_at         BIGINT NOT NULL,
    updated_at         BIGINT NOT NULL
);

-- Inclusive ranges of five-digit postcodes: "111" is 11100..11199.
CREATE TABLE provider_postcodes (
    provider_id   TEXT NOT NULL REFERENCES providers (id) ON DELETE CASCADE,
    postcode_from INTEGER NOT NULL,
    postcode_to   INTEGER NOT NULL,
    CHECK (postcode_from <= postcode_to),
    PRIMARY KEY (provider_id, postcode_from, postcode_to)
);
CREATE INDEX provider_postcodes_range ON provider_postcodes (postcode_from, postcode_to);

-- price_sek for flat and starting-price services; unit_price_sek (with an
-- optional minimum charge) for per-unit services. The duration columns
-- override the catalog's rule when set.
CREATE TABLE provider_services (
    provider_id        TEXT NOT NULL REFERENCES providers (id) ON DELETE CASCADE,
    service_id         TEXT NOT NULL,
    price_sek          BIGINT NOT NULL DEFAULT 0 CHECK (price_sek >= 0),
    unit_price_sek     BIGINT NOT NULL DEFAULT 0 CHECK (unit_price_sek >= 0),
    minimum_charge_sek BIGINT NOT NULL DEFAULT 0 CHECK (minimum_charge_sek >= 0),
    fixed_minutes      INTEGER NOT NULL DEFAULT 0,
    minutes_per_unit   INTEGER NOT NULL DEFAULT 0,
    minimum_minutes    INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (provider_id, service_id)
);
CREATE INDEX provider_services_service ON provider_services (service_id);

CREATE TABLE provider_hours (
    provider_id  TEXT NOT NULL REFERENCES providers (id) ON DELETE CASCADE,
    weekday      INTEGER NOT NULL CHECK (weekday BETWEEN 0 AND 6),
    start_minute INTEGER NOT NULL,
    end_minute   INTEGER NOT NULL,
    CHECK (0 <= start_minute AND start_minute < end_minute AND end_minute <= 1440),
    PRIMARY KEY (provider_id, weekday, start_minute)
);

-- The provider calendar. Every active entry makes its provider busy over
-- [start_at, end_at): bookings (kind 'booking', booking_id set) and blocked
-- periods such as vacation (kind 'blocked', imported with the supply).
CREATE TABLE calendar_entries (
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
CREATE INDEX calendar_entries_provider_start ON calendar_entries (provider_id, start_at);
-- Busy lookups ask for entries ending after the start of a window.
CREATE INDEX calendar_entries_provider_end ON calendar_entries (provider_id, end_at) WHERE active;
CREATE INDEX calendar_entries_booking ON calendar_entries (booking_id) WHERE booking_id IS NOT NULL;

-- One row; every write to the supply tables above (not the calendar) bumps
-- it in the same transaction, so readers can cache supply by revision.
CREATE TABLE supply_revision (
    id       INTEGER PRIMARY KEY CHECK (id = 1),
    revision BIGINT NOT NULL
);
INSERT INTO supply_revision (id, revision) VALUES (1, 0);

-- +goose Down
DROP TABLE supply_revision;
DROP TABLE calendar_entries;
DROP TABLE provider_hours;
DROP TABLE provider_services;
DROP TABLE provider_postcodes;
DROP TABLE providers;
