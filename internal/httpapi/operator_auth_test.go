package httpapi_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"bokat"
	"bokat/internal/auth"
	"bokat/internal/httpapi"
	"bokat/internal/operator"
	"bokat/internal/provider"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/webhook"
	"bokat/internal/wire"
)

// codeBox keeps the sign-in codes the pages send, by address.
type codeBox struct {
	mu    sync.Mutex
	codes map[string]string
}

func (c *codeBox) SendSignInCode(_ context.Context, email, code, _ string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.codes[email] = code
	return nil
}

func (c *codeBox) code(email string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.codes[email]
}

// pageClient is a browser without scripts: cookies, no redirects followed.
type pageClient struct {
	t    *testing.T
	base string
	jar  *cookiejar.Jar
	http *http.Client
}

func newPageClient(t *testing.T, base string) *pageClient {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &pageClient{t: t, base: base, jar: jar, http: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

var formToken = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// do sends a request with the header set; a form gets the client's CSRF
// token of the prefix's pages.
func (c *pageClient) do(method, path string, form url.Values, header http.Header) (int, string, string) {
	c.t.Helper()
	var body io.Reader
	if form != nil {
		if form.Get("csrf_token") == "" {
			prefix := "/" + strings.Split(path, "/")[1]
			_, _, page := c.do("GET", prefix+"/sign-in", nil, nil)
			m := formToken.FindStringSubmatch(page)
			if m == nil {
				c.t.Fatalf("no form token on %s/sign-in", prefix)
			}
			form.Set("csrf_token", m[1])
		}
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, c.base+path, body)
	if err != nil {
		c.t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Location"), string(raw)
}

// signIn signs the client in to the pages under prefix with the code the
// address was sent, and returns the session cookie's value.
func (c *pageClient) signIn(codes *codeBox, prefix, email string) string {
	c.t.Helper()
	if st, loc, _ := c.do("POST", prefix+"/sign-in", url.Values{"email": {email}}, nil); st != http.StatusSeeOther ||
		loc != prefix+"/sign-in/code" {
		c.t.Fatalf("%s: send code: %d %s", prefix, st, loc)
	}
	if st, loc, _ := c.do("POST", prefix+"/sign-in/code", url.Values{"code": {codes.code(email)}}, nil); st != http.StatusSeeOther ||
		loc != prefix+"/" {
		c.t.Fatalf("%s: enter code: %d %s", prefix, st, loc)
	}
	u, _ := url.Parse(c.base + prefix + "/")
	name := "bokat_" + strings.TrimPrefix(prefix, "/") + "_session"
	for _, ck := range c.jar.Cookies(u) {
		if ck.Name == name {
			return ck.Value
		}
	}
	c.t.Fatalf("no %s cookie after sign-in", name)
	return ""
}

// setCookie gives the client a cookie for the pages under prefix.
func (c *pageClient) setCookie(prefix, name, value string) {
	u, _ := url.Parse(c.base + prefix + "/")
	c.jar.SetCookies(u, []*http.Cookie{{Name: name, Value: value, Path: prefix}})
}

// TestOperatorConsoleAuthorization calls every console route, on the API's
// listener as serve mounts it, with no credential, a partner token, a
// provider token, a provider user's session (under its own cookie and
// under the console's) and an operator session: only the operator gets
// in, and nothing is written for anyone else. The reverse holds too: an
// operator's session does not open the provider pages.
func TestOperatorConsoleAuthorization(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		contract, cat, err := wire.Definitions()
		if err != nil {
			t.Fatal(err)
		}
		hasher, err := auth.NewHasher([]byte("operator-matrix-pepper-0123456789abcdef"))
		if err != nil {
			t.Fatal(err)
		}
		sealing, err := webhook.NewKeyring(bytes.Repeat([]byte{3}, webhook.KeySize))
		if err != nil {
			t.Fatal(err)
		}
		log := slog.New(slog.NewTextHandler(io.Discard, nil))
		b := wire.Base{Log: log, Now: time.Now, Store: db, Keys: wire.Keys{Hasher: hasher, Sealing: sealing}, Contract: contract, Catalog: cat}
		codes := &codeBox{codes: map[string]string{}}
		o := wire.Options{BaseURL: "http://127.0.0.1", RateLimits: &httpapi.RateLimits{},
			Provider: &provider.PagesConfig{Sender: codes}, Operator: &operator.PagesConfig{Sender: codes}}
		var u wire.UseCases
		if err := u.Build(b, o); err != nil {
			t.Fatal(err)
		}
		ops := wire.Ops{}
		ops.Complete(log, db, time.Now)
		srv, err := wire.API(b, o, &u, ops)
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(srv.Handler())
		t.Cleanup(hs.Close)

		const prv = "prv_matrix"
		sqlstoretest.WithProvider(t, db, prv)
		start := time.Now().Add(72 * time.Hour).Truncate(time.Hour)
		sqlstoretest.InsertBookingEntry(t, db, prv, "bk_matrix", start, start.Add(time.Hour))
		partnerToken := auth.NewSecret(auth.PartnerTokenPrefix)
		if err := u.Auth.EnsurePartner(ctx, "pc_matrix", "Matrix", partnerToken, bokat.AllScopes(), time.Now()); err != nil {
			t.Fatal(err)
		}
		_, providerToken, err := u.Auth.CreateProviderToken(ctx, prv, "matrix", bokat.ProviderScopes(), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := provider.NewService(sqlstore.Bind[provider.Tx](db), time.Now, log).Invite(ctx, nil, prv, "agare@prv.example", provider.Owner); err != nil {
			t.Fatal(err)
		}
		if _, err := u.OperatorPages.Service().Invite(ctx, operator.CLIActor("drift"), "drift@bokat.example"); err != nil {
			t.Fatal(err)
		}
		providerUser := newPageClient(t, hs.URL)
		providerSession := providerUser.signIn(codes, "/provider", "agare@prv.example")
		op := newPageClient(t, hs.URL)
		operatorSession := op.signIn(codes, "/operator", "drift@bokat.example")

		bearer := func(token string) http.Header { return http.Header{"Authorization": {"Bearer " + token}} }
		strangers := map[string]func() (*pageClient, http.Header){
			"none":          func() (*pageClient, http.Header) { return newPageClient(t, hs.URL), nil },
			"partner token": func() (*pageClient, http.Header) { return newPageClient(t, hs.URL), bearer(partnerToken) },
			"provider token": func() (*pageClient, http.Header) {
				return newPageClient(t, hs.URL), bearer(providerToken)
			},
			"provider session": func() (*pageClient, http.Header) { return providerUser, nil },
			"provider session as the console's": func() (*pageClient, http.Header) {
				c := newPageClient(t, hs.URL)
				c.setCookie("/operator", "bokat_operator_session", providerSession)
				return c, nil
			},
		}
		path := func(pattern string) string {
			return strings.NewReplacer("{booking_id}", "bk_matrix", "{provider_id}", prv, "{request_id}", "req_matrix").Replace(pattern)
		}
		forms := map[string]url.Values{
			"/operator/bookings/{booking_id}/cancel":   {"for": {"customer"}, "reason": {"other"}, "note": {"Matris."}, "confirm": {"yes"}},
			"/operator/bookings/{booking_id}/move":     {"option": {"bo1.x"}, "for": {"customer"}, "note": {"Matris."}, "agreed": {"yes"}},
			"/operator/providers/{provider_id}/pause":  {"until": {"2099-01-01"}, "note": {"Matris."}},
			"/operator/providers/{provider_id}/invite": {"email": {"matris@prv.example"}, "role": {"owner"}},
			"/operator/follow-ups/{request_id}/note":   {"note": {"Matris."}},
		}
		for name, who := range strangers {
			for _, rt := range operator.Routes() {
				c, header := who()
				var form url.Values
				if rt[0] == "POST" {
					form = url.Values{}
					for k, v := range forms[rt[1]] {
						form[k] = v
					}
				}
				st, loc, body := c.do(rt[0], path(rt[1]), form, header)
				if st != http.StatusSeeOther || loc != "/operator/sign-in" {
					t.Errorf("%s: %s %s = %d %s, want 303 to the sign-in page", name, rt[0], rt[1], st, loc)
				}
				if strings.Contains(body, "bk_matrix") {
					t.Errorf("%s: %s %s shows the booking", name, rt[0], rt[1])
				}
			}
		}
		var status string
		if err := db.R().QueryRowContext(ctx, `SELECT status FROM bookings WHERE id = 'bk_matrix'`).Scan(&status); err != nil || status != "confirmed" {
			t.Errorf("the booking after the strangers: %q %v", status, err)
		}
		var actions int
		if err := db.R().QueryRowContext(ctx, `SELECT COUNT(*) FROM operator_audit WHERE object_kind <> 'operator'`).Scan(&actions); err != nil || actions != 0 {
			t.Errorf("audit rows of operator actions after the strangers: %d %v", actions, err)
		}
		var paused int64
		if err := db.R().QueryRowContext(ctx, `SELECT paused_until FROM providers WHERE id = $1`, prv).Scan(&paused); err != nil || paused != 0 {
			t.Errorf("the provider after the strangers: paused until %d %v", paused, err)
		}

		// The operator gets in; their session opens no provider page.
		for _, rt := range operator.Routes() {
			if rt[0] != "GET" {
				continue
			}
			if st, loc, _ := op.do("GET", path(rt[1]), nil, nil); st != http.StatusOK && !(rt[1] == "/operator/" && loc == "/operator/bookings") {
				t.Errorf("operator: GET %s = %d %s", rt[1], st, loc)
			}
		}
		if st, _, body := op.do("GET", "/operator/bookings/bk_matrix", nil, nil); st != http.StatusOK || !strings.Contains(body, "bk_matrix") {
			t.Errorf("operator: the booking's page: %d", st)
		}
		for _, c := range []*pageClient{op, func() *pageClient {
			c := newPageClient(t, hs.URL)
			c.setCookie("/provider", "bokat_provider_session", operatorSession)
			return c
		}()} {
			if st, loc, _ := c.do("GET", "/provider/bookings", nil, nil); st != http.StatusSeeOther || loc != "/provider/sign-in" {
				t.Errorf("an operator's session on the provider pages: %d %s", st, loc)
			}
		}
	})
}
