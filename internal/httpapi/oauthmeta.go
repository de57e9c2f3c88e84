package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"

	"bokat"
	"bokat/internal/ratelimit"
)

// AuthorizationServer is the OAuth 2 authorization server (package oauth)
// as the route table mounts it. Each method returns the handler of one
// endpoint; see protocolRoutes for the paths.
type AuthorizationServer interface {
	Metadata() http.Handler
	Authorize() http.Handler
	SignIn() http.Handler
	SignInCode() http.Handler
	SignOut() http.Handler
	Token() http.Handler
	Revoke() http.Handler
	Register() http.Handler
}

// wrapProtocol applies what every request needs apart from the v1
// conventions: the access log's route name, the body limit, and the
// caller's rate-limit key (its client IP, resolved as for the API, trusted
// proxies included), which the authorization server's own budgets spend.
// The discovery documents spend the API's reads quota, as
// /v1/openapi.json does.
func (s *Server) wrapProtocol(pr protocolRoute) http.Handler {
	discovery := route{pattern: pr.pattern, contract: bokat.BookingsContractVersion, rate: rateReads}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requestInfoFrom(r.Context()).route = pr.pattern
		r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
		if strings.HasPrefix(pr.pattern, "/.well-known/") && !s.allowRequest(w, r, discovery, bokat.Principal{}) {
			return
		}
		r = r.WithContext(ratelimit.WithCaller(r.Context(), s.rateKey(r, bokat.Principal{})))
		pr.handler.ServeHTTP(w, r)
	})
}

// resourceMetadata is the RFC 9728 protected resource metadata of the API.
type resourceMetadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	ScopesSupported        []string `json:"scopes_supported"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ResourceName           string   `json:"resource_name"`
	ResourceDocumentation  string   `json:"resource_documentation"`
}

// handleResourceMetadata serves GET /.well-known/oauth-protected-resource,
// the document every 401 and 403 names in WWW-Authenticate.
func (s *Server) handleResourceMetadata(w http.ResponseWriter, r *http.Request) {
	scopes := make([]string, 0, len(bokat.AllScopes()))
	for _, sc := range bokat.AllScopes() {
		scopes = append(scopes, string(sc))
	}
	body, err := json.Marshal(resourceMetadata{
		Resource:               s.baseURL,
		AuthorizationServers:   []string{s.baseURL},
		ScopesSupported:        scopes,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "Bokat booking API",
		ResourceDocumentation:  s.baseURL + "/v1/openapi.json",
	})
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, _ = w.Write(append(body, '\n'))
}
