package oauth

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"html/template"
	"net/http"
	"net/url"
	"slices"

	"bokat"
	"bokat/internal/web"
)

// The pages are server-rendered HTML that work without JavaScript, in
// Swedish by default and in English with ?lang=en or an Accept-Language
// that prefers English.

// Locales.
const (
	localeSV = web.SV
	localeEN = web.EN
)

// localeOf returns the page language of a request (web.Locale).
var localeOf = web.Locale

// texts holds every string the pages show, per locale: the sign-in
// pages' strings every site shares (web.SignInTexts) and the OAuth pages'
// own.
var texts = web.SignInTexts().With(web.Texts{
	localeSV: {
		"signin_intro":       "%s vill använda Bokat åt dig. Logga in med din e-postadress, så skickar vi en engångskod.",
		"code_intro":         "Om adressen är rätt har vi nu skickat en kod med 8 siffror till den. Koden gäller i 10 minuter.",
		"consent_title":      "Godkänn åtkomst",
		"consent_intro":      "%s vill kunna göra följande åt dig i Bokat:",
		"consent_note":       "Godkänn bara om du känner igen och litar på %s. Ingen bokning görs utan att du först har godkänt alternativet, priset och villkoren.",
		"signin_intro_self":  "En app som kallar sig ”%s” vill använda Bokat åt dig. Logga in med din e-postadress, så skickar vi en engångskod.",
		"consent_intro_self": "Appen som kallar sig ”%s” vill kunna göra följande åt dig i Bokat:",
		"unverified":         "Appen har registrerat sig själv: Bokat har inte kontrollerat dess namn eller vem som står bakom den. När du är klar skickas du vidare till %s.",
		"claims_assistant":   "Namnet är en känd assistents (%s), men Bokat kan inte bekräfta att appen är den. Fortsätt bara om %s är assistentens egen adress.",
		"signed_in_as":       "Inloggad som %s.",
		"approve":            "Godkänn",
		"deny":               "Neka",
		"switch_account":     "Byt konto",
		"err_unknown_client": "Appen som skickade dig hit är inte registrerad hos Bokat.",
		"err_redirect":       "Appen som skickade dig hit bad oss skicka dig tillbaka till en adress som inte är registrerad. Av säkerhetsskäl gör vi inte det.",
		"err_request":        "Begäran från appen är ofullständig eller felaktig. Gå tillbaka till appen och försök igen.",
		"err_csrf":           "Formuläret kunde inte verifieras. Gå tillbaka till appen och börja om.",
		"test_mode_title":    "Testläge: inga riktiga bokningar.",
		"test_mode":          "Appen är ansluten till Bokats testläge, och det den gör åt dig stannar där: ingen hantverkare kontaktas, ingen tid bokas på riktigt och inga bokningsmejl skickas.",
	},
	localeEN: {
		"signin_intro":       "%s wants to use Bokat on your behalf. Sign in with your e-mail address and we will send you a one-time code.",
		"code_intro":         "If the address is right, we have sent an 8-digit code to it. The code is valid for 10 minutes.",
		"consent_title":      "Approve access",
		"consent_intro":      "%s wants to do the following for you in Bokat:",
		"consent_note":       "Only approve if you recognise and trust %s. Nothing is booked until you have approved the option, the price and the terms.",
		"signin_intro_self":  "An app that calls itself “%s” wants to use Bokat on your behalf. Sign in with your e-mail address and we will send you a one-time code.",
		"consent_intro_self": "The app that calls itself “%s” wants to do the following for you in Bokat:",
		"unverified":         "This app registered itself: Bokat has not checked its name or who runs it. When you are done, you are sent on to %s.",
		"claims_assistant":   "Its name is that of a well-known assistant (%s), but Bokat cannot confirm that this app is it. Continue only if %s is that assistant's own address.",
		"signed_in_as":       "Signed in as %s.",
		"approve":            "Approve",
		"deny":               "Deny",
		"switch_account":     "Use another account",
		"err_unknown_client": "The app that sent you here is not registered with Bokat.",
		"err_redirect":       "The app that sent you here asked us to send you back to an address it has not registered. For your safety we will not.",
		"err_request":        "The app's request is incomplete or invalid. Go back to the app and try again.",
		"err_csrf":           "The form could not be verified. Go back to the app and start again.",
		"test_mode_title":    "Test mode: no real bookings.",
		"test_mode":          "This app is connected to Bokat's test mode, and what it does for you stays there: no tradesperson is contacted, no real time is booked and no booking e-mails are sent.",
	},
})

