-- +goose Up
-- Request keys are kept 30 days: the retention pass deletes the keys whose
-- expires_at has passed, in batches, and finds them by this index. Keys
-- without an expiry (kept as long as their booking) are left out of it.
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at) WHERE expires_at IS NOT NULL;

-- +goose Down
DROP INDEX idempotency_keys_expiry;
