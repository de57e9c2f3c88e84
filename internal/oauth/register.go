package oauth

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"bokat"
	"bokat/internal/ratelimit"
)

// SelfRegisteredScopes are the scopes a client that registered itself
// (RFC 7591, or a Client ID Metadata Document) may ask the customer for
// when its metadata names none: every scope an assistant acting for a
// customer uses. Webhook management stays with operator-registered
// clients.
func SelfRegisteredScopes() []bokat.Scope {
	return slices.DeleteFunc(bokat.AllScopes(), func(s bokat.Scope) bool { return s == bokat.ScopeWebhooksManage })
}

// clientMetadata is the client metadata of RFC 7591 section 2 that this
// server reads, in a registration request or a Client ID Metadata
// Document; other members are ignored (RFC 7591 section 2).
type clientMetadata struct {
	ClientID                string   `json:"client_id"`
	RedirectURIs            []string `json:"redirect_uris"`
	ClientName              string   `json:"client_name"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	Scope                   string   `json:"scope"`
	// Mode is Bokat's extension member bokat_mode (RFC 7591 section 2
	// lets extensions add members): "test" registers a client of the test
	// realm, "live" (or no member) one of the live realm.
	Mode string `json:"bokat_mode"`
}

// ModeMetadataMember names the registration metadata member that asks for a
// client of the test realm ("bokat_mode": "test").
const ModeMetadataMember = "bokat_mode"

// metadataError is an RFC 7591 section 3.2.2 error.
type metadataError struct {
	code        string // invalid_redirect_uri or invalid_client_metadata
	description string
}

func (e *metadataError) Error() string { return e.code + ": " + e.description }

// publicClient validates self-declared client metadata for a public client
// with PKCE: strict on redirect URIs (https, or http on loopback; no
// fragment), lenient on the name (optional; cleaned to one line of at most
// 120 visible characters; the first redirect URI's ASCII host stands in
// when there is none) except that a name claiming to be Bokat is refused. fallbackName names the client when the metadata does not. With
// substituteAuth another token_endpoint_auth_method is replaced by none
// (RFC 7591 section 3.2.1 lets the server substitute values; the response
// tells the client), else it is refused.
func (m clientMetadata) publicClient(fallbackName string, substituteAuth bool) (Client, *metadataError) {
	if len(m.RedirectURIs) == 0 {
		return Client{}, &metadataError{"invalid_redirect_uri", "at least one redirect URI is required"}
	}
	if len(m.RedirectURIs) > 10 {
		return Client{}, &metadataError{"invalid_redirect_uri", "at most 10 redirect URIs are accepted"}
	}
	var uris []string
	for _, u := range m.RedirectURIs {
		if err := ValidateRedirectURI(u); err != nil {
			var be *bokat.Error
			desc := "a redirect URI is not valid"
			if errors.As(err, &be) {
				desc = be.Detail
			}
			return Client{}, &metadataError{"invalid_redirect_uri", desc}
		}
		if !slices.Contains(uris, u) {
			uris = append(uris, u)
		}
	}
	if m.TokenEndpointAuthMethod != "" && m.TokenEndpointAuthMethod != "none" && !substituteAuth {
		return Client{}, &metadataError{"invalid_client_metadata",
			"token_endpoint_auth_method must be none: self-registered clients are public and prove themselves with PKCE S256"}
	}
	for _, g := range m.GrantTypes {
		if g != "authorization_code" && g != "refresh_token" {
			return Client{}, &metadataError{"invalid_client_metadata", "grant_types may hold only authorization_code and refresh_token"}
		}
	}
	for _, rt := range m.ResponseTypes {
		if rt != "code" {
			return Client{}, &metadataError{"invalid_client_metadata", "response_types may hold only code"}
		}
	}
	scopes := SelfRegisteredScopes()
	if strings.TrimSpace(m.Scope) != "" {
		var err error
		if scopes, err = parseScope(strings.Join(strings.Fields(m.Scope), " "), scopes); err != nil {
			return Client{}, &metadataError{"invalid_client_metadata", err.Error()}
		}
	}
	mode := bokat.ModeLive
	if m.Mode != "" {
		parsed, err := bokat.ParseMode(m.Mode)
		if err != nil {
			return Client{}, &metadataError{"invalid_client_metadata", ModeMetadataMember + " must be live or test"}
		}
		mode = parsed
	}
	name := cleanClientName(m.ClientName)
	if claimsBokat(name) {
		return Client{}, &metadataError{"invalid_client_metadata",
			"client_name must not claim to be Bokat (in any spelling or look-alike letters): name the app itself"}
	}
	if name == "" {
		name = fallbackName
	}
	if name == "" {
		name = redirectHost(uris[0])
	}
	return Client{Name: name, RedirectURIs: uris, Scopes: scopes, Mode: mode}, nil
}

// cleanClientName makes a self-declared client name fit the consent page:
// text cleaned by the bokat.CleanText rules, without invisible characters
// (isInvisible: bidi controls, zero-width characters and the like, which
// could reorder or hide what the customer reads), white space collapsed, at
// most 120 characters.
func cleanClientName(raw string) string {
	visible := strings.Map(func(r rune) rune {
		if isInvisible(r) {
			return -1
		}
		return r
	}, bokat.CleanText(raw, false))
	name := strings.Join(strings.Fields(visible), " ")
	if utf8.RuneCountInString(name) > 120 {
		name = strings.TrimSpace(string([]rune(name)[:120]))
	}
	return name
}

// registrationResponse is the RFC 7591 section 3.2.1 success body.
type registrationResponse struct {
	ClientID                string   `json:"client_id"`
	ClientIDIssuedAt        int64    `json:"client_id_issued_at"`
	ClientName              string   `json:"client_name"`
	RedirectURIs            []string `json:"redirect_uris"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	Scope                   string   `json:"scope"`
	// Mode is the client's realm, always stated, so that a client that
	// asked for a test client can check it got one.
	Mode bokat.Mode `json:"bokat_mode"`
}

