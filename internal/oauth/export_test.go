package oauth

import "bokat/internal/auth"

// What the external tests (package oauth_test, which open a real store and
// so cannot be part of this package) need of its unexported parts.

const DomainClientSecret = domainClientSecret

var (
	SafeScopeName = safeScopeName
	BrowserID     = (*Server).browserID
)

// HasherOf returns the server's token hasher.
func HasherOf(s *Server) *auth.Hasher { return s.hasher }

// IssuerOf returns the server's issuer identifier.
func IssuerOf(s *Server) string { return s.issuer }
