-- +goose Up
-- Customer contact data is sealed at rest (AES-256-GCM under the server's
-- --secret-key, like webhook signing secrets): each contact column of a row
-- (bookings: customer_*, *_address, consent_statement, cancel_notes;
-- follow_up_requests: customer_json, location_json, description,
-- consent_statement)
-- holds base64 of nonce || ciphertext, bound to the table, row id and
-- column, under the key contact_key_id names. contact_key_id NULL marks a
-- row written before sealing (plain text), which `serve` re-seals; an
-- empty column stays empty. Lookups by customer use the blind index: keyed
-- hashes of the normalised e-mail address and phone number, never the
-- plain value ('' when the value is empty or not yet indexed).
-- The hourly re-seal scans contact_key_id without an index: one index
-- less to write on every confirmation.
-- contact_erased_at is set when the contact data was erased (retention or
-- a data subject's request): the sealed columns are then empty.
ALTER TABLE bookings ADD COLUMN contact_key_id TEXT;
ALTER TABLE bookings ADD COLUMN customer_email_index TEXT NOT NULL DEFAULT '';
ALTER TABLE bookings ADD COLUMN customer_phone_index TEXT NOT NULL DEFAULT '';
CREATE INDEX bookings_customer_email_index ON bookings (customer_email_index) WHERE customer_email_index <> '';
CREATE INDEX bookings_customer_phone_index ON bookings (customer_phone_index) WHERE customer_phone_index <> '';
ALTER TABLE bookings ADD COLUMN contact_erased_at BIGINT;
-- Retention finds bookings whose slot ended or that were cancelled long ago.
CREATE INDEX bookings_retention_slot ON bookings (slot_end_at) WHERE contact_erased_at IS NULL;
CREATE INDEX bookings_retention_cancel ON bookings (cancelled_at) WHERE contact_erased_at IS NULL AND cancelled_at IS NOT NULL;

ALTER TABLE follow_up_requests ADD COLUMN contact_key_id TEXT;
ALTER TABLE follow_up_requests ADD COLUMN customer_email_index TEXT NOT NULL DEFAULT '';
ALTER TABLE follow_up_requests ADD COLUMN customer_phone_index TEXT NOT NULL DEFAULT '';
CREATE INDEX follow_up_requests_customer_email_index ON follow_up_requests (customer_email_index) WHERE customer_email_index <> '';
CREATE INDEX follow_up_requests_customer_phone_index ON follow_up_requests (customer_phone_index) WHERE customer_phone_index <> '';
ALTER TABLE follow_up_requests ADD COLUMN contact_erased_at BIGINT;
CREATE INDEX follow_up_requests_retention ON follow_up_requests (created_at) WHERE contact_erased_at IS NULL;

-- +goose Down
DROP INDEX follow_up_requests_retention;
ALTER TABLE follow_up_requests DROP COLUMN contact_erased_at;
DROP INDEX bookings_retention_cancel;
DROP INDEX bookings_retention_slot;
ALTER TABLE bookings DROP COLUMN contact_erased_at;
DROP INDEX follow_up_requests_customer_phone_index;
DROP INDEX follow_up_requests_customer_email_index;
ALTER TABLE follow_up_requests DROP COLUMN customer_phone_index;
ALTER TABLE follow_up_requests DROP COLUMN customer_email_index;
ALTER TABLE follow_up_requests DROP COLUMN contact_key_id;
DROP INDEX bookings_customer_phone_index;
DROP INDEX bookings_customer_email_index;
ALTER TABLE bookings DROP COLUMN customer_phone_index;
ALTER TABLE bookings DROP COLUMN customer_email_index;
ALTER TABLE bookings DROP COLUMN contact_key_id;
