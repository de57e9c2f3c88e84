package bokat

import (
	"strings"
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

// CleanText returns s made to pass CheckText, for output formats whose
// syntax control characters would break (iCalendar): invalid bytes become
// U+FFFD, CR LF and a bare CR become LF in multi-line text (a space in
// single-line text, as LF does), tab stays in multi-line text, and every
// other control character is dropped. Text that passes CheckText and holds
// no CR is returned unchanged.
func CleanText(s string, multiline bool) string {
	if CheckText(s, multiline) == "" && !strings.ContainsRune(s, '\r') {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == '\r' && i < len(s) && s[i] == '\n':
			// CR LF: the LF that follows stands for both.
		case r == '\r' || r == '\n':
			if multiline {
				b.WriteByte('\n')
			} else {
				b.WriteByte(' ')
			}
		case r == '\t' && multiline:
			b.WriteByte('\t')
		case r == '\t':
			b.WriteByte(' ')
		case unicode.IsControl(r):
		default:
			b.WriteRune(r) // an invalid byte is written as U+FFFD
		}
	}
	return b.String()
}