// handleRegister is the RFC 7591 dynamic client registration endpoint. It
// registers public clients only (token_endpoint_auth_method none, PKCE
// S256 as for every client), under a per-IP budget; of the test realm when
// the metadata says "bokat_mode": "test".
func (s *Server) handleRegister(w http.ResponseWriter, r *http.Request) {
	fail := func(status int, code, desc string) {
		noStore(w)
		writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
	}
	if wait := s.spend(r.Context(), s.limits.Register, ratelimit.Caller(r.Context())); wait > 0 {
		setRetryAfter(w, wait)
		fail(http.StatusTooManyRequests, "slow_down", "too many registrations from this address; wait for Retry-After seconds")
		return
	}
	var m clientMetadata
	dec := json.NewDecoder(r.Body)
	if err := dec.Decode(&m); err != nil || dec.More() {
		fail(http.StatusBadRequest, "invalid_client_metadata", "the body must be one JSON object of client metadata (RFC 7591)")
		return
	}
	for _, u := range append([]string{m.TokenEndpointAuthMethod, m.Scope, m.Mode}, m.RedirectURIs...) {
		if bokat.CheckText(u, false) != "" {
			fail(http.StatusBadRequest, "invalid_client_metadata", "the metadata holds text that is not valid")
			return
		}
	}
	c, merr := m.publicClient("", true)
	if merr != nil {
		fail(http.StatusBadRequest, merr.code, merr.description)
		return
	}
	now := s.now()
	id, _, err := CreateClient(r.Context(), s.store, s.hasher, ClientSpec{Name: c.Name, RedirectURIs: c.RedirectURIs,
		Scopes: c.Scopes, Public: true, Registration: ClientDynamic, Mode: c.Mode}, now)
	if err != nil {
		s.log.ErrorContext(r.Context(), "dynamic client registration failed", "error", err.Error())
		fail(http.StatusServiceUnavailable, "temporarily_unavailable", "the client could not be registered; retry later")
		return
	}
	noStore(w)
	writeJSON(w, http.StatusCreated, registrationResponse{
		ClientID:                id,
		ClientIDIssuedAt:        now.Unix(),
		ClientName:              c.Name,
		RedirectURIs:            c.RedirectURIs,
		TokenEndpointAuthMethod: "none",
		GrantTypes:              []string{"authorization_code", "refresh_token"},
		ResponseTypes:           []string{"code"},
		Scope:                   scopeString(c.Scopes),
		Mode:                    c.Mode,
	})
}
