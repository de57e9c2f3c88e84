-- +goose Up
-- OAuth 2 for delegated users: clients, users (identified by e-mail), e-mail
-- sign-in codes, browser sessions, grants (one per authorization code: the
-- token family) and tokens. Every secret (client secret, sign-in code,
-- session, authorization code, access and refresh token) is stored only as a
-- keyed hash. Instants are BIGINT Unix milliseconds, as everywhere.

CREATE TABLE oauth_clients (
    id            TEXT PRIMARY KEY,
    name          TEXT NOT NULL,
    -- NULL for a public client (no secret; PKCE is its only proof).
    secret_hash   TEXT,
    -- Space-separated exact redirect URIs (validated: no whitespace).
    redirect_uris TEXT NOT NULL,
    scopes        TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    revoked_at    BIGINT
);

CREATE TABLE users (
    id              TEXT PRIMARY KEY,
    -- Normalised (trimmed, lower-case). Customer contact data: never logged.
    email           TEXT NOT NULL UNIQUE,
    created_at      BIGINT NOT NULL,
    last_sign_in_at BIGINT
);

CREATE TABLE oauth_signin_codes (
    -- Keyed hash of the random handle kept in the browser's cookie.
    id           TEXT PRIMARY KEY,
    email        TEXT NOT NULL,
    -- Keyed hash of the e-mail, for the per-address send limit.
    email_hash   TEXT NOT NULL,
    -- Keyed hash of the browser cookie the code was requested from.
    browser_hash TEXT NOT NULL,
    code_hash    TEXT NOT NULL,
    attempts     INTEGER NOT NULL DEFAULT 0,
    created_at   BIGINT NOT NULL,
    expires_at   BIGINT NOT NULL,
    consumed_at  BIGINT
);
CREATE INDEX oauth_signin_codes_email ON oauth_signin_codes (email_hash, created_at);
CREATE INDEX oauth_signin_codes_expiry ON oauth_signin_codes (expires_at);

CREATE TABLE oauth_sessions (
    token_hash TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL REFERENCES users (id),
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX oauth_sessions_expiry ON oauth_sessions (expires_at);

-- One grant per authorization code; every token issued from the code (and
-- from its refresh tokens) belongs to the grant: revoking the grant revokes
-- the family.
CREATE TABLE oauth_grants (
    id                 TEXT PRIMARY KEY,
    client_id          TEXT NOT NULL REFERENCES oauth_clients (id),
    user_id            TEXT NOT NULL REFERENCES users (id),
    scopes             TEXT NOT NULL,
    code_hash          TEXT NOT NULL UNIQUE,
    redirect_uri       TEXT NOT NULL,
    -- 1 when the authorization request named redirect_uri: the token
    -- request must then repeat it (RFC 6749 section 4.1.3).
    redirect_uri_given INTEGER NOT NULL,
    code_challenge     TEXT NOT NULL,
    code_expires_at    BIGINT NOT NULL,
    code_used_at       BIGINT,
    created_at         BIGINT NOT NULL,
    revoked_at         BIGINT,
    revoke_reason      TEXT NOT NULL DEFAULT ''
);
CREATE INDEX oauth_grants_client_user ON oauth_grants (client_id, user_id);

CREATE TABLE oauth_tokens (
    token_hash TEXT PRIMARY KEY,
    kind       TEXT NOT NULL CHECK (kind IN ('access', 'refresh')),
    grant_id   TEXT NOT NULL REFERENCES oauth_grants (id),
    scopes     TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    -- Refresh tokens: set when rotated. A second use revokes the grant.
    used_at    BIGINT,
    revoked_at BIGINT
);
CREATE INDEX oauth_tokens_grant ON oauth_tokens (grant_id);
CREATE INDEX oauth_tokens_expiry ON oauth_tokens (expires_at);

-- +goose Down
DROP TABLE oauth_tokens;
DROP TABLE oauth_grants;
DROP TABLE oauth_sessions;
DROP TABLE oauth_signin_codes;
DROP TABLE users;
DROP TABLE oauth_clients;
