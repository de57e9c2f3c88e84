-- +goose Up
-- Webhook endpoints, their deliveries (one row per delivery event and
-- endpoint, driven by outbox_events) and every delivery attempt.

CREATE TABLE webhook_endpoints (
    id                TEXT PRIMARY KEY,
    owner_client_id   TEXT NOT NULL,
    owner_user_id     TEXT NOT NULL DEFAULT '',
    url               TEXT NOT NULL,
    -- space-separated event types the endpoint subscribes to
    event_types       TEXT NOT NULL,
    -- identifies the version of the signing secret (shown to the owner)
    signing_key_id    TEXT NOT NULL,
    -- the signing secret, sealed with AES-256-GCM under the server key
    -- secret_key_id; base64 of nonce || ciphertext
    secret_key_id     TEXT NOT NULL,
    secret_ciphertext TEXT NOT NULL,
    disabled_at       BIGINT,
    disabled_reason   TEXT NOT NULL DEFAULT '',
    created_at        BIGINT NOT NULL,
    updated_at        BIGINT NOT NULL,
    deleted_at        BIGINT
);
CREATE INDEX webhook_endpoints_owner ON webhook_endpoints (owner_client_id, owner_user_id, created_at) WHERE deleted_at IS NULL;

CREATE TABLE webhook_deliveries (
    id               TEXT PRIMARY KEY,
    -- the Webhook-Id: one per delivery event (shared by its endpoints),
    -- kept by every retry, new on replay
    webhook_id       TEXT NOT NULL,
    outbox_id        TEXT NOT NULL REFERENCES outbox_events (id),
    endpoint_id      TEXT NOT NULL REFERENCES webhook_endpoints (id),
    origin           TEXT NOT NULL CHECK (origin IN ('relay', 'replay')),
    status           TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed', 'cancelled')),
    attempts         INTEGER NOT NULL DEFAULT 0,
    next_attempt_at  BIGINT NOT NULL,
    -- a worker's claim: until locked_until no other worker takes the row
    locked_until     BIGINT,
    lease_token      TEXT,
    last_status_code INTEGER,
    last_error       TEXT NOT NULL DEFAULT '',
    created_at       BIGINT NOT NULL,
    updated_at       BIGINT NOT NULL,
    finished_at      BIGINT
);
-- The relay creates at most one delivery per event and endpoint.
CREATE UNIQUE INDEX webhook_deliveries_relayed ON webhook_deliveries (outbox_id, endpoint_id) WHERE origin = 'relay';
CREATE UNIQUE INDEX webhook_deliveries_message ON webhook_deliveries (webhook_id, endpoint_id);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_lease ON webhook_deliveries (lease_token) WHERE lease_token IS NOT NULL;
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, status);
CREATE INDEX webhook_deliveries_outbox ON webhook_deliveries (outbox_id);

CREATE TABLE webhook_delivery_attempts (
    delivery_id  TEXT NOT NULL REFERENCES webhook_deliveries (id),
    attempt      INTEGER NOT NULL,
    attempted_at BIGINT NOT NULL,
    -- NULL when no HTTP response arrived (refused, timeout, TLS failure)
    status_code  INTEGER,
    latency_ms   BIGINT NOT NULL,
    error        TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (delivery_id, attempt)
);

-- +goose Down
DROP TABLE webhook_delivery_attempts;
DROP TABLE webhook_deliveries;
DROP TABLE webhook_endpoints;
