package bokat

import (
	"unicode"
	"unicode/utf8"
)

// TextProblem says why a text value is refused; "" means the text is clean.
// Every text that enters Bokat — JSON string values, path ids, header values,
// OAuth parameters — is checked by CheckText at the edge, so both store
// engines see the same, clean text and a NUL can never reach PostgreSQL.
//
// The rule: text must be valid UTF-8 and hold no control character (C0, DEL
// or C1). Multi-line text (notes, descriptions) may also hold tab, line feed
// and the CR LF pair; a bare carriage return is refused everywhere.
func CheckText(s string, multiline bool) string {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 {
			return "must be valid UTF-8"
		}
		if unicode.IsControl(r) {
			ok := multiline && (r == '\t' || r == '\n' || (r == '\r' && i+1 < len(s) && s[i+1] == '\n'))
			if !ok {
				if multiline {
					return "must not contain control characters other than tab and line breaks"
				}
				return "must not contain control characters or line breaks"
			}
		}
		i += size
	}
	return ""
}
