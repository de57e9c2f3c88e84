package httpapi

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"bokat"
)

// TestOAuthRefusesUncleanText: a NUL, another control character or invalid
// UTF-8 in any OAuth parameter is refused at the edge with the endpoint's
// own error (the error page with 400; invalid_client for client
// credentials; invalid_request for the rest), on both engines, and never
// reaches the store: PostgreSQL would refuse it with SQLSTATE 22021 and the
// endpoints answered 503 and 500.
func TestOAuthRefusesUncleanText(t *testing.T) {
	t.Parallel()
	forEachOAuthEngine(t, func(t *testing.T, e *oauthEnv) {
		conf := e.newClient("Hemhjälpen AI", false, bokat.ScopeBookingsRead)
		bad := []string{"\x00", "oc_\x00x", "\xff", "oc_\x1b", "\x7f", "\u0085"}

		t.Run("pages", func(t *testing.T) {
			b := e.browser()
			for _, path := range []string{"/oauth/authorize", "/oauth/sign-in", "/oauth/sign-in/code"} {
				for _, v := range bad {
					resp, body := b.get(path + "?" + url.Values{"client_id": {v}}.Encode())
					if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "invalid_request") {
						t.Errorf("GET %s client_id=%q: %d, want the 400 error page", path, v, resp.StatusCode)
					}
				}
				// A trusted client does not make an unclean state echoable.
				q := authzQuery(conf.ClientID)
				q.Set("state", "s\x00")
				resp, body := b.get(path + "?" + q.Encode())
				if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" || !strings.Contains(body, "invalid_request") {
					t.Errorf("GET %s with a NUL in state: %d Location %q, want the 400 error page", path, resp.StatusCode, resp.Header.Get("Location"))
				}
			}

			// The sign-in form: an unclean address or hidden field.
			resp, body := b.get("/oauth/sign-in?" + authzQuery(conf.ClientID).Encode())
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("sign-in page: %d", resp.StatusCode)
			}
			form := formOf(t, body, "/oauth/sign-in")
			for field, v := range map[string]string{"email": "nul\x00@example.se", "client_id": "\x00", "code_challenge": "\xff"} {
				f := url.Values{}
				for k, vs := range form {
					f[k] = vs
				}
				f.Set("email", "clean@example.se")
				f.Set(field, v)
				resp, body := b.post("/oauth/sign-in", f, nil)
				if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "invalid_request") {
					t.Errorf("POST /oauth/sign-in with %s=%q: %d, want the 400 error page", field, v, resp.StatusCode)
				}
			}
			if n := len(e.sender.all()); n != 0 {
				t.Errorf("%d codes sent for unclean forms", n)
			}
			// The code form and the consent form go through the same check.
			form.Set("email", "clean@example.se")
			resp, body = b.post("/oauth/sign-in", form, nil)
			resp, body = b.get(expectRedirect(t, resp, body))
			codeForm := formOf(t, body, "/oauth/sign-in/code")
			codeForm.Set("code", "1234\x005678")
			if resp, _ := b.post("/oauth/sign-in/code", codeForm, nil); resp.StatusCode != http.StatusBadRequest {
				t.Errorf("POST /oauth/sign-in/code with a NUL in the code: %d, want 400", resp.StatusCode)
			}
			codeForm.Set("code", e.sender.last(t, "clean@example.se").code)
			codeForm.Set("redirect_uri", "\xff")
			if resp, _ := b.post("/oauth/sign-in/code", codeForm, nil); resp.StatusCode != http.StatusBadRequest {
				t.Errorf("POST /oauth/sign-in/code with invalid UTF-8: %d, want 400", resp.StatusCode)
			}
			consentForm := url.Values{"client_id": {"\x00"}, "decision": {"approve"}}
			if resp, _ := b.post("/oauth/authorize", consentForm, nil); resp.StatusCode != http.StatusBadRequest {
				t.Errorf("POST /oauth/authorize with a NUL: %d, want 400", resp.StatusCode)
			}
		})

		t.Run("token and revocation", func(t *testing.T) {
			for _, path := range []string{"/oauth/token", "/oauth/revoke"} {
				for _, v := range bad {
					form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"bkr_x"}, "token": {"bkr_x"}}
					// client_id in the body (a public client's form).
					f := url.Values{"client_id": {v}}
					for k, vs := range form {
						f[k] = vs
					}
					status, body, h := e.post(path, f, "", "")
					checkTokenError(t, status, body, h, http.StatusUnauthorized, "invalid_client")
					// client_secret_post with an unclean secret.
					f.Set("client_id", conf.ClientID)
					f.Set("client_secret", "bks_"+v)
					status, body, h = e.post(path, f, "", "")
					checkTokenError(t, status, body, h, http.StatusUnauthorized, "invalid_client")
					// client_secret_basic with an unclean id or secret.
					status, body, h = e.post(path, form, v, conf.ClientSecret)
					checkTokenError(t, status, body, h, http.StatusUnauthorized, "invalid_client")
					status, body, h = e.post(path, form, conf.ClientID, conf.ClientSecret+v)
					checkTokenError(t, status, body, h, http.StatusUnauthorized, "invalid_client")
				}
			}
			verifier := oauth2.GenerateVerifier()
			for name, form := range map[string]url.Values{
				"code":          {"grant_type": {"authorization_code"}, "code": {"bkc_\x00"}, "code_verifier": {verifier}},
				"code_verifier": {"grant_type": {"authorization_code"}, "code": {"bkc_x"}, "code_verifier": {verifier + "\xff"}},
				"redirect_uri":  {"grant_type": {"authorization_code"}, "code": {"bkc_x"}, "code_verifier": {verifier}, "redirect_uri": {callbackURI + "\x00"}},
				"refresh_token": {"grant_type": {"refresh_token"}, "refresh_token": {"bkr_\x00"}},
				"scope":         {"grant_type": {"refresh_token"}, "refresh_token": {"bkr_x"}, "scope": {"service.bookings.read\x00"}},
				"grant_type":    {"grant_type": {"refresh_token\x00"}},
			} {
				status, body, h := e.tokenRequest(form, conf.ClientID, conf.ClientSecret)
				if status != http.StatusBadRequest || body["error"] != "invalid_request" {
					t.Errorf("token request with an unclean %s: %d %v, want 400 invalid_request", name, status, body)
					continue
				}
				checkTokenError(t, status, body, h, http.StatusBadRequest, "invalid_request")
			}
			status, body, h := e.post("/oauth/revoke", url.Values{"token": {"bka_\x00"}}, conf.ClientID, conf.ClientSecret)
			checkTokenError(t, status, body, h, http.StatusBadRequest, "invalid_request")
		})

		// The clean flow still works after all that.
		verifier := oauth2.GenerateVerifier()
		code := e.authorize(conf, verifier, "after@example.se")
		if _, err := conf.Exchange(context.Background(), code, oauth2.VerifierOption(verifier)); err != nil {
			t.Fatalf("clean exchange: %v", err)
		}
		if logs := e.logs.String(); strings.Contains(logs, `"level":"ERROR"`) {
			t.Errorf("unclean OAuth parameters logged errors:\n%s", logs)
		}
	})
}