// scopeTexts says in plain words what each scope lets a client do.
var scopeTexts = map[string]map[bokat.Scope]string{
	localeSV: {
		bokat.ScopeCapabilitiesRead:   "Se vilka tjänster Bokat erbjuder.",
		bokat.ScopeBookingsSearch:     "Söka lediga tider och fasta priser (bara med postnummer, inga personuppgifter).",
		bokat.ScopeBookingsConfirm:    "Boka en tid som du uttryckligen har valt och godkänt, med pris och villkor.",
		bokat.ScopeBookingsRead:       "Se status för bokningar som appen har gjort åt dig.",
		bokat.ScopeBookingsCancel:     "Avboka dina bokningar, efter att du har bekräftat avbokningen.",
		bokat.ScopeBookingsReschedule: "Boka om dina bokningar till en ny tid som du har godkänt.",
		bokat.ScopeRequestsCreate:     "Skicka en förfrågan till en hantverkare med dina kontaktuppgifter, efter ditt samtycke.",
		bokat.ScopeWebhooksManage:     "Ta emot och hantera aviseringar (webhooks) om bokningar som appen har gjort.",
	},
	localeEN: {
		bokat.ScopeCapabilitiesRead:   "See which services Bokat offers.",
		bokat.ScopeBookingsSearch:     "Search free times and fixed prices (postcodes only, no personal data).",
		bokat.ScopeBookingsConfirm:    "Book a time you have explicitly chosen and approved, with its price and terms.",
		bokat.ScopeBookingsRead:       "See the status of bookings the app has made for you.",
		bokat.ScopeBookingsCancel:     "Cancel your bookings, after you have confirmed the cancellation.",
		bokat.ScopeBookingsReschedule: "Move your bookings to a new time you have approved.",
		bokat.ScopeRequestsCreate:     "Send a request with your contact details to a provider, with your consent.",
		bokat.ScopeWebhooksManage:     "Receive and manage notifications (webhooks) about bookings the app has made.",
	},
}

// pageCSS is the only style of the pages; the Content-Security-Policy
// allows exactly this block by its hash, and nothing else (no scripts).
const pageCSS = `body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;background:#f6f6f4;color:#1d1d1b;margin:0;line-height:1.5}
main{max-width:30rem;margin:3rem auto;background:#fff;padding:2rem;border-radius:.75rem;box-shadow:0 1px 4px rgba(0,0,0,.12)}
.brand{font-weight:700;letter-spacing:.04em;color:#0b5d3b;margin:0 0 1rem}
h1{font-size:1.5rem;margin:.2rem 0 1rem}
label{display:block;font-weight:600;margin:1rem 0 .3rem}
input[type=email],input[type=text]{width:100%;box-sizing:border-box;font-size:1.1rem;padding:.6rem;border:1px solid #888;border-radius:.4rem}
button{font-size:1rem;padding:.65rem 1.2rem;border-radius:.4rem;border:1px solid #0b5d3b;background:#0b5d3b;color:#fff;cursor:pointer;margin:1rem .5rem 0 0}
button.secondary{background:#fff;color:#0b5d3b}
button.link{background:none;border:none;color:#0b5d3b;text-decoration:underline;padding:0;margin:0;font-size:.9rem}
.error{background:#fdecea;border-left:4px solid #b3261e;padding:.6rem .8rem}
.warning{background:#fff4e0;border-left:4px solid #a15c00;padding:.6rem .8rem}
.testmode{background:#e8f0fe;border-left:4px solid #1a4f9c;padding:.6rem .8rem}
ul.scopes li{margin:.35rem 0}
.muted{color:#555;font-size:.9rem}
.lang{margin-top:2rem;font-size:.9rem}`

