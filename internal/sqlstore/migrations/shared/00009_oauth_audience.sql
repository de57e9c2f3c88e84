-- +goose Up
-- RFC 8707 audience binding: a grant (and so every token of its family)
-- is for one resource of this service, 'api' (the REST API) or 'mcp' (the
-- MCP endpoint). Grants from before are for the REST API, the only
-- resource there was.
ALTER TABLE oauth_grants ADD COLUMN audience TEXT NOT NULL DEFAULT 'api';
-- How a client came to be: 'operator' (bokat oauth-client create),
-- 'dynamic' (RFC 7591 registration at /oauth/register) or 'metadata' (a
-- Client ID Metadata Document: the id is the document's https URL, and the
-- row is refreshed from the document).
ALTER TABLE oauth_clients ADD COLUMN registration TEXT NOT NULL DEFAULT 'operator';

-- +goose Down
ALTER TABLE oauth_clients DROP COLUMN registration;
ALTER TABLE oauth_grants DROP COLUMN audience;
