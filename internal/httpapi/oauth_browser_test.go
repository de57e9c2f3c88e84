package httpapi

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"golang.org/x/oauth2"

	"bokat"
	"bokat/internal/oauth"
	"bokat/internal/web/webtest"
)

// newChromium starts the headless Chromium of the browser tests, page
// scripts disabled (webtest.Chromium).
func newChromium(t *testing.T) context.Context { return webtest.Chromium(t) }

// TestSignInAndConsentInABrowser drives the sign-in and consent pages in a
// real headless Chromium with page scripts disabled (the pages need none),
// then lets x/oauth2 redeem the code the browser delivered to the client.
func TestSignInAndConsentInABrowser(t *testing.T) {
	t.Parallel()
	ctx := newChromium(t)
	e := newOAuthEnv(t, sqliteDB(t), oauthSetup{})

	// The client's redirect endpoint, a real listener on loopback.
	delivered := make(chan url.Values, 1)
	client := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case delivered <- r.URL.Query():
		default:
		}
		fmt.Fprint(w, `<!doctype html><html><body><p id="done">Tillbaka i appen</p></body></html>`)
	}))
	t.Cleanup(client.Close)
	id, secret, err := oauth.CreateClient(context.Background(), e.db, e.hasher, oauth.ClientSpec{
		Name: "Hemhjälpen AI", RedirectURIs: []string{client.URL + "/callback"},
		Scopes: []bokat.Scope{bokat.ScopeBookingsSearch, bokat.ScopeBookingsConfirm, bokat.ScopeBookingsRead},
	}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	conf := &oauth2.Config{
		ClientID: id, ClientSecret: secret, RedirectURL: client.URL + "/callback",
		Scopes:   []string{"service.bookings.search", "service.bookings.confirm", "service.bookings.read"},
		Endpoint: oauth2.Endpoint{AuthURL: e.http.URL + "/oauth/authorize", TokenURL: e.http.URL + "/oauth/token", AuthStyle: oauth2.AuthStyleInHeader},
	}
	verifier := oauth2.GenerateVerifier()
	const email = "webbkund@example.se"

	step := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		stepCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := chromedp.Do(stepCtx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	read := func(what string, action chromedp.Action[string]) string {
		t.Helper()
		stepCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		v, err := chromedp.Run(stepCtx, action)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return v
	}
	screenshot := func() []byte {
		t.Helper()
		stepCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		shot, err := chromedp.Run(stepCtx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot: %v", err)
		}
		return shot
	}

	step("open the authorization URL", chromedp.Navigate(conf.AuthCodeURL("browser-state", oauth2.S256ChallengeOption(verifier))),
		chromedp.WaitVisible(chromedp.ID("email")))
	signInText := read("sign-in text", chromedp.Text(chromedp.CSS("main")))
	signInShot := screenshot()
	step("ask for a code", webtest.Type(chromedp.ID("email"), email),
		chromedp.Click(chromedp.CSS("button[type=submit]")), chromedp.WaitVisible(chromedp.ID("code")))
	codeText := read("code page text", chromedp.Text(chromedp.CSS("main")))
	step("enter the code", webtest.Type(chromedp.ID("code"), e.sender.last(t, email).code),
		chromedp.Click(chromedp.CSS("button[type=submit]")), chromedp.WaitVisible(chromedp.CSS("button[value=approve]")))
	consentText := read("consent text", chromedp.Text(chromedp.CSS("main")))
	consentShot := screenshot()
	// The Content-Security-Policy admits the page's style (by its hash).
	if bg := read("button style", chromedp.Evaluate[string](`getComputedStyle(document.querySelector("button[value=approve]")).backgroundColor`)); bg != "rgb(11, 93, 59)" {
		t.Errorf("the approve button's background is %q: the page style was blocked", bg)
	}
	step("approve", chromedp.Click(chromedp.CSS("button[value=approve]")), chromedp.WaitVisible(chromedp.ID("done")))

	dir := t.TempDir()
	for name, shot := range map[string][]byte{"sign-in.png": signInShot, "consent.png": consentShot} {
		if len(shot) < 1000 || !bytes.HasPrefix(shot, []byte("\x89PNG")) {
			t.Errorf("%s: %d bytes, want a PNG screenshot", name, len(shot))
		}
		if err := os.WriteFile(filepath.Join(dir, name), shot, 0o600); err != nil {
			t.Fatal(err)
		}
	}

	for page, checks := range map[string]struct {
		text string
		want []string
	}{
		"sign-in": {signInText, []string{"Logga in", "Hemhjälpen AI vill använda Bokat åt dig", "E-postadress", "Skicka kod", "English"}},
		"code":    {codeText, []string{"Ange koden", "8 siffror", "Skicka en ny kod"}},
		"consent": {consentText, []string{"Godkänn åtkomst", "Hemhjälpen AI vill kunna göra följande åt dig i Bokat:",
			"Söka lediga tider och fasta priser", "Boka en tid som du uttryckligen har valt och godkänt",
			"Se status för bokningar som appen har gjort åt dig", "Inloggad som " + email, "Godkänn", "Neka"}},
	} {
		for _, w := range checks.want {
			if !strings.Contains(checks.text, w) {
				t.Errorf("%s page lacks %q; it reads:\n%s", page, w, checks.text)
			}
		}
		if strings.Contains(checks.text, "Testläge") {
			t.Errorf("%s page of a live client says it is in test mode:\n%s", page, checks.text)
		}
	}

	var q url.Values
	select {
	case q = <-delivered:
	case <-time.After(5 * time.Second):
		t.Fatal("the client's redirect endpoint was never called")
	}
	if q.Get("state") != "browser-state" || q.Get("code") == "" {
		t.Fatalf("the client received %v", q)
	}
	tok, err := conf.Exchange(context.Background(), q.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("exchange of the browser's code: %v", err)
	}
	r := e.do(request{Method: "GET", Path: "/v1/capabilities", Header: bearer(tok.AccessToken)})
	if r.Status != http.StatusOK {
		t.Fatalf("API call with the browser flow's token: %d", r.Status)
	}
}

// TestSelfRegisteredClientWarningsInABrowser: in a real Chromium, every page
// a self-registered client sends the customer through — sign-in, code and
// consent — shows the warning, styled, with the redirect host in its ASCII
// form, marks the name of a well-known assistant, and shows the name
// without the right-to-left override it was registered with.
func TestSelfRegisteredClientWarningsInABrowser(t *testing.T) {
	t.Parallel()
	ctx := newChromium(t)
	e := newOAuthEnv(t, sqliteDB(t), oauthSetup{})
	// The host's second letter is a Cyrillic а; the name hides a bidi override.
	status, body, _ := e.register("", `{"redirect_uris":["https://ch\u0430tgpt.example/cb"],"client_name":"ChatGPT\u202e ulp"}`)
	if status != http.StatusCreated {
		t.Fatalf("register: %d %v", status, body)
	}
	conf := &oauth2.Config{ClientID: body["client_id"].(string), RedirectURL: "https://chаtgpt.example/cb",
		Endpoint: oauth2.Endpoint{AuthURL: e.http.URL + "/oauth/authorize"}}
	const email = "webbkund@example.se"
	run := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		stepCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := chromedp.Do(stepCtx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	check := func(page string) {
		t.Helper()
		stepCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		text, err := chromedp.Run(stepCtx, chromedp.Text(chromedp.CSS("main")))
		if err != nil {
			t.Fatalf("%s page text: %v", page, err)
		}
		for _, want := range []string{
			"Appen har registrerat sig själv: Bokat har inte kontrollerat dess namn eller vem som står bakom den. När du är klar skickas du vidare till xn--chtgpt-4nf.example.",
			"Namnet är en känd assistents (ChatGPT), men Bokat kan inte bekräfta att appen är den. Fortsätt bara om xn--chtgpt-4nf.example är assistentens egen adress.",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("%s page lacks %q; it reads:\n%s", page, want, text)
			}
		}
		if strings.Contains(text, "chаtgpt") || strings.ContainsRune(text, '\u202e') {
			t.Errorf("%s page shows the Unicode host or the bidi override:\n%s", page, text)
		}
		bg, err := chromedp.Run(stepCtx, chromedp.Evaluate[string](`getComputedStyle(document.getElementById("unverified")).backgroundColor`))
		if err != nil || bg != "rgb(255, 244, 224)" {
			t.Errorf("%s page: the warning's background is %q (%v): its style was blocked", page, bg, err)
		}
	}

	run("open the authorization URL", chromedp.Navigate(conf.AuthCodeURL("st", oauth2.S256ChallengeOption(oauth2.GenerateVerifier()))),
		chromedp.WaitVisible(chromedp.ID("email")))
	check("sign-in")
	run("ask for a code", webtest.Type(chromedp.ID("email"), email),
		chromedp.Click(chromedp.CSS("button[type=submit]")), chromedp.WaitVisible(chromedp.ID("code")))
	check("code")
	run("enter the code", webtest.Type(chromedp.ID("code"), e.sender.last(t, email).code),
		chromedp.Click(chromedp.CSS("button[type=submit]")), chromedp.WaitVisible(chromedp.CSS("button[value=approve]")))
	check("consent")
}

// TestTestModeClientNoticeInABrowser: in a real Chromium, every page a
// test-mode client sends the customer through — sign-in, code, consent, and
// an error page on its way — says in a styled notice that nothing it does
// is real, in Swedish and in English; each page passes axe-core and is
// photographed at phone and desktop width.
func TestTestModeClientNoticeInABrowser(t *testing.T) {
	ctx := newChromium(t)
	e := newOAuthEnv(t, sqliteDB(t), oauthSetup{})
	const redirect = "http://127.0.0.1:9/callback"
	id, _, err := oauth.CreateClient(context.Background(), e.db, e.hasher, oauth.ClientSpec{
		Name: "Testassistenten", RedirectURIs: []string{redirect}, Mode: bokat.ModeTest,
		Scopes: []bokat.Scope{bokat.ScopeBookingsSearch, bokat.ScopeBookingsConfirm},
	}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	conf := &oauth2.Config{ClientID: id, RedirectURL: redirect, Scopes: []string{"service.bookings.search", "service.bookings.confirm"},
		Endpoint: oauth2.Endpoint{AuthURL: e.http.URL + "/oauth/authorize"}}
	const email = "testkund@example.se"
	notices := map[string]string{
		"sv": "Testläge: inga riktiga bokningar. Appen är ansluten till Bokats testläge, och det den gör åt dig stannar där: " +
			"ingen hantverkare kontaktas, ingen tid bokas på riktigt och inga bokningsmejl skickas.",
		"en": "Test mode: no real bookings. This app is connected to Bokat's test mode, and what it does for you stays there: " +
			"no tradesperson is contacted, no real time is booked and no booking e-mails are sent.",
	}
	check := func(page, lang string) {
		t.Helper()
		if text := webtest.Text(t, ctx); !strings.Contains(text, notices[lang]) {
			t.Errorf("%s page lacks the test-mode notice (%s); it reads:\n%s", page, lang, text)
		}
		bg := webtest.Get(t, ctx, "notice style", chromedp.Evaluate[string](`getComputedStyle(document.getElementById("test-mode")).backgroundColor`))
		if bg != "rgb(232, 240, 254)" {
			t.Errorf("%s page: the notice's background is %q: its style was blocked", page, bg)
		}
		webtest.Axe(t, ctx, page)
		webtest.Screenshots(t, ctx, "oauth-test-mode-"+page)
	}
	authURL := conf.AuthCodeURL("st", oauth2.S256ChallengeOption(oauth2.GenerateVerifier()))
	webtest.Do(t, ctx, "open the authorization URL", chromedp.Navigate(authURL), chromedp.WaitVisible(chromedp.ID("email")))
	check("sign-in", "sv")
	webtest.Do(t, ctx, "switch to English", chromedp.Click(chromedp.CSS(`.lang a`)), chromedp.WaitVisible(chromedp.ID("email")))
	check("sign-in-en", "en")
	webtest.Do(t, ctx, "ask for a code", webtest.Type(chromedp.ID("email"), email),
		chromedp.Click(chromedp.CSS("button[type=submit]")), chromedp.WaitVisible(chromedp.ID("code")))
	check("code-en", "en")
	webtest.Do(t, ctx, "enter the code", webtest.Type(chromedp.ID("code"), e.sender.last(t, email).code),
		chromedp.Click(chromedp.CSS("button[type=submit]")), chromedp.WaitVisible(chromedp.CSS("button[value=approve]")))
	check("consent-en", "en")
	webtest.Do(t, ctx, "open the consent page in Swedish", chromedp.Navigate(authURL+"&lang=sv"),
		chromedp.WaitVisible(chromedp.CSS("button[value=approve]")))
	check("consent", "sv")
	// The client is known, but the address it asks to be sent back to is
	// not its own: the error page, not a redirect.
	bad := strings.Replace(authURL, url.QueryEscape(redirect), url.QueryEscape("http://127.0.0.1:9/elsewhere"), 1)
	webtest.Do(t, ctx, "open an authorization URL with a foreign redirect", chromedp.Navigate(bad), chromedp.WaitVisible(chromedp.CSS("code")))
	check("error", "sv")
}