var contentSecurityPolicy = func() string {
	sum := sha256.Sum256([]byte(pageCSS))
	return "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) +
		"'; frame-ancestors 'none'; base-uri 'none'"
}()

const layoutHTML = `<!doctype html>
<html lang="{{.Lang}}"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>{{.Title}} – Bokat</title>
<style>` + pageCSS + `</style>
</head><body><main>
<p class="brand">Bokat</p>
<h1>{{.Title}}</h1>
{{if .TestMode}}<p class="testmode" id="test-mode"><strong>{{index .T "test_mode_title"}}</strong> {{index .T "test_mode"}}</p>
{{end}}{{if .Error}}<p class="error" role="alert">{{.Error}}</p>{{end}}
{{if .Unverified}}<p class="warning" id="unverified">{{printf (index .T "unverified") .Unverified}}</p>
{{if .ClaimedAssistant}}<p class="warning" id="claims-assistant">{{printf (index .T "claims_assistant") .ClaimedAssistant .Unverified}}</p>
{{end}}{{end}}{{template "content" .}}
{{if .OtherLangURL}}<p class="lang"><a href="{{.OtherLangURL}}" lang="{{.OtherLang}}">{{index .T "other_lang"}}</a></p>{{end}}
</main></body></html>
`

const hiddenFieldsHTML = `{{define "hidden"}}{{range .Hidden}}<input type="hidden" name="{{.Name}}" value="{{.Value}}">
{{end}}<input type="hidden" name="csrf_token" value="{{.CSRF}}">
<input type="hidden" name="lang" value="{{.Lang}}">{{end}}`

var pageTemplates = func() map[string]*template.Template {
	bodies := map[string]string{
		"signin": `{{define "content"}}<p>{{if .Unverified}}{{printf (index .T "signin_intro_self") .ClientName}}{{else}}{{printf (index .T "signin_intro") .ClientName}}{{end}}</p>
<form method="post" action="/oauth/sign-in">
{{template "hidden" .}}
<label for="email">{{index .T "email_label"}}</label>
<input type="email" id="email" name="email" autocomplete="email" required maxlength="254" value="{{.Email}}" autofocus>
<button type="submit">{{index .T "send_code"}}</button>
</form>{{end}}`,
		"code": `{{define "content"}}<p>{{index .T "code_intro"}}</p>
{{if not .Dead}}<form method="post" action="/oauth/sign-in/code">
{{template "hidden" .}}
<label for="code">{{index .T "code_label"}}</label>
<input type="text" id="code" name="code" inputmode="numeric" autocomplete="one-time-code" required maxlength="20" autofocus>
<button type="submit">{{index .T "sign_in"}}</button>
</form>{{end}}
<p class="muted"><a href="{{.SignInURL}}">{{index .T "new_code"}}</a></p>{{end}}`,
		"consent": `{{define "content"}}<p>{{if .Unverified}}{{printf (index .T "consent_intro_self") .ClientName}}{{else}}{{printf (index .T "consent_intro") .ClientName}}{{end}}</p>
<ul class="scopes">{{range .Scopes}}<li>{{.}}</li>
{{end}}</ul>
<p class="muted">{{printf (index .T "consent_note") .ClientName}}</p>
<form method="post" action="/oauth/authorize">
{{template "hidden" .}}
<button type="submit" name="decision" value="approve">{{index .T "approve"}}</button>
<button type="submit" name="decision" value="deny" class="secondary">{{index .T "deny"}}</button>
</form>
<form method="post" action="/oauth/sign-out">
{{template "hidden" .}}
<p class="muted">{{printf (index .T "signed_in_as") .Email}} <button type="submit" class="link">{{index .T "switch_account"}}</button></p>
</form>{{end}}`,
		"error": `{{define "content"}}<p>{{.Message}}</p>
<p class="muted">{{index .T "error_code"}}: <code>{{.Code}}</code></p>{{end}}`,
	}
	base := template.Must(template.New("layout").Parse(layoutHTML))
	template.Must(base.Parse(hiddenFieldsHTML))
	out := map[string]*template.Template{}
	for name, body := range bodies {
		out[name] = template.Must(template.Must(base.Clone()).Parse(body))
	}
	return out
}()

// field is a hidden form field.
type field struct{ Name, Value string }

