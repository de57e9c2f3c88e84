-- +goose Up
-- Bookings. A booking row is the truth of a confirmed (or later cancelled)
-- booking; its calendar entry (kind 'booking') makes the provider busy.
-- Customer contact data (customer_*, *_address) lives only here: it is never
-- returned by status, put in events, logged or shown in the calendar feed;
-- it leaves the store only in the customer and provider notifications.
CREATE TABLE bookings (
    id                           TEXT PRIMARY KEY,
    request_id                   TEXT NOT NULL UNIQUE,
    owner_client_id              TEXT NOT NULL,
    owner_user_id                TEXT NOT NULL DEFAULT '',
    status                       TEXT NOT NULL CHECK (status IN ('confirmed', 'cancelled')),
    provider_id                  TEXT NOT NULL REFERENCES providers (id),
    provider_name                TEXT NOT NULL,
    service_id                   TEXT NOT NULL,
    vertical_id                  TEXT NOT NULL,
    job_type_id                  TEXT NOT NULL,
    service_label_sv             TEXT NOT NULL,
    service_label_en             TEXT NOT NULL DEFAULT '',
    slot_start_at                BIGINT NOT NULL,
    slot_end_at                  BIGINT NOT NULL,
    slot_label                   TEXT NOT NULL DEFAULT '',
    price_sek                    BIGINT NOT NULL CHECK (price_sek >= 0),
    currency                     TEXT NOT NULL DEFAULT 'SEK',
    pricing_model                TEXT NOT NULL,
    price_type                   TEXT NOT NULL,
    unit_price_sek               BIGINT NOT NULL DEFAULT 0,
    quantity                     DOUBLE PRECISION NOT NULL DEFAULT 1,
    unit                         TEXT NOT NULL DEFAULT '',
    minimum_charge_sek           BIGINT NOT NULL DEFAULT 0,
    terms_version                TEXT NOT NULL,
    terms_accepted_at            BIGINT NOT NULL,
    postcode                     TEXT NOT NULL,
    destination_postcode         TEXT NOT NULL DEFAULT '',
    locale                       TEXT NOT NULL,
    source                       TEXT NOT NULL,
    external_reference           TEXT NOT NULL DEFAULT '',
    consent_statement            TEXT NOT NULL DEFAULT '',
    consent_source               TEXT NOT NULL DEFAULT '',
    consent_collected_at         BIGINT,
    customer_name                TEXT NOT NULL DEFAULT '',
    customer_first_name          TEXT NOT NULL DEFAULT '',
    customer_last_name           TEXT NOT NULL DEFAULT '',
    customer_phone               TEXT NOT NULL,
    customer_email               TEXT NOT NULL,
    service_address              TEXT NOT NULL,
    destination_address          TEXT NOT NULL DEFAULT '',
    confirmed_at                 BIGINT NOT NULL,
    rescheduled_at               BIGINT,
    cancelled_at                 BIGINT,
    cancel_reason                TEXT NOT NULL DEFAULT '',
    cancel_notes                 TEXT NOT NULL DEFAULT '',
    sequence                     INTEGER NOT NULL DEFAULT 0 CHECK (sequence >= 0),
    customer_confirmation_status TEXT NOT NULL DEFAULT '' CHECK (customer_confirmation_status IN ('', 'sent', 'skipped', 'failed')),
    provider_confirmation_status TEXT NOT NULL DEFAULT '' CHECK (provider_confirmation_status IN ('', 'sent', 'skipped', 'failed')),
    updated_at                   BIGINT NOT NULL,
    CHECK (slot_start_at < slot_end_at),
    CHECK ((status = 'cancelled') = (cancelled_at IS NOT NULL))
);
CREATE INDEX bookings_owner ON bookings (owner_client_id, owner_user_id);
CREATE INDEX bookings_provider_slot ON bookings (provider_id, slot_start_at);

-- A booking has exactly one calendar entry; rescheduling moves it in place.
DROP INDEX calendar_entries_booking;
CREATE UNIQUE INDEX calendar_entries_booking_unique ON calendar_entries (booking_id) WHERE booking_id IS NOT NULL;
ALTER TABLE calendar_entries ADD CONSTRAINT calendar_entries_booking_fk
    FOREIGN KEY (booking_id) REFERENCES bookings (id);

-- No double booking: two active booking entries of one provider never
-- overlap, whichever transactions write them. Overlap with blocked periods
-- is checked by revalidation inside the booking transaction.
CREATE EXTENSION IF NOT EXISTS btree_gist;
ALTER TABLE calendar_entries ADD CONSTRAINT calendar_entries_no_overlap
    EXCLUDE USING gist (provider_id WITH =, int8range(start_at, end_at) WITH &&)
    WHERE (active AND kind = 'booking');

-- +goose Down
ALTER TABLE calendar_entries DROP CONSTRAINT calendar_entries_no_overlap;
ALTER TABLE calendar_entries DROP CONSTRAINT calendar_entries_booking_fk;
DROP INDEX calendar_entries_booking_unique;
CREATE INDEX calendar_entries_booking ON calendar_entries (booking_id) WHERE booking_id IS NOT NULL;
DROP TABLE bookings;
