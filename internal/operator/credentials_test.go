package operator_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"bokat"
	"bokat/internal/auth"
	"bokat/internal/clocktest"
	"bokat/internal/credentials"
	"bokat/internal/httpapi"
	"bokat/internal/oauth"
	"bokat/internal/operator"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/web/webtest"
	"bokat/internal/webhook"
	"bokat/internal/wire"
)

// The credential lifecycle on the console, proved where it matters: the
// API that serve builds (wire) on the injected clock answers the tokens
// the console rotated and revoked, and the console's pages on the same
// listener run the actions with the operator as the audit actor.

// lockedBuffer is a log sink the server writes to from its goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

type appEnv struct {
	db     *sqlstore.DB
	clock  *clocktest.Clock
	uc     *wire.UseCases
	url    string
	sender *webtest.Codes
	log    *lockedBuffer
}

func newAppEnv(t *testing.T, db *sqlstore.DB) *appEnv {
	t.Helper()
	contract, cat, err := wire.Definitions()
	if err != nil {
		t.Fatal(err)
	}
	hasher, err := auth.NewHasher([]byte("console-credentials-pepper-0123456789"))
	if err != nil {
		t.Fatal(err)
	}
	sealing, err := webhook.NewKeyring(bytes.Repeat([]byte{5}, webhook.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	e := &appEnv{db: db, clock: clocktest.New(time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)), sender: &webtest.Codes{},
		log: &lockedBuffer{}, uc: &wire.UseCases{}}
	log := slog.New(slog.NewTextHandler(e.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	b := wire.Base{Log: log, Now: e.clock.Now, Store: db, Keys: wire.Keys{Hasher: hasher, Sealing: sealing}, Contract: contract, Catalog: cat}
	o := wire.Options{BaseURL: "http://127.0.0.1", RateLimits: &httpapi.RateLimits{},
		Operator: &operator.PagesConfig{Sender: e.sender}}
	if err := e.uc.Build(b, o); err != nil {
		t.Fatal(err)
	}
	ops := wire.Ops{}
	ops.Complete(log, db, e.clock.Now)
	srv, err := wire.API(b, o, e.uc, ops)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	e.url = hs.URL
	return e
}

// call is an API request with the token; it returns the status.
func (e *appEnv) call(t testing.TB, token string) int {
	t.Helper()
	req, err := http.NewRequest("GET", e.url+"/v1/webhook-endpoints", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func (e *appEnv) audit(t testing.TB, kind, id string) []operator.AuditEntry {
	t.Helper()
	a, err := sqlstore.Bind[operator.Tx](e.db).ConsoleAudit(context.Background(), kind, id, 100)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func actions(a []operator.AuditEntry) string {
	parts := make([]string, len(a))
	for i, x := range a {
		parts[i] = x.Action + "@" + x.Actor
	}
	return strings.Join(parts, " ")
}

// TestCredentialLifecycleInABrowser rotates a partner's token on the
// console with a one-hour overlap, reads the new token off the answer
// page, and proves on the API that both tokens work until the overlap ends
// and then only the new one; that a reload of the answer page shows no
// token and rotates nothing; that revoking the partner (after the
// confirmation page) refuses the next call; that an OAuth client is
// revoked and an unused dynamic one purged; and that each action has its
// audit row with the operator as actor. Every page is checked with
// axe-core and photographed; the token is never in the log.
func TestCredentialLifecycleInABrowser(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		bg := context.Background()
		e := newAppEnv(t, db)
		ctx := webtest.Chromium(t)
		op, err := e.uc.OperatorPages.Service().Invite(bg, operator.CLIActor("drift"), operatorEmail)
		if err != nil {
			t.Fatal(err)
		}
		p, oldToken, err := e.uc.Credentials.CreatePartner(bg, "cli:drift", bokat.ModeLive, "Assistenten AB", bokat.AllScopes())
		if err != nil {
			t.Fatal(err)
		}
		client, _, err := e.uc.Credentials.CreateOAuthClient(bg, "cli:drift", oauth.ClientSpec{Name: "Kalenderappen",
			RedirectURIs: []string{"https://kalender.example/cb"}, Scopes: []bokat.Scope{bokat.ScopeBookingsRead}})
		if err != nil {
			t.Fatal(err)
		}
		dynamic, _, err := e.uc.Credentials.CreateOAuthClient(bg, "cli:drift", oauth.ClientSpec{Name: "Glömd agent",
			RedirectURIs: []string{"https://agent.example/cb"}, Scopes: []bokat.Scope{bokat.ScopeBookingsRead},
			Public: true, Registration: oauth.ClientDynamic})
		if err != nil {
			t.Fatal(err)
		}
		if st := e.call(t, oldToken); st != http.StatusOK {
			t.Fatalf("the partner's token before anything: %d", st)
		}
		e.clock.Advance(8 * 24 * time.Hour) // the dynamic client is now unused for 8 days

		check := webtest.Checker{TB: t, Ctx: ctx, Prefix: "operator-", Photograph: db.Engine() == sqlstore.SQLite}.Check
		wantText := func(page, text string, want ...string) { t.Helper(); webtest.WantText(t, page, text, want...) }

		webtest.Do(t, ctx, "open the console signed out", chromedp.Navigate(e.url+"/operator/partners"),
			chromedp.WaitVisible(chromedp.ID("email")))
		webtest.SignIn(t, ctx, e.sender, operatorEmail, chromedp.WaitVisible(chromedp.ID("q-email")))
		webtest.Do(t, ctx, "the partners", chromedp.Click(chromedp.CSS(`nav.main a[href^="/operator/partners"]`)),
			chromedp.WaitVisible(chromedp.ID("rotate-"+p.ID)))
		wantText("partners", check("credentials"), "Partnernycklar", "Assistenten AB", p.ID, "Senast använd",
			"2026-11-26 10:00", "Kalenderappen", "Glömd agent", "aldrig", "Rensa oanvända dynamiska klienter")

		// Rotate with a one-hour overlap: the token is on the answer page.
		webtest.Do(t, ctx, "rotate with an hour's overlap", chromedp.SetValue(chromedp.ID("overlap-"+p.ID), "1h"),
			chromedp.Click(chromedp.ID("rotate-"+p.ID)), chromedp.WaitVisible(chromedp.ID("token")))
		wantText("rotated", check("rotated"), "Kopiera nyckeln nu", "visas bara här", "Den gamla nyckeln fungerar till 2026-12-04 11:00")
		newToken := webtest.Get(t, ctx, "read the token", chromedp.Value(chromedp.ID("token")))
		if !strings.HasPrefix(newToken, auth.PartnerTokenPrefix) || newToken == oldToken {
			t.Fatalf("the answer page shows %q as the new token", newToken)
		}
		for _, tok := range []string{oldToken, newToken} {
			if st := e.call(t, tok); st != http.StatusOK {
				t.Errorf("within the overlap a token answers %d, want 200", st)
			}
		}
		e.clock.Advance(59 * time.Minute)
		for _, tok := range []string{oldToken, newToken} {
			if st := e.call(t, tok); st != http.StatusOK {
				t.Errorf("a minute before the overlap ends a token answers %d, want 200", st)
			}
		}
		e.clock.Advance(time.Minute)
		if st := e.call(t, oldToken); st != http.StatusUnauthorized {
			t.Errorf("the old token after the overlap: %d, want 401", st)
		}
		if st := e.call(t, newToken); st != http.StatusOK {
			t.Errorf("the new token after the overlap: %d, want 200", st)
		}

		// A reload of the answer page sends the form again: it rotates
		// nothing and shows no token.
		webtest.Do(t, ctx, "reload the answer page", chromedp.Reload(), chromedp.WaitReady(chromedp.CSS("main")))
		html := webtest.Get(t, ctx, "read the reloaded page", chromedp.OuterHTML(chromedp.CSS("html")))
		if strings.Contains(html, auth.PartnerTokenPrefix) || strings.Contains(html, newToken) {
			t.Errorf("the reloaded answer page shows a token:\n%s", html)
		}
		if st := e.call(t, newToken); st != http.StatusOK {
			t.Errorf("the shown token after the reload: %d, want 200 (the reload rotated again)", st)
		}
		if a := e.audit(t, credentials.KindPartner, p.ID); len(a) != 2 || a[0].Action != credentials.ActionPartnerRotated ||
			a[0].Actor != op.ID || a[0].Details["overlap"] != "1h0m0s" {
			t.Errorf("store: the partner's audit after the rotation and the reload: %+v", a)
		}

		webtest.Do(t, ctx, "back to the partners", chromedp.Navigate(e.url+"/operator/partners"),
			chromedp.WaitVisible(chromedp.ID("revoke-"+p.ID)))
		wantText("partners after the rotation", webtest.Text(t, ctx), "Aktiv, roterad 2026-12-04 10:00", "2026-12-04 11:00")
		if text := webtest.Get(t, ctx, "read the page", chromedp.OuterHTML(chromedp.CSS("html"))); strings.Contains(text, newToken) {
			t.Error("the partners page shows the token")
		}

		// Revoke the partner: a confirmation page first, then the next
		// call is refused.
		webtest.Do(t, ctx, "ask to revoke the partner", chromedp.Click(chromedp.ID("revoke-"+p.ID)),
			chromedp.WaitVisible(chromedp.ID("confirm-revoke")))
		wantText("confirm", check("revoke-confirm"), "Är du säker?", "Assistenten AB", "Nej, behåll den")
		if st := e.call(t, newToken); st != http.StatusOK {
			t.Errorf("the token after the confirmation page alone: %d, want 200", st)
		}
		webtest.Do(t, ctx, "revoke the partner", chromedp.Click(chromedp.ID("confirm-revoke")),
			chromedp.WaitVisible(chromedp.Search(`//p[@class="notice"][contains(., "återkallad")]`)))
		wantText("partners after the revocation", check("credentials-revoked"), "Partnern är återkallad", "Återkallad 2026-12-04 11:00")
		if st := e.call(t, newToken); st != http.StatusUnauthorized {
			t.Errorf("the token after the revocation: %d, want 401", st)
		}
		if a := e.audit(t, credentials.KindPartner, p.ID); len(a) != 3 || a[0].Action != credentials.ActionPartnerRevoked ||
			a[0].Actor != op.ID {
			t.Errorf("store: the partner's audit after the revocation: %s", actions(a))
		}

		// Revoke the OAuth client, in English.
		webtest.Do(t, ctx, "in English", chromedp.Click(chromedp.CSS("p.lang a")), chromedp.WaitVisible(chromedp.CSS(`html[lang=en]`)))
		webtest.Do(t, ctx, "ask to revoke the client", chromedp.Click(chromedp.ID("revoke-"+client)),
			chromedp.WaitVisible(chromedp.ID("confirm-revoke")))
		wantText("confirm client", check("revoke-client-en"), "Are you sure?", "Kalenderappen", "every grant and token")
		webtest.Do(t, ctx, "revoke the client", chromedp.Click(chromedp.ID("confirm-revoke")),
			chromedp.WaitVisible(chromedp.Search(`//p[@class="notice"][contains(., "client is revoked")]`)))
		if a := e.audit(t, credentials.KindOAuthClient, client); len(a) != 2 || a[0].Action != credentials.ActionOAuthClientRevoked ||
			a[0].Actor != op.ID {
			t.Errorf("store: the client's audit: %s", actions(a))
		}

		// Purge dynamic clients unused for 7 days: the one registered 8
		// days ago goes, the operator's client stays.
		webtest.Do(t, ctx, "purge", chromedp.SetValue(chromedp.ID("unused-for"), "7d"), chromedp.Click(chromedp.ID("purge-submit")),
			chromedp.WaitVisible(chromedp.Search(`//p[@class="notice"][contains(., "Clients deleted")]`)))
		text := check("credentials-purged-en")
		wantText("partners after the purge", text, "Clients deleted: 1.", "Kalenderappen", "Revoked")
		if strings.Contains(text, "Glömd agent") {
			t.Error("the purged client is still listed")
		}
		if a := e.audit(t, credentials.KindOAuthClient, dynamic); len(a) != 2 || a[0].Action != credentials.ActionOAuthClientPurged ||
			a[0].Actor != op.ID || a[0].Details["unused_for"] != "7d" {
			t.Errorf("store: the purged client's audit: %s", actions(a))
		}

		webtest.Do(t, ctx, "the log", chromedp.Click(chromedp.CSS(`nav.main a[href^="/operator/audit"]`)),
			chromedp.WaitVisible(chromedp.CSS("table.stack")))
		wantText("audit", webtest.Text(t, ctx), "partner.rotated", "partner.revoked", "oauth_client.revoked", "oauth_client.purged")

		if logs := e.log.String(); strings.Contains(logs, oldToken) || strings.Contains(logs, newToken) {
			t.Error("a token is in the log")
		}
	})
}

// TestCredentialFormsOverHTTP sends the lifecycle's forms as a plain
// client: the rotation's answer is no-store and the only place the token
// is; the same form sent again is refused without a token and rotates
// nothing; a form without its CSRF token or with a bad choice changes
// nothing; a revoke without the confirmation only asks.
func TestCredentialFormsOverHTTP(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		bg := context.Background()
		e := newAppEnv(t, db)
		if _, err := e.uc.OperatorPages.Service().Invite(bg, operator.CLIActor("drift"), operatorEmail); err != nil {
			t.Fatal(err)
		}
		p, token, err := e.uc.Credentials.CreatePartner(bg, "cli:drift", bokat.ModeLive, "Assistenten AB", bokat.AllScopes())
		if err != nil {
			t.Fatal(err)
		}
		c := newClient(t, e.url)
		c.SignIn(e.sender, operatorEmail)
		list := c.Do("GET", "/operator/partners", nil)
		csrf := regexpFind(t, list.Body, `name="csrf_token" value="([^"]+)"`)
		seen := regexpFind(t, list.Body, `name="seen" value="([^"]+)"`)
		rotate := "/operator/partners/" + p.ID + "/rotate"

		for name, form := range map[string]url.Values{
			"no CSRF token":  {"overlap": {"1h"}, "seen": {seen}},
			"bad CSRF token": {"overlap": {"1h"}, "seen": {seen}, "csrf_token": {"x" + csrf}},
		} {
			if r := c.Do("POST", rotate, form); r.Status != http.StatusForbidden {
				t.Errorf("rotate with %s: %d, want 403", name, r.Status)
			}
			for _, path := range []string{"/operator/partners/" + p.ID + "/revoke", "/operator/oauth-clients/purge"} {
				form := url.Values{"confirm": {"yes"}, "unused_for": {"7d"}, "csrf_token": form["csrf_token"]}
				if r := c.Do("POST", path, form); r.Status != http.StatusForbidden {
					t.Errorf("%s with %s: %d, want 403", path, name, r.Status)
				}
			}
		}
		if r := c.Do("POST", rotate, url.Values{"overlap": {"2h"}, "seen": {seen}, "csrf_token": {csrf}}); r.Status != http.StatusBadRequest {
			t.Errorf("rotate with an overlap not offered: %d, want 400", r.Status)
		}
		if a := e.audit(t, credentials.KindPartner, p.ID); len(a) != 1 {
			t.Fatalf("store: refused forms wrote audit rows: %s", actions(a))
		}
		if e.call(t, token) != http.StatusOK {
			t.Fatal("a refused form changed the token")
		}

		form := url.Values{"overlap": {"0"}, "seen": {seen}, "csrf_token": {csrf}}
		r := c.Do("POST", rotate, form)
		if r.Status != http.StatusOK || r.Header.Get("Cache-Control") != "no-store" {
			t.Fatalf("rotate: %d, Cache-Control %q", r.Status, r.Header.Get("Cache-Control"))
		}
		newToken := regexpFind(t, r.Body, `id="token" value="([^"]+)"`)
		if e.call(t, token) != http.StatusUnauthorized || e.call(t, newToken) != http.StatusOK {
			t.Error("with no overlap the old token still works or the new one does not")
		}
		again := c.Do("POST", rotate, form)
		if again.Status != http.StatusConflict || strings.Contains(again.Body, auth.PartnerTokenPrefix) {
			t.Errorf("the form sent again: %d\n%s", again.Status, again.Body)
		}
		if e.call(t, newToken) != http.StatusOK {
			t.Error("the form sent again rotated the token")
		}
		for _, path := range []string{"/operator/partners", "/operator/audit"} {
			if b := c.Do("GET", path, nil).Body; strings.Contains(b, newToken) {
				t.Errorf("%s shows the token", path)
			}
		}

		ask := c.Do("POST", "/operator/partners/"+p.ID+"/revoke", url.Values{"csrf_token": {csrf}})
		if ask.Status != http.StatusOK || !strings.Contains(ask.Body, `id="confirm-revoke"`) || e.call(t, newToken) != http.StatusOK {
			t.Errorf("revoke without the confirmation: %d, or it revoked", ask.Status)
		}
		if r := c.Do("POST", "/operator/partners/pc_nobody/revoke", url.Values{"csrf_token": {csrf}, "confirm": {"yes"}}); r.Status != http.StatusNotFound {
			t.Errorf("revoke an unknown partner: %d, want 404", r.Status)
		}
		if a := e.audit(t, credentials.KindPartner, p.ID); len(a) != 2 || a[0].Action != credentials.ActionPartnerRotated {
			t.Errorf("store: the partner's audit: %s", actions(a))
		}
	})
}

// TestProviderTokensInABrowser shows a provider's API tokens with their
// last use on the provider's console page and revokes one after the
// confirmation page: the next call with it is refused, the audit row has
// the operator as actor.
func TestProviderTokensInABrowser(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		bg := context.Background()
		e := newAppEnv(t, db)
		ctx := webtest.Chromium(t)
		op, err := e.uc.OperatorPages.Service().Invite(bg, operator.CLIActor("drift"), operatorEmail)
		if err != nil {
			t.Fatal(err)
		}
		const prv = "prv_tokens"
		sqlstoretest.WithProvider(t, db, prv)
		id, token, err := e.uc.Auth.CreateProviderToken(bg, prv, "Kassasystemet", bokat.ProviderScopes(), e.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		callProvider := func() int {
			t.Helper()
			req, _ := http.NewRequest("GET", e.url+"/v1/provider/hours", nil)
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp.StatusCode
		}
		if st := callProvider(); st != http.StatusOK {
			t.Fatalf("the provider token before: %d", st)
		}
		e.clock.Advance(time.Hour)
		check := webtest.Checker{TB: t, Ctx: ctx, Prefix: "operator-", Photograph: db.Engine() == sqlstore.SQLite}.Check
		webtest.Do(t, ctx, "open the provider signed out", chromedp.Navigate(e.url+"/operator/providers/"+prv+"?lang=en"),
			chromedp.WaitVisible(chromedp.ID("email")))
		webtest.SignIn(t, ctx, e.sender, operatorEmail, chromedp.WaitVisible(chromedp.ID("q-email")))
		webtest.Do(t, ctx, "the provider", chromedp.Navigate(e.url+"/operator/providers/"+prv+"?lang=en"),
			chromedp.WaitVisible(chromedp.ID("revoke-"+id)))
		text := check("provider-tokens-en")
		for _, want := range []string{"API tokens", "Kassasystemet", id, "Last used", "26 Nov 2026, 10:00", "Active"} {
			if !strings.Contains(text, want) {
				t.Errorf("the provider's page lacks %q; it reads:\n%s", want, text)
			}
		}
		webtest.Do(t, ctx, "ask to revoke the token", chromedp.Click(chromedp.ID("revoke-"+id)),
			chromedp.WaitVisible(chromedp.ID("confirm-revoke")))
		if text := check("revoke-token-en"); !strings.Contains(text, "Kassasystemet") || !strings.Contains(text, "refused from the next call") {
			t.Errorf("the confirmation reads:\n%s", text)
		}
		if st := callProvider(); st != http.StatusOK {
			t.Errorf("the token after the confirmation page alone: %d", st)
		}
		webtest.Do(t, ctx, "revoke the token", chromedp.Click(chromedp.ID("confirm-revoke")),
			chromedp.WaitVisible(chromedp.Search(`//p[@class="notice"][contains(., "token is revoked")]`)))
		if text := webtest.Text(t, ctx); !strings.Contains(text, "Revoked 26 Nov 2026, 11:00") {
			t.Errorf("the provider's page after the revocation reads:\n%s", text)
		}
		if st := callProvider(); st != http.StatusUnauthorized {
			t.Errorf("the revoked token: %d, want 401", st)
		}
		if a := e.audit(t, credentials.KindProviderToken, id); len(a) != 1 || a[0].Action != credentials.ActionProviderTokenRevoked ||
			a[0].Actor != op.ID {
			t.Errorf("store: the token's audit: %s", actions(a))
		}
		// Another provider's path to the token finds nothing.
		c := newClient(t, e.url)
		c.SignIn(e.sender, operatorEmail)
		sqlstoretest.WithProvider(t, db, "prv_other")
		id2, _, err := e.uc.Auth.CreateProviderToken(bg, prv, "Andra", bokat.ProviderScopes(), e.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		if r := c.Post("/operator/providers/prv_other/tokens/"+id2+"/revoke", url.Values{"confirm": {"yes"}}); r.Status != http.StatusNotFound {
			t.Errorf("revoke through another provider's path: %d, want 404", r.Status)
		}
		if a := e.audit(t, credentials.KindProviderToken, id2); len(a) != 0 {
			t.Errorf("store: a refused revocation wrote %s", actions(a))
		}
	})
}
