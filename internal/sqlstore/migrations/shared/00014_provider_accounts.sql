-- +goose Up
-- Provider accounts: the people who sign in to a provider's pages, the
-- invitations that let them, their browser sessions, and an audit row for
-- every write a provider user (or the operator, for a provider) makes.
-- A person's e-mail address is personal data kept like a customer's: sealed
-- at rest under the server's --secret-key (key_id names the key; the value
-- is bound to the table, row and column) and found by its blind index
-- (email_index: a keyed hash of the normalised address). Sign-in codes are
-- those of every sign-in page (oauth_signin_codes), so that one bound holds
-- the mail sent to one address. Instants are BIGINT Unix milliseconds.

CREATE TABLE provider_users (
    id              TEXT PRIMARY KEY,
    provider_id     TEXT NOT NULL REFERENCES providers (id),
    email           TEXT NOT NULL,
    email_index     TEXT NOT NULL,
    key_id          TEXT NOT NULL,
    role            TEXT NOT NULL CHECK (role IN ('owner', 'staff')),
    -- Who invited them: a provider user id, or 'operator'.
    invited_by      TEXT NOT NULL,
    created_at      BIGINT NOT NULL,
    last_sign_in_at BIGINT,
    removed_at      BIGINT
);
-- One active account per address: the address alone says which provider a
-- person signs in to.
CREATE UNIQUE INDEX provider_users_email ON provider_users (email_index) WHERE removed_at IS NULL;
CREATE INDEX provider_users_provider ON provider_users (provider_id);

CREATE TABLE provider_invitations (
    id          TEXT PRIMARY KEY,
    provider_id TEXT NOT NULL REFERENCES providers (id),
    email       TEXT NOT NULL,
    email_index TEXT NOT NULL,
    key_id      TEXT NOT NULL,
    role        TEXT NOT NULL CHECK (role IN ('owner', 'staff')),
    invited_by  TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL,
    -- Set when the invitee first signs in (their account is then made), or
    -- when the invitation is withdrawn.
    accepted_at BIGINT,
    revoked_at  BIGINT
);
CREATE INDEX provider_invitations_email ON provider_invitations (email_index, expires_at);
CREATE INDEX provider_invitations_provider ON provider_invitations (provider_id);

CREATE TABLE provider_sessions (
    -- Keyed hash of the session cookie.
    token_hash TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL REFERENCES provider_users (id),
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX provider_sessions_user ON provider_sessions (user_id);
CREATE INDEX provider_sessions_expiry ON provider_sessions (expires_at);

-- Who did what, when, on which object, for one provider. actor is a
-- provider user id or 'operator'; action a dotted name
-- ('booking.acknowledged', 'booking.contact_opened', 'user.invited', ...);
-- object_type and object_id name the booking, user or invitation; note is
-- free of contact data.
CREATE TABLE provider_audit (
    id          TEXT PRIMARY KEY,
    provider_id TEXT NOT NULL REFERENCES providers (id),
    actor       TEXT NOT NULL,
    at          BIGINT NOT NULL,
    action      TEXT NOT NULL,
    object_type TEXT NOT NULL,
    object_id   TEXT NOT NULL,
    note        TEXT NOT NULL DEFAULT ''
);
CREATE INDEX provider_audit_provider ON provider_audit (provider_id, at);
CREATE INDEX provider_audit_object ON provider_audit (object_type, object_id);

-- A provider user's acknowledgement of a booking: who and when.
ALTER TABLE bookings ADD COLUMN provider_acknowledged_at BIGINT;
ALTER TABLE bookings ADD COLUMN provider_acknowledged_by TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE bookings DROP COLUMN provider_acknowledged_by;
ALTER TABLE bookings DROP COLUMN provider_acknowledged_at;
DROP TABLE provider_audit;
DROP TABLE provider_sessions;
DROP TABLE provider_invitations;
DROP TABLE provider_users;
