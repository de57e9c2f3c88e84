-- +goose Up
-- Instants are stored as BIGINT Unix milliseconds (UTC) on both engines so
-- that one SQL text and one scan path serve SQLite and PostgreSQL.

CREATE TABLE server_secrets (
    name       TEXT PRIMARY KEY,
    value      TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE partner_clients (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    scopes     TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    revoked_at BIGINT
);

CREATE TABLE idempotency_keys (
    owner_key       TEXT NOT NULL,
    operation       TEXT NOT NULL,
    idem_key        TEXT NOT NULL,
    fingerprint     TEXT NOT NULL,
    resource_id     TEXT NOT NULL,
    response_status INTEGER NOT NULL,
    response_body   TEXT NOT NULL,
    created_at      BIGINT NOT NULL,
    expires_at      BIGINT,
    PRIMARY KEY (owner_key, operation, idem_key)
);

CREATE TABLE outbox_events (
    id              TEXT PRIMARY KEY,
    owner_client_id TEXT NOT NULL,
    owner_user_id   TEXT NOT NULL DEFAULT '',
    booking_id      TEXT NOT NULL,
    event_type      TEXT NOT NULL,
    payload         TEXT NOT NULL,
    occurred_at     BIGINT NOT NULL,
    created_at      BIGINT NOT NULL,
    relayed_at      BIGINT
);
CREATE INDEX outbox_events_unrelayed ON outbox_events (created_at) WHERE relayed_at IS NULL;
CREATE INDEX outbox_events_owner ON outbox_events (owner_client_id, created_at);

-- A notification job is about a booking (with the outbox event it reports)
-- or about a provider follow-up request (request_id; no outbox event).
CREATE TABLE notification_jobs (
    id              TEXT PRIMARY KEY,
    outbox_id       TEXT REFERENCES outbox_events (id),
    booking_id      TEXT,
    request_id      TEXT,
    event_type      TEXT NOT NULL,
    recipient       TEXT NOT NULL CHECK (recipient IN ('customer', 'provider')),
    status          TEXT NOT NULL CHECK (status IN ('pending', 'sent', 'skipped', 'failed')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at BIGINT NOT NULL,
    last_error      TEXT NOT NULL DEFAULT '',
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL,
    CHECK (booking_id IS NOT NULL OR request_id IS NOT NULL)
);
CREATE INDEX notification_jobs_due ON notification_jobs (next_attempt_at) WHERE status = 'pending';
CREATE INDEX notification_jobs_booking ON notification_jobs (booking_id);

-- +goose Down
DROP TABLE notification_jobs;
DROP TABLE outbox_events;
DROP TABLE idempotency_keys;
DROP TABLE partner_clients;
DROP TABLE server_secrets;