// page is the data of every page template.
type page struct {
	Lang         string
	T            map[string]string
	Title        string
	Error        string
	OtherLang    string
	OtherLangURL string
	CSRF         string
	Hidden       []field

	ClientName string
	// Unverified is, for a client that registered itself, the host the
	// customer is sent on to, in ASCII; every page of the flow warns with it.
	Unverified string
	Email      string
	Scopes     []string
	SignInURL  string
	Dead       bool
	Message    string
	Code       string

	// ClaimedAssistant is the well-known assistant a self-registered
	// client's name claims to be, or "".
	ClaimedAssistant string
	// TestMode: the client is of the test realm; every page of its flow,
	// error pages included, says that nothing it does is real.
	TestMode bool
}

func newPage(r *http.Request, titleKey string) page {
	lang := localeOf(r)
	p := page{Lang: lang, T: texts[lang], Title: texts[lang][titleKey]}
	p.OtherLang = localeEN
	if lang == localeEN {
		p.OtherLang = localeSV
	}
	if r.Method == http.MethodGet {
		q := r.URL.Query()
		q.Set("lang", p.OtherLang)
		p.OtherLangURL = r.URL.Path + "?" + q.Encode()
	}
	return p
}

// setPageHeaders forbids framing (clickjacking), caching and referrers, and
// allows only the page's own style.
func setPageHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
}

func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, name string, p page) {
	var buf bytes.Buffer
	if err := pageTemplates[name].Execute(&buf, p); err != nil {
		s.log.ErrorContext(r.Context(), "render page", "page", name, "error", err.Error())
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	setPageHeaders(w)
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// renderError shows an error page: messageKey names the text, code the
// machine-readable reason (shown for support).
func (s *Server) renderError(w http.ResponseWriter, r *http.Request, status int, messageKey, code string) {
	s.renderClientError(w, r, nil, status, messageKey, code)
}

// renderClientError is renderError on the way of the authorization request
// req (nil when none is known): the page of a test-mode client says so.
func (s *Server) renderClientError(w http.ResponseWriter, r *http.Request, req *authzRequest, status int, messageKey, code string) {
	p := newPage(r, "error_title")
	p.OtherLangURL = "" // the request may carry untrusted values; error pages link nowhere
	p.Message = p.T[messageKey]
	p.Code = code
	p.TestMode = req != nil && req.client.Mode.Test()
	s.render(w, r, status, "error", p)
}

// Cookies. All are HttpOnly, SameSite=Lax and Secure when the base URL is
// https; none is readable by scripts or sent on cross-site subrequests.
const (
	cookieBrowser = web.BrowserCookie
	cookieSignIn  = "bokat_signin"
	cookieSession = "bokat_session"
)

func (s *Server) setCookie(w http.ResponseWriter, name, value, path string, maxAge int) {
	web.Cookies{Secure: s.secure}.Set(w, name, value, path, maxAge)
}

func (s *Server) clearCookie(w http.ResponseWriter, name, path string) {
	s.setCookie(w, name, "", path, -1)
}

var cookieValue = web.CookieValue

// browserID returns the browser's random id cookie, setting a fresh one
// when it has none. The CSRF token of every form is derived from it.
func (s *Server) browserID(w http.ResponseWriter, r *http.Request) string {
	return s.browsers().ID(w, r)
}

// csrfToken is the form token of a browser.
func (s *Server) csrfToken(browser string) string { return s.browsers().CSRFToken(browser) }

// checkCSRF reports whether a form POST carries the token of its browser.
// Cross-origin POSTs were already refused by http.CrossOriginProtection.
func (s *Server) checkCSRF(r *http.Request) bool { return s.browsers().CheckCSRF(r) }

func (s *Server) browsers() web.Browsers {
	return web.Browsers{Hasher: s.hasher, Cookies: web.Cookies{Secure: s.secure}, Path: "/oauth"}
}

// hiddenFields returns the authorization request's parameters as hidden
// fields, in a stable order.
func hiddenFields(q url.Values) []field {
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]field, 0, len(keys))
	for _, k := range keys {
		out = append(out, field{k, q.Get(k)})
	}
	return out
}
