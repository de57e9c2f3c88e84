-- +goose Up
-- Notification jobs remember the API request that queued them (for logs),
-- and whether a provider job that failed for good has raised
-- booking.provider_action_required yet. A failed provider job whose
-- escalated_at is NULL is due for escalation at next_attempt_at (reused as
-- the escalation lease).
ALTER TABLE notification_jobs ADD COLUMN api_request_id TEXT NOT NULL DEFAULT '';
ALTER TABLE notification_jobs ADD COLUMN trace_id TEXT NOT NULL DEFAULT '';
ALTER TABLE notification_jobs ADD COLUMN escalated_at BIGINT;
CREATE INDEX notification_jobs_escalation ON notification_jobs (next_attempt_at)
    WHERE status = 'failed' AND recipient = 'provider' AND escalated_at IS NULL;

-- +goose Down
DROP INDEX notification_jobs_escalation;
ALTER TABLE notification_jobs DROP COLUMN escalated_at;
ALTER TABLE notification_jobs DROP COLUMN trace_id;
ALTER TABLE notification_jobs DROP COLUMN api_request_id;
