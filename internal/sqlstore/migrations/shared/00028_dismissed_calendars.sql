-- +goose Up
-- A calendar removed from its provider by hand (on the provider's pages,
-- through the provider API or by an operator's command): an import of a
-- supply file naming the address does not subscribe to it again. Keyed by
-- the address's blind index (the address is a secret and not kept here);
-- gone when a calendar of the provider with the address is added again.
CREATE TABLE dismissed_calendars (
    provider_id  TEXT NOT NULL REFERENCES providers (id),
    url_index    TEXT NOT NULL,
    dismissed_at BIGINT NOT NULL,
    PRIMARY KEY (provider_id, url_index)
);

-- +goose Down
DROP TABLE dismissed_calendars;
