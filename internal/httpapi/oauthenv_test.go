package httpapi

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"bokat"
	"bokat/internal/auth"
	"bokat/internal/clocktest"
	"bokat/internal/oauth"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
)

// The OAuth tests run the real authorization server inside the real API
// server, on a real store, through real HTTP. The only stand-in is the
// e-mail boundary: a CodeSender that records the codes it is asked to send.

var _ AuthorizationServer = (*oauth.Server)(nil)

const oauthTestPepper = "oauth-test-pepper-0123456789abcdef"

// recordingSender is the e-mail boundary: it keeps the codes it is asked
// to send.
type recordingSender struct {
	mu   sync.Mutex
	sent []sentCode
	fail bool
}

type sentCode struct{ email, code, locale string }

func (s *recordingSender) SendSignInCode(_ context.Context, email, code, locale string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail {
		return errors.New("smtp: connection refused")
	}
	s.sent = append(s.sent, sentCode{email, code, locale})
	return nil
}

// last returns the latest code sent to the address.
func (s *recordingSender) last(tb testing.TB, email string) sentCode {
	tb.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.sent) - 1; i >= 0; i-- {
		if strings.EqualFold(s.sent[i].email, email) {
			return s.sent[i]
		}
	}
	tb.Fatalf("no sign-in code was sent to %s", email)
	return sentCode{}
}

func (s *recordingSender) all() []sentCode {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]sentCode(nil), s.sent...)
}

// oauthEnv is a testEnv whose server runs the authorization server and
// accepts its access tokens.
type oauthEnv struct {
	*testEnv
	as     *oauth.Server
	hasher *auth.Hasher
	sender *recordingSender
	clock  *clocktest.Clock
}

// callbackURI is the registered redirect URI of the test clients. The
// pages' final redirect is read from the Location header, so nothing needs
// to listen there.
const callbackURI = "http://127.0.0.1:8123/callback"

// oauthSetup varies the authorization server of a test.
type oauthSetup struct {
	// production turns off the development echo of sign-in codes.
	production bool
	// noSender leaves the server without a CodeSender.
	noSender bool
	// limiter and limits enforce the authorization server's budgets.
	limiter oauth.Limiter
	limits  *oauth.Limits
	// baseURL replaces the test base URL.
	baseURL string
	// guard and documentTLS enable Client ID Metadata Documents.
	guard       oauth.DocumentGuard
	documentTLS *tls.Config
}

// newOAuthEnv starts the server with OAuth wired as serve wires it.
func newOAuthEnv(t *testing.T, db *sqlstore.DB, setup oauthSetup, opts ...envOption) *oauthEnv {
	t.Helper()
	hasher, err := auth.NewHasher([]byte(oauthTestPepper))
	if err != nil {
		t.Fatal(err)
	}
	e := &oauthEnv{hasher: hasher, sender: &recordingSender{}, clock: clocktest.New(time.Now())}
	wire := func(c *envConfig) {
		var sender oauth.CodeSender = e.sender
		if setup.noSender {
			sender = nil
		}
		c.hasher = hasher
		c.oauth = &oauth.Config{
			Production: setup.production, Sender: sender, Now: e.clock.Now,
			Limiter: setup.limiter, Limits: setup.limits,
			DocumentGuard: setup.guard, DocumentTLS: setup.documentTLS,
		}
	}
	if setup.baseURL != "" {
		wire = func(wire envOption) envOption {
			return func(c *envConfig) { c.BaseURL = setup.baseURL; wire(c) }
		}(wire)
	}
	e.testEnv = newTestEnv(t, db, append([]envOption{wire}, opts...)...)
	e.as = e.authServer.(*oauth.Server)
	return e
}

// forEachOAuthEngine runs fn on a fresh OAuth server on each test engine.
func forEachOAuthEngine(t *testing.T, fn func(t *testing.T, e *oauthEnv)) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		fn(t, newOAuthEnv(t, db, oauthSetup{}))
	})
}

