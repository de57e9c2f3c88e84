-- +goose Up
-- Provider API tokens: a provider's own system acts for that provider with
-- the provider scopes. Only the keyed hash of a token is stored.
CREATE TABLE provider_tokens (
    id          TEXT PRIMARY KEY,
    provider_id TEXT NOT NULL REFERENCES providers (id),
    name        TEXT NOT NULL,
    -- Space-separated provider scopes.
    scopes      TEXT NOT NULL,
    token_hash  TEXT NOT NULL UNIQUE,
    created_at  BIGINT NOT NULL,
    revoked_at  BIGINT
);
CREATE INDEX provider_tokens_provider ON provider_tokens (provider_id);

-- +goose Down
DROP TABLE provider_tokens;
