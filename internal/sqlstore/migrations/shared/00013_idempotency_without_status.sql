-- +goose Up
-- A stored idempotent outcome is the response body and the resource id; the
-- status it is answered with follows from the operation and whether the
-- answer is a replay, so the store keeps none.
ALTER TABLE idempotency_keys DROP COLUMN response_status;

-- +goose Down
-- The statuses the operations answered when the column existed: 201 for a
-- confirmation or a request creation, 200 for a cancel or a reschedule.
ALTER TABLE idempotency_keys ADD COLUMN response_status INTEGER NOT NULL DEFAULT 200;
UPDATE idempotency_keys SET response_status = 201 WHERE operation IN ('bookings.confirm', 'requests.create');