// newClient registers an OAuth client and returns its x/oauth2 config.
// Confidential clients authenticate with client_secret_basic; public ones
// send only their client_id.
func (e *oauthEnv) newClient(name string, public bool, scopes ...bokat.Scope) *oauth2.Config {
	e.t.Helper()
	if len(scopes) == 0 {
		scopes = bokat.AllScopes()
	}
	id, secret, err := oauth.CreateClient(context.Background(), e.db, e.hasher, oauth.ClientSpec{
		Name: name, RedirectURIs: []string{callbackURI}, Scopes: scopes, Public: public,
	}, time.Now())
	if err != nil {
		e.t.Fatal(err)
	}
	style := oauth2.AuthStyleInHeader
	if public {
		style = oauth2.AuthStyleInParams
	}
	conf := &oauth2.Config{
		ClientID: id, ClientSecret: secret, RedirectURL: callbackURI,
		Endpoint: oauth2.Endpoint{AuthURL: e.http.URL + "/oauth/authorize", TokenURL: e.http.URL + "/oauth/token", AuthStyle: style},
	}
	for _, s := range scopes {
		conf.Scopes = append(conf.Scopes, string(s))
	}
	return conf
}

// browser is a customer's browser without JavaScript: a cookie jar that
// does not follow redirects, so each step can be checked.
type browser struct {
	tb     testing.TB
	base   string
	client *http.Client
	header map[string]string
}

func (e *oauthEnv) browser() *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return &browser{tb: e.t, base: e.http.URL, client: &http.Client{
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

func (b *browser) abs(u string) string {
	if strings.HasPrefix(u, "/") {
		return b.base + u
	}
	return u
}

func (b *browser) do(req *http.Request) (*http.Response, string) {
	b.tb.Helper()
	for k, v := range b.header {
		req.Header.Set(k, v)
	}
	resp, err := b.client.Do(req)
	if err != nil {
		b.tb.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		b.tb.Fatal(err)
	}
	return resp, string(body)
}

func (b *browser) get(u string) (*http.Response, string) {
	b.tb.Helper()
	req, err := http.NewRequest(http.MethodGet, b.abs(u), nil)
	if err != nil {
		b.tb.Fatal(err)
	}
	return b.do(req)
}

// post submits a form; header adds request headers (e.g. Origin).
func (b *browser) post(path string, form url.Values, header map[string]string) (*http.Response, string) {
	b.tb.Helper()
	req, err := http.NewRequest(http.MethodPost, b.abs(path), strings.NewReader(form.Encode()))
	if err != nil {
		b.tb.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	return b.do(req)
}

// expectRedirect checks a 302/303 and returns its target.
func expectRedirect(tb testing.TB, resp *http.Response, body string) string {
	tb.Helper()
	if resp.StatusCode != http.StatusSeeOther && resp.StatusCode != http.StatusFound {
		tb.Fatalf("%s %s: status %d, want a redirect; body:\n%s", resp.Request.Method, resp.Request.URL.Path, resp.StatusCode, body)
	}
	return resp.Header.Get("Location")
}

var (
	formRe   = regexp.MustCompile(`(?s)<form method="post" action="([^"]+)">(.*?)</form>`)
	hiddenRe = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)
)

// formOf returns the hidden fields of the page's first form posting to action.
func formOf(tb testing.TB, body, action string) url.Values {
	tb.Helper()
	for _, m := range formRe.FindAllStringSubmatch(body, -1) {
		if m[1] != action {
			continue
		}
		v := url.Values{}
		for _, h := range hiddenRe.FindAllStringSubmatch(m[2], -1) {
			v.Set(html.UnescapeString(h[1]), html.UnescapeString(h[2]))
		}
		return v
	}
	tb.Fatalf("the page has no form posting to %s:\n%s", action, body)
	return nil
}

// requestCode opens the authorization URL, follows it to the sign-in page
// and asks for a code for the address. It returns the code page's form.
func (e *oauthEnv) requestCode(b *browser, authURL, email string) url.Values {
	b.tb.Helper()
	resp, body := b.get(authURL)
	signIn := expectRedirect(b.tb, resp, body)
	if !strings.HasPrefix(signIn, "/oauth/sign-in?") {
		b.tb.Fatalf("unsigned-in authorization went to %q, want the sign-in page", signIn)
	}
	resp, body = b.get(signIn)
	if resp.StatusCode != http.StatusOK {
		b.tb.Fatalf("sign-in page: %d\n%s", resp.StatusCode, body)
	}
	form := formOf(b.tb, body, "/oauth/sign-in")
	form.Set("email", email)
	resp, body = b.post("/oauth/sign-in", form, nil)
	codePage := expectRedirect(b.tb, resp, body)
	resp, body = b.get(codePage)
	if resp.StatusCode != http.StatusOK {
		b.tb.Fatalf("code page: %d\n%s", resp.StatusCode, body)
	}
	return formOf(b.tb, body, "/oauth/sign-in/code")
}

// signIn drives the sign-in pages from the client's authorization URL to
// the consent page and returns the consent page's body.
func (e *oauthEnv) signIn(b *browser, authURL, email string) string {
	b.tb.Helper()
	form := e.requestCode(b, authURL, email)
	form.Set("code", e.sender.last(b.tb, email).code)
	resp, body := b.post("/oauth/sign-in/code", form, nil)
	consent := expectRedirect(b.tb, resp, body)
	if !strings.HasPrefix(consent, "/oauth/authorize?") {
		b.tb.Fatalf("after sign-in went to %q, want the authorization endpoint", consent)
	}
	resp, body = b.get(consent)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `value="approve"`) {
		b.tb.Fatalf("consent page: %d\n%s", resp.StatusCode, body)
	}
	return body
}

// decide posts the consent decision and returns the redirect to the client.
func (e *oauthEnv) decide(b *browser, consentPage, decision string) *url.URL {
	b.tb.Helper()
	form := formOf(b.tb, consentPage, "/oauth/authorize")
	form.Set("decision", decision)
	resp, body := b.post("/oauth/authorize", form, nil)
	loc, err := url.Parse(expectRedirect(b.tb, resp, body))
	if err != nil {
		b.tb.Fatal(err)
	}
	return loc
}

// authorize runs the customer's side for conf and returns the code the
// client receives, checking the state and issuer that come with it.
func (e *oauthEnv) authorize(conf *oauth2.Config, verifier, email string) string {
	e.t.Helper()
	b := e.browser()
	state := "st-" + strings.Repeat("x", 8)
	loc := e.decide(b, e.signIn(b, conf.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier)), email), "approve")
	q := loc.Query()
	if got := loc.Scheme + "://" + loc.Host + loc.Path; got != callbackURI {
		e.t.Fatalf("redirected to %s, want %s", got, callbackURI)
	}
	if q.Get("state") != state || q.Get("iss") != "http://bokat.test" || q.Get("code") == "" {
		e.t.Fatalf("authorization response %v: want code, state %q and iss", q, state)
	}
	return q.Get("code")
}