// TestCodeRedemptionWithoutVerifierSpendsTheCode: a redemption without a
// code_verifier, or with a malformed one, is refused (invalid_request) and
// spends the code like any other attempt of its client, so the verifier
// cannot be supplied on a second try.
func TestCodeRedemptionWithoutVerifierSpendsTheCode(t *testing.T) {
	t.Parallel()
	forEachOAuthEngine(t, func(t *testing.T, e *oauthEnv) {
		conf := e.newClient("Hemhjälpen AI", false, bokat.ScopeBookingsRead)
		verifier := oauth2.GenerateVerifier()
		b := e.browser()
		e.signIn(b, conf.AuthCodeURL("x", oauth2.S256ChallengeOption(verifier)), "spend@example.se")
		for name, v := range map[string]string{"missing": "", "malformed": "short"} {
			t.Run(name, func(t *testing.T) {
				code := e.newCode(b, conf, verifier)
				f := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {callbackURI}}
				if v != "" {
					f.Set("code_verifier", v)
				}
				status, body, h := e.tokenRequest(f, conf.ClientID, conf.ClientSecret)
				checkTokenError(t, status, body, h, http.StatusBadRequest, "invalid_request")
				_, err := conf.Exchange(context.Background(), code, oauth2.VerifierOption(verifier))
				if got := retrieveErrorCode(err); got != "invalid_grant" {
					t.Fatalf("the right verifier after a %s one: %v, want invalid_grant (the code is spent)", name, err)
				}
			})
		}
	})
}
