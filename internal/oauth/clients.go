package oauth

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"bokat"
	"bokat/internal/auth"
)

// ClientSpec describes a client to register.
type ClientSpec struct {
	Name         string
	RedirectURIs []string
	Scopes       []bokat.Scope
	// Public clients (native and browser apps) get no secret; PKCE is their
	// only proof, as it is an additional one for every client.
	Public bool
	// Registration is how the client came (ClientOperator when empty,
	// or ClientDynamic).
	Registration string
	// Mode is the client's realm (empty: live).
	Mode bokat.Mode
}

// CreateClient validates and registers a client. It returns the client id
// and, for a confidential client, the secret: shown this once, stored only
// as a keyed hash. Invalid input is a *bokat.Error with code
// validation_failed.
func CreateClient(ctx context.Context, store ClientStore, h *auth.Hasher, spec ClientSpec, now time.Time) (clientID, secret string, err error) {
	name := strings.TrimSpace(spec.Name)
	if name == "" || len(name) > 120 {
		return "", "", bokat.Errorf(bokat.CodeValidationFailed, "the client name must be 1 to 120 characters")
	}
	if len(spec.RedirectURIs) == 0 {
		return "", "", bokat.Errorf(bokat.CodeValidationFailed, "at least one redirect URI is required")
	}
	var uris []string
	for _, u := range spec.RedirectURIs {
		if err := ValidateRedirectURI(u); err != nil {
			return "", "", err
		}
		if !slices.Contains(uris, u) {
			uris = append(uris, u)
		}
	}
	if len(spec.Scopes) == 0 {
		return "", "", bokat.Errorf(bokat.CodeValidationFailed, "at least one scope is required")
	}
	id, err := uuid.NewV7()
	if err != nil {
		return "", "", err
	}
	c := Client{
		ID:           ClientIDPrefix + strings.ReplaceAll(id.String(), "-", ""),
		Name:         name,
		RedirectURIs: uris,
		Scopes:       spec.Scopes,
		Registration: spec.Registration,
		CreatedAt:    now,
		Mode:         spec.Mode.Or(),
	}
	if !spec.Public {
		secret = newSecret(c.Mode, ClientSecretPrefix)
		c.SecretHash = h.Hash(domainClientSecret, secret)
	}
	if err := store.CreateOAuthClient(ctx, c); err != nil {
		return "", "", fmt.Errorf("store oauth client: %w", err)
	}
	return c.ID, secret, nil
}

// ValidateRedirectURI checks a redirect URI for registration: an absolute
// https URI, or an http URI whose host is a loopback address (127.0.0.1,
// [::1] or localhost; RFC 8252 section 7.3) — with no fragment, no user
// information and no whitespace.
func ValidateRedirectURI(raw string) error {
	bad := func(why string) error {
		return bokat.Errorf(bokat.CodeValidationFailed, "redirect URI %q: %s", raw, why)
	}
	if raw == "" || len(raw) > 2000 || strings.ContainsAny(raw, " \t\r\n") {
		return bad("must be 1 to 2000 characters without whitespace")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return bad("is not a URI")
	}
	if !u.IsAbs() || u.Host == "" || u.Opaque != "" {
		return bad("must be an absolute URI with a host")
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return bad("must not have a fragment")
	}
	if u.User != nil {
		return bad("must not carry user information")
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return bad("the port must be from 1 to 65535")
		}
	}
	if escapesControl(raw) {
		return bad("must not hold a percent-encoded control character (such as %00)")
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if isLoopbackHost(u.Hostname()) {
			return nil
		}
		return bad("http is allowed only for loopback redirect URIs (127.0.0.1, [::1], localhost); use https")
	}
	return bad("the scheme must be https (or http on a loopback address)")
}

// escapesControl reports whether raw holds a percent-encoding of a control
// character (%00 to %1F, %7F): the redirect would carry it into the
// client's URL parsing, where a NUL or a line break truncates or splits.
func escapesControl(raw string) bool {
	for i := 0; i+2 < len(raw); i++ {
		if raw[i] != '%' {
			continue
		}
		b, err := strconv.ParseUint(raw[i+1:i+3], 16, 8)
		if err == nil && (b < 0x20 || b == 0x7f) {
			return true
		}
	}
	return false
}

func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// matchRedirectURI reports whether the redirect URI of a request matches
// one the client registered: by exact string comparison, except that an
// http loopback URI may differ in its port (RFC 8252 section 7.3: native
// apps listen on an ephemeral port) — a port from 1 to 65535, the URI as
// valid as a registered one.
func matchRedirectURI(registered []string, got string) bool {
	if slices.Contains(registered, got) {
		return true
	}
	g, err := url.Parse(got)
	if err != nil || g.Scheme != "http" || !isLoopbackHost(g.Hostname()) || g.User != nil || g.Fragment != "" ||
		ValidateRedirectURI(got) != nil {
		return false
	}
	for _, r := range registered {
		u, err := url.Parse(r)
		if err != nil || u.Scheme != "http" || !isLoopbackHost(u.Hostname()) {
			continue
		}
		if u.Hostname() == g.Hostname() && u.EscapedPath() == g.EscapedPath() && u.RawQuery == g.RawQuery &&
			u.ForceQuery == g.ForceQuery {
			return true
		}
	}
	return false
}

// newSecret returns a new secret of the kind live (a prefix of
// bokat.TestSecretPrefixes) for a client of the realm mode: of the kind's
// test form in the test realm; in the live realm of the live form, never
// starting like the test form (a secret drawn so is drawn again), so the
// first characters tell the realms apart without exception.
func newSecret(mode bokat.Mode, live string) string {
	test := bokat.TestSecretPrefixes()[live]
	if mode.Test() {
		return auth.NewSecret(test)
	}
	for {
		if s := auth.NewSecret(live); !strings.HasPrefix(s, test) {
			return s
		}
	}
}

// formMatches reports whether secret, of the kind live, has the form of its
// client's realm mode: the test form exactly for a test client. A secret
// whose form disagrees with its client's mode is refused wherever it is
// presented.
func formMatches(mode bokat.Mode, live, secret string) bool {
	return mode.Test() == strings.HasPrefix(secret, bokat.TestSecretPrefixes()[live])
}
