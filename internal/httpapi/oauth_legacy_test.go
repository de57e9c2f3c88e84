package httpapi

import (
	"testing"

	"bokat"
)

// The deprecated paths accept only the partner credential forms: a valid
// OAuth access token is refused there while the same token works on v1.
func TestOAuthTokensAreRefusedOnDeprecatedPaths(t *testing.T) {
	t.Parallel()
	e := newOAuthEnv(t, sqliteDB(t), oauthSetup{})
	conf := e.newClient("Assistenten", false, bokat.ScopeRequestsCreate)
	tok := e.exchange(conf, "kund@example.se")

	r := e.do(request{Method: "POST", Path: "/v1/requests", Body: validRequestBody(), Header: bearer(tok.AccessToken)})
	if r.Status != 201 {
		t.Fatalf("v1 request creation with an OAuth token: %d %s", r.Status, r.Body)
	}
	r = e.do(request{Method: "POST", Path: "/api/public/requests", Body: validRequestBody(), Header: bearer(tok.AccessToken)})
	checkLegacyError(t, r, 401, "unauthorized")
	checkDeprecated(t, r, "/v1/requests")
}
