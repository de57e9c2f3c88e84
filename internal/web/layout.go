package web

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"log/slog"
	"maps"
	"net/http"
	"strings"
)

//go:embed static/site.css
var siteCSS []byte

// ContentSecurityPolicy is the policy of every page: nothing from
// elsewhere, no script at all, style only from the site's own style sheet,
// forms posted only to Bokat, never framed.
const ContentSecurityPolicy = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; " +
	"frame-ancestors 'none'; base-uri 'none'"

// SetPageHeaders sets the headers of every page: the policy, no framing,
// no sniffing, no referrer, no caching.
func SetPageHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
}

// Style serves the pages' style sheet.
func Style() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "text/css; charset=utf-8")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "public, max-age=3600")
		_, _ = w.Write(siteCSS)
	})
}

// Texts are the strings of pages per language (SV, EN) and key.
type Texts map[string]map[string]string

// NavLink is one entry of a site's navigation.
type NavLink struct {
	URL, Label string
	Current    bool
}

// Page is the data of every page: the layout's fields and the page's own
// Data.
type Page struct {
	Lang, OtherLang string
	T               map[string]string
	Title           string
	Error, Notice   string
	// CSRF is the token every form carries (the "form" template adds it
	// with the language).
	CSRF string
	// OtherLangURL is this page in the other language ("" on error pages).
	OtherLangURL string
	StyleURL     string
	HomeURL      string
	// SignedIn is who is signed in ("" for nobody); SignOutURL where the
	// sign-out form posts.
	SignedIn   string
	SignOutURL string
	Nav        []NavLink
	Data       any
}

// Link keeps the page language on a path.
func (p Page) Link(path string) string { return Link(p.Lang, path) }

// Layout renders pages in the one layout: a skip link, a header with the
// site's navigation and the signed-in person, the main content, and the
// language switch.
type Layout struct {
	pages    map[string]*template.Template
	texts    Texts
	styleURL string
	homeURL  string
	log      *slog.Logger
}

// signInTexts are the strings every site's e-mail sign-in shows alike:
// asking for the address and then the code, their errors, and the frame of
// an error page. A site adds what its sign-in says of itself (code_intro,
// signed_in_as, err_request, err_csrf): the provider pages through the
// layout, the OAuth pages (internal/oauth) through SignInTexts.
var signInTexts = Texts{
	SV: {
		"other_lang":         "English",
		"signin_title":       "Logga in",
		"email_label":        "E-postadress",
		"send_code":          "Skicka kod",
		"code_title":         "Ange koden",
		"code_label":         "Kod från e-postmeddelandet",
		"sign_in":            "Logga in",
		"new_code":           "Skicka en ny kod",
		"wrong_code":         "Koden stämmer inte. Du har %d försök kvar.",
		"code_dead":          "Koden har gått ut, har redan använts eller har prövats för många gånger. Begär en ny kod.",
		"bad_email":          "Ange en giltig e-postadress, till exempel namn@exempel.se.",
		"too_many_codes":     "Vi har skickat för många koder till den här adressen. Försök igen om en stund.",
		"send_failed":        "Vi kunde inte skicka koden just nu. Försök igen om en stund.",
		"signin_unavailable": "Inloggning med e-post är inte tillgänglig just nu. Försök igen senare.",
		"signin_busy":        "Vi skickar för många koder just nu. Försök igen om en stund.",
		"error_title":        "Något gick fel",
		"error_code":         "Felkod",
		"err_internal":       "Ett tekniskt fel uppstod. Försök igen om en stund.",
		"err_rate":           "För många förfrågningar från din anslutning. Vänta en stund och försök igen.",
	},
	EN: {
		"other_lang":         "Svenska",
		"signin_title":       "Sign in",
		"email_label":        "E-mail address",
		"send_code":          "Send code",
		"code_title":         "Enter the code",
		"code_label":         "Code from the e-mail",
		"sign_in":            "Sign in",
		"new_code":           "Send a new code",
		"wrong_code":         "That code is not right. You have %d tries left.",
		"code_dead":          "The code has expired, was already used, or was tried too many times. Ask for a new code.",
		"bad_email":          "Enter a valid e-mail address, for example name@example.com.",
		"too_many_codes":     "Too many codes were sent to this address. Try again later.",
		"send_failed":        "We could not send the code right now. Try again shortly.",
		"signin_unavailable": "E-mail sign-in is not available right now. Try again later.",
		"signin_busy":        "We are sending too many codes right now. Try again shortly.",
		"error_title":        "Something went wrong",
		"error_code":         "Error code",
		"err_internal":       "A technical error occurred. Try again shortly.",
		"err_rate":           "Too many requests from your connection. Wait a moment and try again.",
	},
}

