package api

import (
	"errors"
	"net/mail"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode"
)

// formatValidators enforces the string formats the document uses. Without
// them the validator accepts any string for "uuid", "email" and "uri",
// because formats only annotate by default in JSON Schema 2020-12. They are
// registered on the compiler of the contract, so no global registry is
// changed.
func formatValidators() map[string]func(string) error {
	return map[string]func(string) error{
		"uuid":      validateUUID,
		"email":     validateEmail,
		"date-time": validateDateTime,
		"uri":       validateURI,
	}
}

var errFormat = errors.New("does not match the format")

// uuidPattern is the RFC 9562 text form, any version, either case.
var uuidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

func validateUUID(s string) error {
	if !uuidPattern.MatchString(s) {
		return errFormat
	}
	return nil
}

// validateEmail accepts a bare RFC 5322 address (no display name, no angle
// brackets) whose domain is a host name an MTA would look up: at least two
// dot-separated labels of letters, digits and hyphens (non-ASCII letters
// allowed), no label starting or ending with a hyphen, and a top-level label
// that is not all digits. IP literals ("eve@[127.0.0.1]", "eve@127.0.0.1")
// and dotless domains ("eve@localhost") are refused: a customer address must
// not steer mail to an address of the operator's choosing.
func validateEmail(s string) error {
	a, err := mail.ParseAddress(s)
	if err != nil || a.Name != "" || a.Address != s {
		return errFormat
	}
	at := strings.LastIndexByte(s, '@')
	if !isMailDomain(s[at+1:]) {
		return errFormat
	}
	return nil
}

func isMailDomain(domain string) bool {
	labels := strings.Split(domain, ".")
	if len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for _, r := range l {
			if !(r == '-' || unicode.IsLetter(r) || unicode.IsDigit(r)) {
				return false
			}
		}
	}
	tld := labels[len(labels)-1]
	return strings.IndexFunc(tld, func(r rune) bool { return !unicode.IsDigit(r) }) >= 0
}

// validateDateTime accepts an RFC 3339 date-time with a time offset.
func validateDateTime(s string) error {
	if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
		return errFormat
	}
	return nil
}

// validateURI accepts an absolute URI without spaces.
func validateURI(s string) error {
	u, err := url.Parse(s)
	if err != nil || !u.IsAbs() || strings.ContainsAny(s, " \t\r\n") {
		return errFormat
	}
	return nil
}