// tokenRequest calls the token endpoint directly (for requests x/oauth2 would not
// send) and returns the status and the JSON body.
func (e *oauthEnv) tokenRequest(form url.Values, basicID, basicSecret string) (int, map[string]any, http.Header) {
	e.t.Helper()
	return e.post("/oauth/token", form, basicID, basicSecret)
}

func (e *oauthEnv) post(path string, form url.Values, basicID, basicSecret string) (int, map[string]any, http.Header) {
	e.t.Helper()
	return e.postWith(nil, path, form, basicID, basicSecret)
}

// postWith posts form to path with the extra request headers and returns the
// status and the JSON body.
func (e *oauthEnv) postWith(header map[string]string, path string, form url.Values, basicID, basicSecret string) (int, map[string]any, http.Header) {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.http.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if basicID != "" {
		req.SetBasicAuth(url.QueryEscape(basicID), url.QueryEscape(basicSecret))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var body map[string]any
	if len(strings.TrimSpace(string(raw))) > 0 {
		if err := json.Unmarshal(raw, &body); err != nil {
			e.t.Fatalf("%s: body is not JSON: %s", path, raw)
		}
	}
	return resp.StatusCode, body, resp.Header
}

// retrieveErrorCode returns the OAuth error code of an x/oauth2 failure.
func retrieveErrorCode(err error) string {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		return re.ErrorCode
	}
	return ""
}

// sqliteDB is a fresh, migrated SQLite store.
func sqliteDB(t *testing.T) *sqlstore.DB { return sqlstoretest.Open(t, sqlstore.SQLite) }
