package oauth

import (
	"net/url"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/net/idna"
	"golang.org/x/text/unicode/norm"
)

// A client that registered itself (RFC 7591, or a Client ID Metadata
// Document) names itself: nobody checked the name. The pages therefore
// show its name as a claim, warn that it registered itself, and name the
// host the customer is sent on to in ASCII (punycode), the one form a
// look-alike cannot hide in. A name that claims to be Bokat is refused at
// registration; one that claims to be a well-known assistant is accepted —
// the real assistants register themselves too — and marked on every page.

// reservedNames are the skeletons (see skeleton) of the names a
// self-registered client may not take: Bokat's own.
var reservedNames = []string{skeleton("Bokat")}

// assistantNames are well-known assistants whose names a self-registered
// client may use but is marked for.
var assistantNames = []string{"ChatGPT", "OpenAI", "Claude", "Anthropic", "Gemini", "Copilot", "Perplexity"}

// confusables folds, after lower-casing, letters and digits that look like
// a Latin letter into it (a small part of Unicode's confusables, for the
// scripts and tricks a look-alike name uses). Both sides of a comparison
// are folded, so i, 1 and | all read as l.
var confusables = map[rune]rune{
	// Cyrillic.
	'а': 'a', 'в': 'b', 'с': 'c', 'ԁ': 'd', 'е': 'e', 'ё': 'e', 'һ': 'h', 'н': 'h', 'і': 'l', 'ї': 'l', 'ј': 'j',
	'к': 'k', 'м': 'm', 'о': 'o', 'р': 'p', 'т': 't', 'у': 'y', 'х': 'x', 'ѕ': 's', 'ԛ': 'q', 'ԝ': 'w',
	// Greek.
	'α': 'a', 'β': 'b', 'ε': 'e', 'η': 'n', 'ι': 'l', 'κ': 'k', 'ν': 'v', 'ο': 'o', 'ρ': 'p', 'τ': 't',
	'υ': 'u', 'χ': 'x', 'γ': 'y', 'ϲ': 'c',
	// Latin and digits that pass for another letter.
	'ı': 'l', 'i': 'l', 'ɡ': 'g', 'ɑ': 'a', '0': 'o', '1': 'l', '|': 'l', '!': 'l', '3': 'e', '5': 's', '@': 'a', '$': 's',
}

// skeleton reduces a name to what it looks like: compatibility-decomposed
// (full-width and mathematical letters become plain ones), without marks,
// format characters, spaces or punctuation, lower-cased and with
// confusables folded.
func skeleton(s string) string {
	var b strings.Builder
	for _, r := range norm.NFKD.String(s) {
		if unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf) {
			continue
		}
		r = unicode.ToLower(r)
		if c, ok := confusables[r]; ok {
			r = c
		}
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// claimsBokat reports whether a name reads as Bokat's, in any case or
// look-alike letters: a word of it holds "bokat" ("Bokat Support",
// "MinBokat", "B0kat"), or a run of one-letter words spells it ("B o k a
// t", "B.o.k.a.t"). Words are split at spaces, dashes, dots and
// underscores, so that a name that merely runs into it across words
// ("Boka tid") stays allowed.
func claimsBokat(name string) bool {
	words := strings.FieldsFunc(norm.NFKC.String(name), func(r rune) bool {
		return unicode.IsSpace(r) || unicode.Is(unicode.Pd, r) || r == '.' || r == '_' || r == '·' || r == '•'
	})
	var letters strings.Builder // the current run of one-letter words
	for _, w := range append(words, "") {
		sk := skeleton(w)
		if len([]rune(sk)) == 1 {
			letters.WriteString(sk)
			continue
		}
		for _, r := range reservedNames {
			if strings.Contains(sk, r) || strings.Contains(letters.String(), r) {
				return true
			}
		}
		letters.Reset()
	}
	return false
}

// claimedAssistant returns the well-known assistant a name reads as, or "".
func claimedAssistant(name string) string {
	sk := skeleton(name)
	for _, a := range assistantNames {
		if strings.Contains(sk, skeleton(a)) {
			return a
		}
	}
	return ""
}

// isInvisible reports whether a rune of a name shows nothing (or turns the
// text around it): format characters (Cf: bidi embeddings, overrides and
// isolates, zero-width space, joiners, the byte order mark, ...) and the
// blank letters Hangul and Braille have.
func isInvisible(r rune) bool {
	switch r {
	case '\u115F', '\u1160', '\u3164', '\uFFA0', '\u2800':
		return true
	}
	return unicode.Is(unicode.Cf, r)
}

// asciiHost returns a host in the form a look-alike cannot hide in: an
// internationalised name in its ASCII (xn--) form, lower-cased. A host
// that is no valid name is spelled out with Go escapes rather than shown.
func asciiHost(host string) string {
	if a, err := idna.Lookup.ToASCII(host); err == nil {
		return a
	}
	if a, err := idna.Punycode.ToASCII(strings.ToLower(host)); err == nil {
		return a
	}
	q := strconv.QuoteToASCII(host)
	return q[1 : len(q)-1]
}

// redirectHost returns the ASCII host of a redirect URI, or "".
func redirectHost(redirectURI string) string {
	u, err := url.Parse(redirectURI)
	if err != nil {
		return ""
	}
	return asciiHost(u.Hostname())
}

// selfRegistered reports whether a client registered itself.
func (c Client) selfRegistered() bool {
	return c.Registration == ClientDynamic || c.Registration == ClientMetadata
}

// setClient fills in what a page says of the client of an authorization
// request: its name, whether it is a test-mode client, and for a client
// that registered itself the warning,
// the ASCII host it sends the customer on to and the assistant its name
// claims to be. A stored name is cleaned again and a Bokat-like one is
// replaced by the host, for clients registered before these rules.
func (p *page) setClient(req *authzRequest) {
	p.ClientName = req.client.Name
	p.TestMode = req.client.Mode.Test()
	if !req.client.selfRegistered() {
		return
	}
	p.Unverified = redirectHost(req.redirectURI)
	p.ClientName = cleanClientName(req.client.Name)
	if p.ClientName == "" || claimsBokat(p.ClientName) {
		p.ClientName = p.Unverified
	}
	p.ClaimedAssistant = claimedAssistant(p.ClientName)
}
