-- +goose Up
-- The credential lifecycle (issue 28, docs/operators.md "Credentials").
--
-- Rotation with an overlap: a partner credential holds its current token
-- (token_hash) and, until previous_token_expires_at, the token it replaced
-- (previous_token_hash). Both are keyed hashes; no token is ever stored.
ALTER TABLE partner_clients ADD COLUMN previous_token_hash TEXT;
ALTER TABLE partner_clients ADD COLUMN previous_token_expires_at BIGINT;
ALTER TABLE partner_clients ADD COLUMN rotated_at BIGINT;
CREATE UNIQUE INDEX partner_clients_previous_token ON partner_clients (previous_token_hash);

-- Last use, written at most once a minute per credential (the statement
-- changes no row when the stored time is less than a minute old).
-- previous_token_last_used_at tells whether the replaced token is still in
-- use during an overlap.
ALTER TABLE partner_clients ADD COLUMN last_used_at BIGINT;
ALTER TABLE partner_clients ADD COLUMN previous_token_last_used_at BIGINT;
ALTER TABLE oauth_clients ADD COLUMN last_used_at BIGINT;
ALTER TABLE provider_tokens ADD COLUMN last_used_at BIGINT;

-- What operators (on the console or the command line) and serve's
-- operator jobs did to what: one row per action, written in the action's
-- transaction. actor is an operator id, "cli:<os user>" or "job:<name>";
-- details is a JSON object of strings that never holds a secret or
-- customer contact data.
CREATE TABLE operator_audit (
    id          TEXT PRIMARY KEY,
    at          BIGINT NOT NULL,
    actor       TEXT NOT NULL,
    action      TEXT NOT NULL,
    object_kind TEXT NOT NULL,
    object_id   TEXT NOT NULL,
    details     TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX operator_audit_at ON operator_audit (at);
CREATE INDEX operator_audit_object ON operator_audit (object_kind, object_id, at);

-- +goose Down
DROP TABLE operator_audit;
ALTER TABLE provider_tokens DROP COLUMN last_used_at;
ALTER TABLE oauth_clients DROP COLUMN last_used_at;
ALTER TABLE partner_clients DROP COLUMN previous_token_last_used_at;
ALTER TABLE partner_clients DROP COLUMN last_used_at;
DROP INDEX partner_clients_previous_token;
ALTER TABLE partner_clients DROP COLUMN rotated_at;
ALTER TABLE partner_clients DROP COLUMN previous_token_expires_at;
ALTER TABLE partner_clients DROP COLUMN previous_token_hash;
