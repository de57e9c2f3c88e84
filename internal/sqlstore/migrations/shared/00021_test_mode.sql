-- +goose Up
-- Test mode (issue 25): every credential, every object it owns and every
-- provider of the supply belongs to one realm, 'live' or 'test'. Rows that
-- existed before are live. A test credential sees and changes only test
-- rows and books only test providers; a live one only live rows and live
-- providers (docs/testing.md).
ALTER TABLE partner_clients ADD COLUMN mode TEXT NOT NULL DEFAULT 'live' CHECK (mode IN ('live', 'test'));
ALTER TABLE oauth_clients ADD COLUMN mode TEXT NOT NULL DEFAULT 'live' CHECK (mode IN ('live', 'test'));
ALTER TABLE providers ADD COLUMN mode TEXT NOT NULL DEFAULT 'live' CHECK (mode IN ('live', 'test'));
ALTER TABLE bookings ADD COLUMN mode TEXT NOT NULL DEFAULT 'live' CHECK (mode IN ('live', 'test'));
ALTER TABLE follow_up_requests ADD COLUMN mode TEXT NOT NULL DEFAULT 'live' CHECK (mode IN ('live', 'test'));
ALTER TABLE idempotency_keys ADD COLUMN mode TEXT NOT NULL DEFAULT 'live' CHECK (mode IN ('live', 'test'));
ALTER TABLE outbox_events ADD COLUMN mode TEXT NOT NULL DEFAULT 'live' CHECK (mode IN ('live', 'test'));
ALTER TABLE webhook_endpoints ADD COLUMN mode TEXT NOT NULL DEFAULT 'live' CHECK (mode IN ('live', 'test'));
ALTER TABLE webhook_deliveries ADD COLUMN mode TEXT NOT NULL DEFAULT 'live' CHECK (mode IN ('live', 'test'));
ALTER TABLE notification_jobs ADD COLUMN mode TEXT NOT NULL DEFAULT 'live' CHECK (mode IN ('live', 'test'));

-- The messages test-mode jobs would have sent, kept for their owner to read
-- (GET /v1/test/messages) instead of being e-mailed. No address is kept:
-- the recipient is named by its role.
CREATE TABLE test_messages (
    id              TEXT PRIMARY KEY,
    job_id          TEXT NOT NULL,
    owner_client_id TEXT NOT NULL,
    owner_user_id   TEXT NOT NULL DEFAULT '',
    booking_id      TEXT NOT NULL DEFAULT '',
    request_id      TEXT NOT NULL DEFAULT '',
    event_type      TEXT NOT NULL,
    recipient       TEXT NOT NULL,
    subject         TEXT NOT NULL,
    body            TEXT NOT NULL,
    calendar_method TEXT NOT NULL DEFAULT '',
    created_at      BIGINT NOT NULL
);
CREATE INDEX test_messages_owner ON test_messages (owner_client_id, owner_user_id, created_at);

-- +goose Down
DROP TABLE test_messages;
ALTER TABLE notification_jobs DROP COLUMN mode;
ALTER TABLE webhook_deliveries DROP COLUMN mode;
ALTER TABLE webhook_endpoints DROP COLUMN mode;
ALTER TABLE outbox_events DROP COLUMN mode;
ALTER TABLE idempotency_keys DROP COLUMN mode;
ALTER TABLE follow_up_requests DROP COLUMN mode;
ALTER TABLE bookings DROP COLUMN mode;
ALTER TABLE providers DROP COLUMN mode;
ALTER TABLE oauth_clients DROP COLUMN mode;
ALTER TABLE partner_clients DROP COLUMN mode;
