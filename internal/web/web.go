// Package web is Bokat's one layer for server-rendered pages: the sign-in
// machinery (one-time e-mail codes, their throttles and the development log
// line), browser cookies, sessions and CSRF tokens, the page language
// (Swedish by default, English with ?lang=en), and a layout with its own
// style sheet, served from Bokat's origin under a strict
// Content-Security-Policy that loads nothing from elsewhere and runs no
// script. The OAuth pages (package oauth) use its sign-in codes, cookies and
// CSRF tokens; the provider pages (package provider) and the operator pages
// use all of it.
//
// Every secret it issues (sign-in codes and handles, sessions) is stored
// only as a keyed hash (auth.Hasher); none is logged, except the
// development-only echo of a sign-in code.
package web

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"bokat"
)

// CleanParams reports whether every parameter name and value is clean,
// single-line text (bokat.CheckText: valid UTF-8, no control character),
// except that the values of the multiline parameters may hold tabs and line
// breaks.
func CleanParams(v url.Values, multiline ...string) bool {
	for k, vs := range v {
		if bokat.CheckText(k, false) != "" {
			return false
		}
		lines := slices.Contains(multiline, k)
		for _, x := range vs {
			if bokat.CheckText(x, lines) != "" {
				return false
			}
		}
	}
	return true
}

// CleanPathValues reports whether every wildcard of the pattern r was
// routed by ({name} or {name...}) holds clean, single-line text, as
// CleanParams asks of parameters: an id in a page's path reaches the store
// as a parameter's value does.
func CleanPathValues(r *http.Request) bool {
	rest := r.Pattern
	for {
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			return true
		}
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			return true
		}
		name := strings.TrimSuffix(rest[open+1:open+end], "...")
		if name != "$" && bokat.CheckText(r.PathValue(name), false) != "" {
			return false
		}
		rest = rest[open+end+1:]
	}
}
