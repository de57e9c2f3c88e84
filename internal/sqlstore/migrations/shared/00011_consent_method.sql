-- +goose Up
-- How the user's consent to a booking write was obtained: 'elicitation'
-- (Bokat asked the user itself, through an MCP client's form) or
-- 'caller_declared' (the caller sent the consent fields). consent_method is
-- that of the confirmation; change_consent_method that of the latest
-- cancellation or reschedule ('' while there was none). Rows written
-- before the column existed were all caller-declared.
ALTER TABLE bookings ADD COLUMN consent_method TEXT NOT NULL DEFAULT 'caller_declared';
ALTER TABLE bookings ADD COLUMN change_consent_method TEXT NOT NULL DEFAULT '';
UPDATE bookings SET change_consent_method = 'caller_declared' WHERE cancelled_at IS NOT NULL OR rescheduled_at IS NOT NULL;
-- The nonces of MCP elicitation states already used: a state is accepted
-- once, on any instance. A row may be removed once expires_at has passed
-- (the state is refused as expired then anyway).
CREATE TABLE elicitation_nonces (
    nonce      TEXT PRIMARY KEY,
    expires_at BIGINT NOT NULL,
    used_at    BIGINT NOT NULL
);

-- +goose Down
DROP TABLE elicitation_nonces;
ALTER TABLE bookings DROP COLUMN change_consent_method;
ALTER TABLE bookings DROP COLUMN consent_method;
