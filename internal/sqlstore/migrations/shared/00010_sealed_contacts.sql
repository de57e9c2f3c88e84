-- +goose Up
-- Customer contact data is sealed at rest (AES-256-GCM under the server's
-- --secret-key, like webhook signing secrets): each contact column of a row
-- holds base64 of nonce || ciphertext, bound to the table, row id and
-- column, under the key contact_key_id names. contact_key_id NULL marks a
-- row written before sealing (plain text), which `serve` re-seals; an
-- empty column stays empty. Lookups by customer use the blind index: keyed
-- hashes of the normalised e-mail address and phone number, never the
-- plain value ('' when the value is empty or not yet indexed).
ALTER TABLE bookings ADD COLUMN contact_key_id TEXT;
ALTER TABLE bookings ADD COLUMN customer_email_index TEXT NOT NULL DEFAULT '';
ALTER TABLE bookings ADD COLUMN customer_phone_index TEXT NOT NULL DEFAULT '';
CREATE INDEX bookings_customer_email_index ON bookings (customer_email_index) WHERE customer_email_index <> '';
CREATE INDEX bookings_customer_phone_index ON bookings (customer_phone_index) WHERE customer_phone_index <> '';
CREATE INDEX bookings_contact_key ON bookings (contact_key_id);

ALTER TABLE follow_up_requests ADD COLUMN contact_key_id TEXT;
ALTER TABLE follow_up_requests ADD COLUMN customer_email_index TEXT NOT NULL DEFAULT '';
ALTER TABLE follow_up_requests ADD COLUMN customer_phone_index TEXT NOT NULL DEFAULT '';
CREATE INDEX follow_up_requests_customer_email_index ON follow_up_requests (customer_email_index) WHERE customer_email_index <> '';
CREATE INDEX follow_up_requests_customer_phone_index ON follow_up_requests (customer_phone_index) WHERE customer_phone_index <> '';
CREATE INDEX follow_up_requests_contact_key ON follow_up_requests (contact_key_id);

-- +goose Down
DROP INDEX follow_up_requests_contact_key;
DROP INDEX follow_up_requests_customer_phone_index;
DROP INDEX follow_up_requests_customer_email_index;
ALTER TABLE follow_up_requests DROP COLUMN customer_phone_index;
ALTER TABLE follow_up_requests DROP COLUMN customer_email_index;
ALTER TABLE follow_up_requests DROP COLUMN contact_key_id;
DROP INDEX bookings_contact_key;
DROP INDEX bookings_customer_phone_index;
DROP INDEX bookings_customer_email_index;
ALTER TABLE bookings DROP COLUMN customer_phone_index;
ALTER TABLE bookings DROP COLUMN customer_email_index;
ALTER TABLE bookings DROP COLUMN contact_key_id;
