package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"bokat"
)

// multilineFields are the top-level body members whose text may span lines
// (tab, LF and CR LF allowed): free text a person wrote or was shown. Every
// string inside details is free text too. Every other string — names,
// phone numbers, addresses, ids, keys, member names — is one line.
var multilineFields = map[string]bool{
	"description":            true, // search and follow-up requests
	"notes":                  true, // cancel
	"user_consent_statement": true, // the statement shown to the customer, quoted
	"details":                true, // free-form job details, any depth
}

// storedHeaders are the request headers whose values the API keeps.
var storedHeaders = []string{"Idempotency-Key"}

// maxTextIssues caps the issues one body can produce.
const maxTextIssues = 20

// checkBodyText applies bokat.CheckText to every string of a JSON body —
// member names and values, at any depth — and reports each offender by its
// field path. Invalid UTF-8 is found in the raw bytes, before the decoder
// would silently replace it. body must already be one well-formed JSON value.
func checkBodyText(body []byte) error {
	// Fast path: most bodies (Swedish text included) hold no problem the
	// walk could find, and a byte scan proves it without decoding.
	if isPlainText(body) {
		return nil
	}
	return walkBodyText(body)
}

// walkBodyText is checkBodyText without the fast path.
func walkBodyText(body []byte) error {
	var w bodyTextWalk
	dec := json.NewDecoder(bytes.NewReader(body))
	prev := int64(0)
	for {
		tok, err := dec.Token()
		if err != nil {
			break // io.EOF: the body was checked to be one JSON value
		}
		end := dec.InputOffset()
		raw := body[prev:end]
		prev = end
		if w.token(tok, raw) && len(w.issues) >= maxTextIssues {
			break
		}
	}
	if len(w.issues) == 0 {
		return nil
	}
	return &bokat.Error{Code: bokat.CodeValidationFailed,
		Detail: "Text must be valid UTF-8 without control characters (free-text fields may hold tab and line breaks); see issues.",
		Issues: w.issues}
}

// bodyTextWalk is the state of walkBodyText: the objects and arrays open at
// the current token, and the issues found so far.
type bodyTextWalk struct {
	stack  []textFrame
	issues []string
}

// textFrame is an open object (with the member being read) or array (with
// the index of the element being read).
type textFrame struct {
	object  bool
	wantKey bool
	key     string
	index   int
}

// token takes the next token of the body and its raw bytes. It reports
// whether the token was a value (a string, number, boolean or null) rather
// than a delimiter or a member name.
func (w *bodyTextWalk) token(tok json.Token, raw []byte) bool {
	top := len(w.stack) - 1
	switch t := tok.(type) {
	case json.Delim:
		w.delim(t, top)
		return false
	case string:
		if top >= 0 && w.stack[top].object && w.stack[top].wantKey {
			w.memberName(t, raw, top)
			return false
		}
		w.countElement(top)
		if msg := textProblem(t, raw, w.multiline()); msg != "" {
			w.issues = append(w.issues, w.path("", false)+": "+msg)
		}
	default:
		w.countElement(top)
	}
	if top >= 0 && w.stack[top].object {
		w.stack[top].wantKey = true
	}
	return true
}

// delim opens or closes an object or array.
func (w *bodyTextWalk) delim(d json.Delim, top int) {
	switch d {
	case '{', '[':
		w.countElement(top)
		if top >= 0 && w.stack[top].object {
			w.stack[top].wantKey = true
		}
		w.stack = append(w.stack, textFrame{object: d == '{', wantKey: d == '{', index: -1})
	case '}', ']':
		w.stack = w.stack[:top]
	}
}

// memberName checks the name of the member being opened and makes it the
// frame's key.
func (w *bodyTextWalk) memberName(name string, raw []byte, top int) {
	if msg := textProblem(name, raw, false); msg != "" {
		w.issues = append(w.issues, w.path("(member name)", true)+": "+msg)
	}
	w.stack[top].key = name
	w.stack[top].wantKey = false
}

// countElement moves an array at top on to its next element.
func (w *bodyTextWalk) countElement(top int) {
	if top >= 0 && !w.stack[top].object {
		w.stack[top].index++
	}
}

// textProblem is what is wrong with a string of raw bytes raw, decoded as s
// ("" when nothing is).
func textProblem(s string, raw []byte, multiline bool) string {
	if !utf8.Valid(raw) {
		return "must be valid UTF-8"
	}
	return bokat.CheckText(s, multiline)
}

// multiline reports whether a string at the current token is free text:
// it lies in a multi-line top-level member.
func (w *bodyTextWalk) multiline() bool {
	return len(w.stack) > 0 && w.stack[0].object && multilineFields[w.stack[0].key]
}

// path is the field path of the current token; for a member name
// (isKey), member stands for the name being opened.
func (w *bodyTextWalk) path(member string, isKey bool) string {
	var b strings.Builder
	for i, f := range w.stack {
		switch {
		case isKey && i == len(w.stack)-1:
			// the member being named replaces the frame's last key
		case f.object && f.key != "":
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(printableName(f.key))
		case !f.object:
			b.WriteString("[" + strconv.Itoa(f.index) + "]")
		}
	}
	if isKey {
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(member)
	}
	if b.Len() == 0 {
		return "(root)"
	}
	return b.String()
}

// isPlainText reports whether b, one well-formed JSON value, holds no
// string that CheckText could refuse: valid UTF-8 without DEL or C1
// controls (raw C0 bytes can only be white space between tokens in
// well-formed JSON), and no escape that could decode to a control character
// — only \", \\ and \/ are let through. Anything else takes the walk.
func isPlainText(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == 0x7f:
			return false
		case c == 0xc2 && i+1 < len(b) && b[i+1] >= 0x80 && b[i+1] <= 0x9f: // U+0080–U+009F
			return false
		case c == '\\':
			if i+1 < len(b) && (b[i+1] == '"' || b[i+1] == '\\' || b[i+1] == '/') {
				i++
				continue
			}
			return false
		}
	}
	return true
}

// printableName renders a member name for an issue: names that are
// themselves refused are not echoed.
func printableName(name string) string {
	if bokat.CheckText(name, false) != "" {
		return "(member name)"
	}
	if len(name) > 64 {
		cut := 64
		for cut > 0 && !utf8.RuneStart(name[cut]) {
			cut--
		}
		return name[:cut] + "…"
	}
	return name
}

// checkRequestText applies bokat.CheckText to the path values of the
// route's pattern and to the header values the API stores.
func checkRequestText(r *http.Request, pattern string) error {
	var issues []string
	walkPattern(pattern, func(string) {}, func(name string) {
		if msg := bokat.CheckText(r.PathValue(name), false); msg != "" {
			issues = append(issues, name+" (path): "+msg)
		}
	})
	for _, h := range storedHeaders {
		for _, v := range r.Header.Values(h) {
			if msg := bokat.CheckText(v, false); msg != "" {
				issues = append(issues, h+" (header): "+msg)
				break
			}
		}
	}
	if len(issues) == 0 {
		return nil
	}
	return &bokat.Error{Code: bokat.CodeValidationFailed,
		Detail: "Path and header values must be valid UTF-8 without control characters; see issues.",
		Issues: issues}
}
