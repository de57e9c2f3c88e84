package httpapi

import (
	"context"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"bokat"
	"bokat/internal/oauth"
)

// TestOAuthClientsInTestModeIssueTestTokens: a test-realm OAuth client's
// access tokens start with bka_test_, carry the test mode and see only the
// test realm's supply; a live client's never start so.
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
			if err != nil || strings.HasPrefix(fresh.AccessToken, bokat.AccessTestTokenPrefix) != mode.Test() {
				t.Errorf("%s refreshed access token %.9s (%v)", mode, fresh.AccessToken, err)
			}
		}
	})
}
