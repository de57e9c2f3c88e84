-- +goose Up
-- The console's providers list tells which providers need attention from
-- the messages that failed lately and the calendars failing now: both are
-- few among many rows, read by these partial indexes.
CREATE INDEX notification_jobs_failed ON notification_jobs (updated_at) WHERE status = 'failed';
CREATE INDEX calendar_feeds_failing ON calendar_feeds (provider_id) WHERE failing_since IS NOT NULL;

-- +goose Down
DROP INDEX calendar_feeds_failing;
DROP INDEX notification_jobs_failed;
