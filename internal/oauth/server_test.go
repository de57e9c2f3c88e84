package oauth_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"bokat"
	"bokat/internal/auth"
	"bokat/internal/oauth"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
)

func testServer(t *testing.T, baseURL string) (*oauth.Server, *sqlstore.DB) {
	t.Helper()
	db := sqlstoretest.Open(t, sqlstore.SQLite)
	h, err := auth.NewHasher([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := oauth.New(oauth.Config{BaseURL: baseURL, Store: sqlstore.Bind[oauth.Tx](db), Hasher: h, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return s, db
}

func TestCookiesAreSecureOnHTTPS(t *testing.T) {
	t.Parallel()
	for base, secure := range map[string]bool{"https://api.bokat.se": true, "http://127.0.0.1:8080": false} {
		s, _ := testServer(t, base)
		w := httptest.NewRecorder()
		oauth.BrowserID(s, w, httptest.NewRequest("GET", "/oauth/sign-in", nil))
		cookies := w.Result().Cookies()
		if len(cookies) != 1 || cookies[0].Secure != secure || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteLaxMode {
			t.Errorf("%s: cookies %+v, want one HttpOnly Lax cookie with Secure=%v", base, cookies, secure)
		}
	}
}

func TestVerifyAccessTokenRefusesOtherTokens(t *testing.T) {
	t.Parallel()
	s, _ := testServer(t, "http://127.0.0.1:8080")
	for _, tok := range []string{"", "bkp_partner", "bkr_refresh", "bka_unknown", "bka_" + strings.Repeat("a", 300)} {
		if _, err := s.VerifyAccessToken(context.Background(), tok); !errors.Is(err, auth.ErrInvalidCredential) {
			t.Errorf("VerifyAccessToken(%.20q) = %v, want ErrInvalidCredential", tok, err)
		}
	}
}

func TestCreateClientValidatesAndHashesTheSecret(t *testing.T) {
	t.Parallel()
	s, db := testServer(t, "http://127.0.0.1:8080")
	ctx := context.Background()
	bad := []oauth.ClientSpec{
		{Name: "", RedirectURIs: []string{"https://a.example/cb"}, Scopes: bokat.AllScopes()},
		{Name: "A", Scopes: bokat.AllScopes()},
		{Name: "A", RedirectURIs: []string{"http://a.example/cb"}, Scopes: bokat.AllScopes()},
		{Name: "A", RedirectURIs: []string{"https://a.example/cb"}},
	}
	for _, spec := range bad {
		if _, _, err := oauth.CreateClient(ctx, db, oauth.HasherOf(s), spec, time.Now()); bokat.ErrorCode(err) != bokat.CodeValidationFailed {
			t.Errorf("CreateClient(%+v) = %v, want validation_failed", spec, err)
		}
	}
	id, secret, err := oauth.CreateClient(ctx, db, oauth.HasherOf(s), oauth.ClientSpec{Name: " Appen ", RedirectURIs: []string{"https://a.example/cb", "https://a.example/cb"}, Scopes: []bokat.Scope{bokat.ScopeBookingsRead}}, time.Now())
	if err != nil || !regexp.MustCompile(`^oc_[0-9a-f]{32}$`).MatchString(id) || !regexp.MustCompile(`^bks_[A-Za-z0-9_-]{43}$`).MatchString(secret) {
		t.Fatalf("CreateClient = %q, %q, %v", id, secret, err)
	}
	c, err := db.OAuthClient(ctx, id)
	if err != nil || c.Name != "Appen" || c.Public() || c.SecretHash == secret || len(c.RedirectURIs) != 1 {
		t.Fatalf("stored client %+v, %v", c, err)
	}
	pid, psecret, err := oauth.CreateClient(ctx, db, oauth.HasherOf(s), oauth.ClientSpec{Name: "Mobil", RedirectURIs: []string{"http://127.0.0.1/cb"}, Scopes: bokat.AllScopes(), Public: true}, time.Now())
	if err != nil || psecret != "" {
		t.Fatalf("public client: %q %v", psecret, err)
	}
	if c, err := db.OAuthClient(ctx, pid); err != nil || !c.Public() {
		t.Fatalf("public client stored as %+v, %v", c, err)
	}
}
