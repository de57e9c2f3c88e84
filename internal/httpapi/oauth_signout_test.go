package httpapi

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/oauth2"
)

// TestSignOutEndsTheSession: "not you?" on the consent page ends the
// session on the server, not only in this browser, and leads back to the
// sign-in page of the same authorization request; a cross-site sign-out is
// refused and ends nothing.
func TestSignOutEndsTheSession(t *testing.T) {
	t.Parallel()
	forEachOAuthEngine(t, func(t *testing.T, e *oauthEnv) {
		conf := e.newClient("Hemhjälpen AI", false)
		authURL := conf.AuthCodeURL("st-signout", oauth2.S256ChallengeOption(oauth2.GenerateVerifier()))
		b := e.browser()
		consent := e.signIn(b, authURL, "utloggning@example.se")
		session := cookieNamed(t, b, "/oauth", "bokat_session")

		// The session cookie alone, in another browser, reaches the consent page.
		withSession := func() *browser {
			other := e.browser()
			u, _ := url.Parse(other.base + "/oauth")
			other.client.Jar.SetCookies(u, []*http.Cookie{{Name: "bokat_session", Value: session, Path: "/oauth"}})
			return other
		}
		if resp, body := withSession().get(authURL); resp.StatusCode != http.StatusOK || !strings.Contains(body, `value="approve"`) {
			t.Fatalf("authorization with the session cookie: %d, want the consent page\n%s", resp.StatusCode, body)
		}

		form := formOf(t, consent, "/oauth/sign-out")
		if resp, _ := b.post("/oauth/sign-out", form, map[string]string{"Sec-Fetch-Site": "cross-site"}); resp.StatusCode != http.StatusForbidden {
			t.Fatalf("cross-site sign-out: %d, want 403", resp.StatusCode)
		}
		if resp, body := withSession().get(authURL); resp.StatusCode != http.StatusOK || !strings.Contains(body, `value="approve"`) {
			t.Fatalf("after a refused sign-out: %d, want the consent page still", resp.StatusCode)
		}

		resp, body := b.post("/oauth/sign-out", form, nil)
		signIn := expectRedirect(t, resp, body)
		if !strings.HasPrefix(signIn, "/oauth/sign-in?") || !strings.Contains(signIn, "state=st-signout") {
			t.Fatalf("sign-out went to %q, want the sign-in page of the same request", signIn)
		}
		u, _ := url.Parse(b.base + "/oauth")
		for _, c := range b.client.Jar.Cookies(u) {
			if c.Name == "bokat_session" {
				t.Errorf("the browser still holds a session cookie after sign-out")
			}
		}
		// The old session is gone on the server: its cookie now leads to sign-in.
		for name, br := range map[string]*browser{"this browser": b, "the old cookie": withSession()} {
			resp, body := br.get(authURL)
			if loc := expectRedirect(t, resp, body); !strings.HasPrefix(loc, "/oauth/sign-in?") {
				t.Errorf("%s after sign-out: authorization went to %q, want the sign-in page", name, loc)
			}
		}
	})
}
