-- +goose Up
-- The test clock (issue 25): how far each test owner's clock stands ahead
-- of the server's, in milliseconds. It only grows, up to a bound the
-- server enforces. The requests of that owner's test credential take the
-- server's now plus the offset; no live credential has a row here, and
-- nothing of the live realm reads it (docs/testing.md, "The test clock").
CREATE TABLE test_clocks (
    owner_client_id TEXT NOT NULL,
    owner_user_id   TEXT NOT NULL DEFAULT '',
    offset_ms       BIGINT NOT NULL CHECK (offset_ms >= 0),
    updated_at      BIGINT NOT NULL,
    PRIMARY KEY (owner_client_id, owner_user_id)
);

-- +goose Down
DROP TABLE test_clocks;
