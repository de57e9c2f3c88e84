-- +goose Up
-- Provider follow-up requests (the fallback when nothing is directly
-- bookable). Customer contact data lives only in customer_json and is never
-- returned by the API, logged or put in events; it leaves the store only in
-- the provider notification.
CREATE TABLE follow_up_requests (
    id                   TEXT PRIMARY KEY,
    session_id           TEXT NOT NULL,
    owner_client_id      TEXT NOT NULL,
    owner_user_id        TEXT NOT NULL DEFAULT '',
    vertical_id          TEXT NOT NULL,
    job_type_id          TEXT NOT NULL,
    status               TEXT NOT NULL,
    description          TEXT NOT NULL,
    customer_json        TEXT NOT NULL,
    location_json        TEXT NOT NULL,
    postcode             TEXT NOT NULL DEFAULT '',
    timing_json          TEXT NOT NULL,
    details_json         TEXT NOT NULL DEFAULT '{}',
    budget_sek           BIGINT,
    customer_next_step   TEXT NOT NULL,
    source               TEXT NOT NULL,
    external_reference   TEXT NOT NULL DEFAULT '',
    locale               TEXT NOT NULL,
    timezone             TEXT NOT NULL,
    consent_statement    TEXT NOT NULL DEFAULT '',
    consent_source       TEXT NOT NULL DEFAULT '',
    consent_collected_at BIGINT,
    candidate_count      INTEGER NOT NULL,
    created_at           BIGINT NOT NULL
);
CREATE INDEX follow_up_requests_owner ON follow_up_requests (owner_client_id, created_at);

-- The providers a request was handed to. The notification worker records
-- how sending the request to each went: pending until the mail server took
-- the message (sent), refused it for good or ran out of attempts (failed),
-- or there was no one to send to (skipped: provider gone or withdrawn), so
-- a retry writes only to the providers still pending.
CREATE TABLE follow_up_request_candidates (
    request_id          TEXT NOT NULL REFERENCES follow_up_requests (id),
    provider_id         TEXT NOT NULL,
    direct_booking      BOOLEAN NOT NULL,
    notification_status TEXT NOT NULL DEFAULT 'pending'
                        CHECK (notification_status IN ('pending', 'sent', 'skipped', 'failed')),
    notified_at         BIGINT,
    PRIMARY KEY (request_id, provider_id)
);

-- +goose Down
DROP TABLE follow_up_request_candidates;
DROP TABLE follow_up_requests;
