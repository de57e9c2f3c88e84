-- +goose Up
-- Rotating an endpoint's signing secret keeps the secret it replaces, sealed
-- like the current one (same key ids, same binding to the endpoint), until
-- previous_secret_expires_at: deliveries claimed before then are signed with
-- both. Only one previous secret is kept; rotating again replaces it.
ALTER TABLE webhook_endpoints ADD COLUMN previous_secret_key_id TEXT NOT NULL DEFAULT '';
ALTER TABLE webhook_endpoints ADD COLUMN previous_secret_ciphertext TEXT NOT NULL DEFAULT '';
ALTER TABLE webhook_endpoints ADD COLUMN previous_secret_expires_at BIGINT;

-- +goose Down
ALTER TABLE webhook_endpoints DROP COLUMN previous_secret_expires_at;
ALTER TABLE webhook_endpoints DROP COLUMN previous_secret_ciphertext;
ALTER TABLE webhook_endpoints DROP COLUMN previous_secret_key_id;
