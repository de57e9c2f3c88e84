package httpapi

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"bokat"
	"bokat/internal/oauth"
	"bokat/internal/sqlstore"
)

// TestOAuthClientsInTestModeIssueTestTokens: a test-realm OAuth client's
// secret, access and refresh tokens have the test form (bks_test_,
// bka_test_, bkf_test_, also after rotation), its tokens carry the test mode
// and see only the test realm's supply; a live client's never start so.
func TestOAuthClientsInTestModeIssueTestTokens(t *testing.T) {
	forEachOAuthEngine(t, func(t *testing.T, e *oauthEnv) {
		ctx := context.Background()
		e.withDemoSupply()
		_, opts := e.searchAs(t, "")
		testProvider := optionProvider(opts[0])
		e.moveToTestRealm(t, testProvider)
		for _, mode := range []bokat.Mode{bokat.ModeTest, bokat.ModeLive} {
			id, secret, err := oauth.CreateClient(ctx, e.db, e.hasher, oauth.ClientSpec{
				Name: "Assistent " + string(mode), RedirectURIs: []string{callbackURI}, Scopes: bokat.AllScopes(), Mode: mode,
			}, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(secret, bokat.ClientSecretTestPrefix) != mode.Test() || !strings.HasPrefix(secret, bokat.ClientSecretPrefix) {
				t.Errorf("%s client's secret starts %.9s", mode, secret)
			}
			conf := &oauth2.Config{ClientID: id, ClientSecret: secret, RedirectURL: callbackURI,
				Endpoint: oauth2.Endpoint{AuthURL: e.http.URL + "/oauth/authorize", TokenURL: e.http.URL + "/oauth/token",
					AuthStyle: oauth2.AuthStyleInHeader}}
			for _, s := range bokat.AllScopes() {
				conf.Scopes = append(conf.Scopes, string(s))
			}
			verifier := oauth2.GenerateVerifier()
			tok, err := conf.Exchange(ctx, e.authorize(conf, verifier, "kund-"+string(mode)+"@example.se"), oauth2.VerifierOption(verifier))
			if err != nil {
				t.Fatalf("%s exchange: %v", mode, err)
			}
			if strings.HasPrefix(tok.AccessToken, bokat.AccessTestTokenPrefix) != mode.Test() {
				t.Errorf("%s client's access token starts %.9s", mode, tok.AccessToken)
			}
			if strings.HasPrefix(tok.RefreshToken, bokat.RefreshTestTokenPrefix) != mode.Test() ||
				!strings.HasPrefix(tok.RefreshToken, bokat.RefreshTokenPrefix) {
				t.Errorf("%s client's refresh token starts %.9s", mode, tok.RefreshToken)
			}
			p, err := e.as.VerifyAccessToken(ctx, tok.AccessToken)
			if err != nil || p.Realm() != mode {
				t.Fatalf("%s principal = %+v, %v", mode, p, err)
			}
			r, found := e.searchAs(t, tok.AccessToken)
			checkMode(t, string(mode)+" OAuth search", r.Header, mode.Test())
			for _, o := range found {
				if (optionProvider(o) == testProvider) != mode.Test() {
					t.Errorf("%s OAuth search offered %s", mode, optionProvider(o))
				}
			}
			fresh, err := conf.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
			if err != nil || strings.HasPrefix(fresh.AccessToken, bokat.AccessTestTokenPrefix) != mode.Test() ||
				strings.HasPrefix(fresh.RefreshToken, bokat.RefreshTestTokenPrefix) != mode.Test() {
				t.Errorf("%s refreshed tokens %.9s, %.9s (%v)", mode, fresh.AccessToken, fresh.RefreshToken, err)
			}
		}
	})
}

// moveClientToTestRealm changes an OAuth client's stored mode to test,
// which the server never does: a client's realm is fixed at registration.
func (e *oauthEnv) moveClientToTestRealm(t testing.TB, clientID string) {
	t.Helper()
	ctx := context.Background()
	if err := e.db.InTx(ctx, func(tx *sqlstore.Tx) error {
		_, err := tx.Q().ExecContext(ctx, `UPDATE oauth_clients SET mode = 'test' WHERE id = $1`, clientID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// TestOAuthSecretsOfTheWrongFormAreRefused: a client whose stored mode
// disagrees with the form of its secret and tokens (here a live client
// moved to the test realm behind the server's back) cannot authenticate,
// refresh or call the API with them: a secret's form and its client's realm
// always agree.
func TestOAuthSecretsOfTheWrongFormAreRefused(t *testing.T) {
	forEachOAuthEngine(t, func(t *testing.T, e *oauthEnv) {
		ctx := context.Background()
		conf := e.newClient("Assistent", false)
		tok := e.exchange(conf, "kund@example.se")
		if _, err := e.as.VerifyAccessToken(ctx, tok.AccessToken); err != nil {
			t.Fatalf("before the move: %v", err)
		}
		e.moveClientToTestRealm(t, conf.ClientID)
		if _, err := e.as.VerifyAccessToken(ctx, tok.AccessToken); err == nil {
			t.Error("a live-form access token acted for a test client")
		}
		status, body, _ := e.tokenRequest(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}},
			conf.ClientID, conf.ClientSecret)
		if status != http.StatusUnauthorized || body["error"] != "invalid_client" {
			t.Errorf("live-form secret of a test client: %d %v, want 401 invalid_client", status, body)
		}
	})
}

// TestOAuthRefreshTokenOfTheWrongFormIsRefused: a public client (no secret
// to refuse first) moved to the test realm cannot redeem its live-form
// refresh token.
func TestOAuthRefreshTokenOfTheWrongFormIsRefused(t *testing.T) {
	forEachOAuthEngine(t, func(t *testing.T, e *oauthEnv) {
		conf := e.newClient("Assistent", true)
		tok := e.exchange(conf, "kund@example.se")
		e.moveClientToTestRealm(t, conf.ClientID)
		status, body, _ := e.tokenRequest(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken},
			"client_id": {conf.ClientID}}, "", "")
		if status != http.StatusBadRequest || body["error"] != "invalid_grant" {
			t.Errorf("live-form refresh token of a test client: %d %v, want 400 invalid_grant", status, body)
		}
	})
}

// TestDynamicRegistrationOfTestClients: RFC 7591 registration registers a
// test-realm client when the metadata says "bokat_mode": "test" (and says
// the mode of every client it registers); its tokens have the test form and
// act in the test realm. Any other value is invalid_client_metadata, and a
// Client ID Metadata Document cannot name a test client.
func TestDynamicRegistrationOfTestClients(t *testing.T) {
	forEachOAuthEngine(t, func(t *testing.T, e *oauthEnv) {
		ctx := context.Background()
		e.withDemoSupply()
		_, opts := e.searchAs(t, "")
		testProvider := optionProvider(opts[0])
		e.moveToTestRealm(t, testProvider)
		for _, c := range []struct {
			member string
			mode   bokat.Mode
		}{{`,"bokat_mode":"test"`, bokat.ModeTest}, {`,"bokat_mode":"live"`, bokat.ModeLive}, {"", bokat.ModeLive}} {
			status, body, _ := e.register("", `{"redirect_uris":["`+callbackURI+`"],"client_name":"Testapp"`+c.member+`}`)
			if status != http.StatusCreated || body["bokat_mode"] != string(c.mode) {
				t.Fatalf("register %q: %d %v, want 201 with bokat_mode %s", c.member, status, body, c.mode)
			}
			id := body["client_id"].(string)
			stored, err := e.db.OAuthClient(ctx, id)
			if err != nil || stored.Mode.Or() != c.mode || !stored.Public() {
				t.Fatalf("stored client %+v, %v; want a public %s client", stored, err, c.mode)
			}
			conf := &oauth2.Config{ClientID: id, RedirectURL: callbackURI,
				Endpoint: oauth2.Endpoint{AuthURL: e.http.URL + "/oauth/authorize", TokenURL: e.http.URL + "/oauth/token",
					AuthStyle: oauth2.AuthStyleInParams}}
			for _, s := range oauth.SelfRegisteredScopes() {
				conf.Scopes = append(conf.Scopes, string(s))
			}
			tok := e.exchange(conf, "kund@example.se")
			if strings.HasPrefix(tok.AccessToken, bokat.AccessTestTokenPrefix) != c.mode.Test() ||
				strings.HasPrefix(tok.RefreshToken, bokat.RefreshTestTokenPrefix) != c.mode.Test() {
				t.Errorf("%s registered client's tokens start %.9s, %.9s", c.mode, tok.AccessToken, tok.RefreshToken)
			}
			r, found := e.searchAs(t, tok.AccessToken)
			checkMode(t, string(c.mode)+" registered client's search", r.Header, c.mode.Test())
			for _, o := range found {
				if (optionProvider(o) == testProvider) != c.mode.Test() {
					t.Errorf("%s registered client's search offered %s", c.mode, optionProvider(o))
				}
			}
		}
		for _, bad := range []string{`"sandbox"`, `"TEST"`, `true`} {
			status, body, _ := e.register("", `{"redirect_uris":["`+callbackURI+`"],"bokat_mode":`+bad+`}`)
			if status != http.StatusBadRequest || body["error"] != "invalid_client_metadata" {
				t.Errorf("bokat_mode %s: %d %v, want 400 invalid_client_metadata", bad, status, body)
			}
		}
	})
}
