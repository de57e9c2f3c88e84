package web

import (
	"net/http"
	"net/url"
	"strings"

	"golang.org/x/text/language"
)

// Page languages.
const (
	SV = "sv"
	EN = "en"
)

var localeMatcher = language.NewMatcher([]language.Tag{language.Swedish, language.English})

// Locale returns the page language of a request: an explicit lang
// parameter (query or form), else OpenID's ui_locales, else the best match
// of Accept-Language, else Swedish.
func Locale(r *http.Request) string {
	switch r.FormValue("lang") {
	case SV:
		return SV
	case EN:
		return EN
	}
	for _, l := range strings.Fields(r.URL.Query().Get("ui_locales")) {
		switch strings.ToLower(l) {
		case SV, "sv-se":
			return SV
		case EN, "en-gb", "en-us":
			return EN
		}
	}
	tags, _, err := language.ParseAcceptLanguage(r.Header.Get("Accept-Language"))
	if err != nil || len(tags) == 0 {
		return SV
	}
	_, index, confidence := localeMatcher.Match(tags...)
	if confidence == language.No || index != 1 {
		return SV
	}
	return EN
}

// Other returns the other page language.
func Other(lang string) string {
	if lang == EN {
		return SV
	}
	return EN
}

// Link returns path with the page language kept: ?lang=en (or &lang=en)
// is added for English; Swedish, the default, adds nothing.
func Link(lang, path string) string {
	if lang != EN {
		return path
	}
	u, err := url.Parse(path)
	if err != nil {
		return path
	}
	q := u.Query()
	q.Set("lang", EN)
	u.RawQuery = q.Encode()
	return u.String()
}
