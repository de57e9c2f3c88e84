-- +goose Up
-- Operator accounts: the people who run the marketplace and sign in to the
-- operator console (/operator/) with a one-time e-mail code, as provider
-- users do. An address is sealed at rest like a provider user's and found
-- by its blind index (email_index). Instants are BIGINT Unix milliseconds.

CREATE TABLE operator_users (
    id              TEXT PRIMARY KEY,
    email           TEXT NOT NULL,
    email_index     TEXT NOT NULL,
    key_id          TEXT NOT NULL,
    -- Who invited them: an operator id, or 'cli' (bokat operator invite).
    invited_by      TEXT NOT NULL,
    created_at      BIGINT NOT NULL,
    last_sign_in_at BIGINT,
    removed_at      BIGINT
);
CREATE UNIQUE INDEX operator_users_email ON operator_users (email_index) WHERE removed_at IS NULL;

CREATE TABLE operator_sessions (
    -- Keyed hash of the session cookie.
    token_hash  TEXT PRIMARY KEY,
    operator_id TEXT NOT NULL REFERENCES operator_users (id),
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL
);
CREATE INDEX operator_sessions_operator ON operator_sessions (operator_id);
CREATE INDEX operator_sessions_expiry ON operator_sessions (expires_at);

-- Every operator action: who (actor: an operator id, "cli:<os user>" or
-- "job:<name>"), when, what (a dotted action), on which object (kind and
-- id), with details (a JSON object of strings) free of secrets and contact
-- data. The credential lifecycle's migration (00023) creates the same table
-- with the same indexes; IF NOT EXISTS lets this one stand where it has not
-- run.
CREATE TABLE IF NOT EXISTS operator_audit (
    id          TEXT PRIMARY KEY,
    at          BIGINT NOT NULL,
    actor       TEXT NOT NULL,
    action      TEXT NOT NULL,
    object_kind TEXT NOT NULL,
    object_id   TEXT NOT NULL,
    details     TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS operator_audit_at ON operator_audit (at);
CREATE INDEX IF NOT EXISTS operator_audit_object ON operator_audit (object_kind, object_id, at);

-- +goose Down
-- operator_audit stays: the credential lifecycle's migration owns it too.
DROP TABLE operator_sessions;
DROP TABLE operator_users;