// SignInTexts returns the strings every site's e-mail sign-in pages share
// (new maps, the caller's to extend with With).
func SignInTexts() Texts { return signInTexts.With(nil) }

// With returns new texts: t's with more's added over them.
func (t Texts) With(more Texts) Texts {
	out := Texts{}
	for _, lang := range []string{SV, EN} {
		out[lang] = maps.Clone(t[lang])
		maps.Copy(out[lang], more[lang])
	}
	return out
}

// commonTexts are the layout's strings and its sign-in pages'.
var commonTexts = signInTexts.With(Texts{
	SV: {
		"skip":          "Hoppa till innehållet",
		"signed_in_as":  "Inloggad som %s",
		"sign_out":      "Logga ut",
		"menu":          "Meny",
		"code_intro":    "Om adressen har ett konto har vi nu skickat en kod med 8 siffror till den. Koden gäller i 10 minuter.",
		"signed_out":    "Du är utloggad.",
		"err_request":   "Begäran är ofullständig eller felaktig.",
		"err_csrf":      "Formuläret kunde inte verifieras. Ladda om sidan och försök igen.",
		"err_not_found": "Sidan finns inte, eller så har du inte tillgång till den.",
	},
	EN: {
		"skip":          "Skip to content",
		"signed_in_as":  "Signed in as %s",
		"sign_out":      "Sign out",
		"menu":          "Menu",
		"code_intro":    "If the address has an account, we have sent an 8-digit code to it. The code is valid for 10 minutes.",
		"signed_out":    "You are signed out.",
		"err_request":   "The request is incomplete or invalid.",
		"err_csrf":      "The form could not be verified. Reload the page and try again.",
		"err_not_found": "The page does not exist, or you have no access to it.",
	},
})

const layoutHTML = `<!doctype html>
<html lang="{{.Lang}}"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>{{.Title}} – Bokat</title>
<link rel="stylesheet" href="{{.StyleURL}}">
</head><body>
<a class="skip" href="#main">{{index .T "skip"}}</a>
<header class="site"><div class="bar">
<a class="brand" href="{{.Link .HomeURL}}">Bokat</a>
{{if .Nav}}<nav class="main" aria-label="{{index .T "menu"}}"><ul>{{range .Nav}}<li><a href="{{$.Link .URL}}"{{if .Current}} aria-current="page"{{end}}>{{.Label}}</a></li>{{end}}</ul></nav>{{end}}
{{if .SignedIn}}<form class="inline" method="post" action="{{.SignOutURL}}">{{template "csrf" .}}<span>{{printf (index .T "signed_in_as") .SignedIn}}</span> <button type="submit" class="link">{{index .T "sign_out"}}</button></form>{{end}}
</div></header>
<main id="main" tabindex="-1">
<h1>{{.Title}}</h1>
{{if .Error}}<p class="error" role="alert">{{.Error}}</p>{{end}}
{{if .Notice}}<p class="notice" role="status">{{.Notice}}</p>{{end}}
{{template "content" .}}
{{if .OtherLangURL}}<p class="lang"><a href="{{.OtherLangURL}}" lang="{{.OtherLang}}">{{index .T "other_lang"}}</a></p>{{end}}
</main></body></html>
{{define "csrf"}}<input type="hidden" name="csrf_token" value="{{.CSRF}}"><input type="hidden" name="lang" value="{{.Lang}}">{{end}}`

