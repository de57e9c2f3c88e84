package oauth

import (
	"net/http"

	"bokat"
)

// serverMetadata is the RFC 8414 authorization server metadata.
type serverMetadata struct {
	Issuer                                 string   `json:"issuer"`
	AuthorizationEndpoint                  string   `json:"authorization_endpoint"`
	TokenEndpoint                          string   `json:"token_endpoint"`
	RevocationEndpoint                     string   `json:"revocation_endpoint"`
	RegistrationEndpoint                   string   `json:"registration_endpoint"`
	ClientIDMetadataDocumentSupported      bool     `json:"client_id_metadata_document_supported"`
	ScopesSupported                        []string `json:"scopes_supported"`
	ResponseTypesSupported                 []string `json:"response_types_supported"`
	ResponseModesSupported                 []string `json:"response_modes_supported"`
	GrantTypesSupported                    []string `json:"grant_types_supported"`
	TokenEndpointAuthMethodsSupported      []string `json:"token_endpoint_auth_methods_supported"`
	RevocationEndpointAuthMethodsSupported []string `json:"revocation_endpoint_auth_methods_supported"`
	CodeChallengeMethodsSupported          []string `json:"code_challenge_methods_supported"`
	AuthorizationResponseIssParameter      bool     `json:"authorization_response_iss_parameter_supported"`
	UILocalesSupported                     []string `json:"ui_locales_supported"`
	ServiceDocumentation                   string   `json:"service_documentation"`
}

func (s *Server) handleMetadata(w http.ResponseWriter, r *http.Request) {
	authMethods := []string{"client_secret_basic", "client_secret_post", "none"}
	scopes := make([]string, 0, len(bokat.AllScopes()))
	for _, sc := range bokat.AllScopes() {
		scopes = append(scopes, string(sc))
	}
	w.Header().Set("Cache-Control", "public, max-age=300")
	writeJSON(w, http.StatusOK, serverMetadata{
		Issuer:                                 s.issuer,
		AuthorizationEndpoint:                  s.issuer + "/oauth/authorize",
		TokenEndpoint:                          s.issuer + "/oauth/token",
		RevocationEndpoint:                     s.issuer + "/oauth/revoke",
		RegistrationEndpoint:                   s.issuer + "/oauth/register",
		ClientIDMetadataDocumentSupported:      s.documents != nil,
		ScopesSupported:                        scopes,
		ResponseTypesSupported:                 []string{"code"},
		ResponseModesSupported:                 []string{"query"},
		GrantTypesSupported:                    []string{"authorization_code", "refresh_token"},
		TokenEndpointAuthMethodsSupported:      authMethods,
		RevocationEndpointAuthMethodsSupported: authMethods,
		CodeChallengeMethodsSupported:          []string{"S256"},
		AuthorizationResponseIssParameter:      true,
		UILocalesSupported:                     []string{localeSV, localeEN},
		ServiceDocumentation:                   s.issuer + "/v1/openapi.json",
	})
}
