-- +goose Up
-- A supply file's blocked period is stored under an id derived from its
-- provider, start and end. It was "blk_" and 20 hex digits of a digest,
-- which scatters one provider's periods over the whole primary-key index:
-- a large import then writes a page of that index per period instead of a
-- few per provider. From this version the provider's id leads
-- ("blk_<provider id>_" and the same digits), and the periods stored before
-- take that form here, so the next import finds them unchanged. The
-- periods a provider added on its pages (block_id set) keep their ids.
UPDATE calendar_entries SET id = 'blk_' || provider_id || '_' || substr(id, 5)
 WHERE kind = 'blocked' AND block_id IS NULL AND substr(id, 1, 4) = 'blk_' AND length(id) = 24;

-- +goose Down
UPDATE calendar_entries SET id = 'blk_' || substr(id, length(provider_id) + 6)
 WHERE kind = 'blocked' AND block_id IS NULL AND length(id) = length(provider_id) + 25
   AND substr(id, 1, length(provider_id) + 5) = 'blk_' || provider_id || '_';
