package httpapi

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"testing"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"bokat"
	"bokat/internal/oauth"
)

// hostDialer sends every connection to the test server, standing in for
// the base URL's host, so that clients follow the
// server's own absolute URLs (challenges, metadata) unchanged.
func hostDialer(addr string) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	return &http.Client{Transport: tr}
}

// TestMCPOAuthWithTheSDKHandler: an MCP client holding only the endpoint
// URL and a way to be a client — a registered public client id, dynamic
// registration (RFC 7591) or a Client ID Metadata Document — follows the
// 401 challenge to the resource metadata and the authorization server,
// gets the user's consent (driven headlessly), and books with an access
// token bound to /mcp.
func TestMCPOAuthWithTheSDKHandler(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name         string
		registration string
		configure    func(e *oauthEnv, d *documentServer, cfg *sdkauth.AuthorizationCodeHandlerConfig) (clientID string)
	}{
		{"registered", oauth.ClientOperator, func(e *oauthEnv, _ *documentServer, cfg *sdkauth.AuthorizationCodeHandlerConfig) string {
			conf := e.newClient("MCP-klient", true, bokat.ScopeBookingsConfirm, bokat.ScopeBookingsRead)
			cfg.PreregisteredClient = &oauthex.ClientCredentials{ClientID: conf.ClientID}
			return conf.ClientID
		}},
		{"dynamic", oauth.ClientDynamic, func(_ *oauthEnv, _ *documentServer, cfg *sdkauth.AuthorizationCodeHandlerConfig) string {
			cfg.DynamicClientRegistrationConfig = &sdkauth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
				RedirectURIs: []string{callbackURI}, ClientName: "SDK-klient", TokenEndpointAuthMethod: "none",
				GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"}}}
			return ""
		}},
		{"metadata document", oauth.ClientMetadata, func(_ *oauthEnv, d *documentServer, cfg *sdkauth.AuthorizationCodeHandlerConfig) string {
			id := d.publish("/mcp-client.json", "SDK-klient", "max-age=300", callbackURI)
			cfg.ClientIDMetadataDocumentConfig = &sdkauth.ClientIDMetadataDocumentConfig{URL: id}
			return id
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			d := newDocumentServer(t)
			setup := documentSetup(d, true)
			// The SDK fetches authorization server metadata only over
			// https or from a loopback host.
			setup.baseURL = "http://localhost"
			e := newOAuthEnv(t, sqliteDB(t), setup)
			e.withDemoSupply()
			client := hostDialer(e.http.Listener.Addr().String())
			fetched := 0
			cfg := &sdkauth.AuthorizationCodeHandlerConfig{
				RedirectURL: callbackURI,
				Client:      client,
				AuthorizationCodeFetcher: func(ctx context.Context, args *sdkauth.AuthorizationArgs) (*sdkauth.AuthorizationResult, error) {
					fetched++
					u, err := url.Parse(args.URL)
					if err != nil {
						return nil, err
					}
					b := e.browser()
					loc := e.decide(b, e.signIn(b, u.RequestURI(), "mcp-user@example.se"), "approve")
					q := loc.Query()
					return &sdkauth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
				},
			}
			wantClient := c.configure(e, d, cfg)
			handler, err := sdkauth.NewAuthorizationCodeHandler(cfg)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			cs, err := sdk.NewClient(&sdk.Implementation{Name: "bokat-oauth-test", Version: "1"}, nil).Connect(ctx,
				&sdk.StreamableClientTransport{Endpoint: "http://localhost/mcp", HTTPClient: client, OAuthHandler: handler},
				&sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			o := e.options(t, faucetSearch())[0]
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "confirm_booking", Arguments: confirmBody(o, "oauth-1")})
			if err != nil {
				t.Fatalf("confirm through OAuth: %v", err)
			}
			if fetched != 1 {
				t.Errorf("the user was asked %d times, want once", fetched)
			}
			body, _ := res.StructuredContent.(map[string]any)
			if res.IsError || body["booking_created"] != true {
				t.Fatalf("confirm: %v", body)
			}
			var owner, user string
			id := body["booking"].(map[string]any)["id"]
			if err := e.db.R().QueryRowContext(ctx, `SELECT owner_client_id, owner_user_id FROM bookings WHERE id = $1`, id).Scan(&owner, &user); err != nil ||
				(wantClient != "" && owner != wantClient) || user == "" {
				t.Errorf("booking owner %q/%q (%v), want the OAuth client %q and its user", owner, user, err, wantClient)
			}
			if oc, err := e.db.OAuthClient(ctx, owner); err != nil || oc.Registration != c.registration {
				t.Errorf("the booking's client %+v (%v), want one registered as %s", oc, err, c.registration)
			}
			// The SDK asked for the MCP resource (RFC 8707): the token is
			// bound to /mcp and refused by the REST API.
			var audience string
			if err := e.db.R().QueryRowContext(ctx, `SELECT audience FROM oauth_grants WHERE client_id = $1`, owner).Scan(&audience); err != nil ||
				audience != string(bokat.AudienceMCP) {
				t.Errorf("grant audience %q (%v), want mcp", audience, err)
			}
			ts, err := handler.TokenSource(ctx)
			if err != nil {
				t.Fatal(err)
			}
			tok, err := ts.Token()
			if err != nil {
				t.Fatal(err)
			}
			if r := e.do(request{Method: "GET", Path: fmt.Sprintf("/v1/bookings/%s", id), Header: bearer(tok.AccessToken)}); r.Status != http.StatusUnauthorized {
				t.Errorf("the MCP token on REST: %d %s, want 401", r.Status, r.Body)
			}
		})
	}
}