// The layout's own pages: sign-in, code and error.
var layoutPages = map[string]string{
	"signin": `{{define "content"}}{{with .Data}}<p>{{.Intro}}</p>{{end}}
<form method="post" action="{{.Data.Action}}">
{{template "csrf" .}}
<label for="email">{{index .T "email_label"}}</label>
<input type="email" id="email" name="email" autocomplete="email" required maxlength="254" value="{{.Data.Email}}">
<button type="submit">{{index .T "send_code"}}</button>
</form>{{end}}`,
	"code": `{{define "content"}}<p>{{index .T "code_intro"}}</p>
{{if not .Data.Dead}}<form method="post" action="{{.Data.Action}}">
{{template "csrf" .}}
<label for="code">{{index .T "code_label"}}</label>
<input type="text" id="code" name="code" inputmode="numeric" autocomplete="one-time-code" required maxlength="20">
<button type="submit">{{index .T "sign_in"}}</button>
</form>{{end}}
<p class="muted"><a href="{{.Link .Data.SignInURL}}">{{index .T "new_code"}}</a></p>{{end}}`,
	"error": `{{define "content"}}<p>{{.Data.Message}}</p>
<p class="muted">{{index .T "error_code"}}: <code>{{.Data.Code}}</code></p>{{end}}`,
}

// NewLayout parses the layout with the site's pages (each defines
// "content") and merges the site's texts over the common ones. styleURL is
// where Style is served; homeURL where the brand links.
func NewLayout(styleURL, homeURL string, texts Texts, pages map[string]string, log *slog.Logger) (*Layout, error) {
	base, err := template.New("layout").Parse(layoutHTML)
	if err != nil {
		return nil, err
	}
	l := &Layout{pages: map[string]*template.Template{}, styleURL: styleURL, homeURL: homeURL, log: log}
	all := maps.Clone(layoutPages)
	maps.Copy(all, pages)
	for name, body := range all {
		t, err := template.Must(base.Clone()).Parse(body)
		if err != nil {
			return nil, fmt.Errorf("page %s: %w", name, err)
		}
		l.pages[name] = t
	}
	l.texts = commonTexts.With(texts)
	return l, nil
}

// Page returns the page data of a request in its language, titled by the
// text titleKey. A GET links to itself in the other language.
func (l *Layout) Page(r *http.Request, titleKey string) Page {
	lang := Locale(r)
	p := Page{Lang: lang, OtherLang: Other(lang), T: l.texts[lang], Title: l.texts[lang][titleKey],
		StyleURL: l.styleURL, HomeURL: l.homeURL}
	if r.Method == http.MethodGet {
		q := r.URL.Query()
		q.Set("lang", p.OtherLang)
		p.OtherLangURL = r.URL.Path + "?" + q.Encode()
	}
	return p
}

// Render writes the page with the status, or a bare 500 when the template
// fails.
func (l *Layout) Render(w http.ResponseWriter, r *http.Request, status int, name string, p Page) {
	var buf bytes.Buffer
	t, ok := l.pages[name]
	if !ok {
		l.log.ErrorContext(r.Context(), "render page", "page", name, "error", "no such page")
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	if err := t.Execute(&buf, p); err != nil {
		l.log.ErrorContext(r.Context(), "render page", "page", name, "error", err.Error())
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	SetPageHeaders(w)
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// ErrorData is the data of the error page.
type ErrorData struct{ Message, Code string }

// RenderError shows the error page: messageKey names the text, code the
// machine-readable reason (shown for support).
func (l *Layout) RenderError(w http.ResponseWriter, r *http.Request, status int, messageKey, code string) {
	p := l.Page(r, "error_title")
	p.OtherLangURL = "" // the request may carry untrusted values; error pages link nowhere
	p.Data = ErrorData{Message: p.T[messageKey], Code: code}
	l.Render(w, r, status, "error", p)
}

// MarkCurrent marks the navigation entry of url as the current page.
func (pg *Page) MarkCurrent(url string) {
	for i := range pg.Nav {
		pg.Nav[i].Current = pg.Nav[i].URL == url
	}
}

// ShowNotice shows the notice a redirect asked for with ?done=KEY, when
// KEY is one of keys (a known key only, never the query's text).
func (pg *Page) ShowNotice(r *http.Request, keys ...string) {
	done := r.URL.Query().Get("done")
	for _, k := range keys {
		if done == k {
			pg.Notice = pg.T[k]
		}
	}
}

// RedirectNotice answers a successful form with 303 to target in the
// page's language, asking the next page to show the notice key.
func RedirectNotice(w http.ResponseWriter, r *http.Request, lang, target, notice string) {
	sep := "?"
	if strings.Contains(target, "?") {
		sep = "&"
	}
	http.Redirect(w, r, Link(lang, target+sep+"done="+notice), http.StatusSeeOther)
}
