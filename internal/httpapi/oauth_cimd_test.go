package httpapi

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"bokat"
	"bokat/internal/oauth"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/webhook"
	"bokat/internal/webhook/webhooktest"
)

// documentServer is a client's https site publishing Client ID Metadata
// Documents; it counts the fetches of each path.
type documentServer struct {
	*httptest.Server
	mu      sync.Mutex
	docs    map[string]documentReply
	fetches map[string]int
}

type documentReply struct {
	status       int
	body         string
	cacheControl string
	location     string
}

func newDocumentServer(t *testing.T) *documentServer {
	d := &documentServer{docs: map[string]documentReply{}, fetches: map[string]int{}}
	d.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.mu.Lock()
		reply, ok := d.docs[r.URL.Path]
		d.fetches[r.URL.Path]++
		d.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		if reply.cacheControl != "" {
			w.Header().Set("Cache-Control", reply.cacheControl)
		}
		if reply.location != "" {
			w.Header().Set("Location", reply.location)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(reply.status)
		fmt.Fprint(w, reply.body)
	}))
	t.Cleanup(d.Close)
	return d
}

// publish serves a document whose client_id is its own URL, and returns
// that URL.
func (d *documentServer) publish(path, name, cacheControl string, redirectURIs ...string) string {
	id := d.URL + path
	d.set(path, documentReply{status: 200, cacheControl: cacheControl,
		body: fmt.Sprintf(`{"client_id":%q,"client_name":%q,"redirect_uris":[%q],"token_endpoint_auth_method":"none",
			"grant_types":["authorization_code","refresh_token"],"response_types":["code"]}`, id, name, strings.Join(redirectURIs, `","`))})
	return id
}

func (d *documentServer) set(path string, reply documentReply) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.docs[path] = reply
}

func (d *documentServer) count(path string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.fetches[path]
}

// documentSetup lets the authorization server fetch from d: the guard of
// a development server (loopback allowed), trusting d's certificate.
func documentSetup(d *documentServer, allowPrivate bool) oauthSetup {
	pool := x509.NewCertPool()
	pool.AddCert(d.Certificate())
	return oauthSetup{guard: webhook.NewGuard(webhooktest.NewResolver(), allowPrivate), documentTLS: &tls.Config{RootCAs: pool}}
}

// documentClient is the x/oauth2 configuration of a metadata-document
// client: a public client whose id is the document's URL.
func (e *oauthEnv) documentClient(id string) *oauth2.Config {
	return &oauth2.Config{ClientID: id, RedirectURL: callbackURI, Scopes: []string{string(bokat.ScopeBookingsRead)},
		Endpoint: oauth2.Endpoint{AuthURL: e.http.URL + "/oauth/authorize", TokenURL: e.http.URL + "/oauth/token",
			AuthStyle: oauth2.AuthStyleInParams}}
}

// TestClientIDMetadataDocuments: an https client_id is fetched, checked
// and cached; the client it describes gets a token bound to /mcp.
func TestClientIDMetadataDocuments(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		d := newDocumentServer(t)
		e := newOAuthEnv(t, db, documentSetup(d, true))
		id := d.publish("/bokat/client.json", "Assistenten\t X", "max-age=600", callbackURI)
		as, _ := getJSON(t, e.http.URL+"/.well-known/oauth-authorization-server")
		if as["client_id_metadata_document_supported"] != true {
			t.Errorf("metadata: client_id_metadata_document_supported = %v", as["client_id_metadata_document_supported"])
		}

		tok := e.exchangeFor(e.documentClient(id), "kund@example.se", mcpResource)
		resp, raw := e.mcpPost(t, map[string]string{"Authorization": "Bearer " + tok.AccessToken, "MCP-Protocol-Version": "2025-11-25"}, mcpStatusCall)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(raw), `"found":false`) {
			t.Errorf("document client's token on /mcp: %d %s", resp.StatusCode, raw)
		}
		c, err := db.OAuthClient(context.Background(), id)
		if err != nil || c.Registration != oauth.ClientMetadata || !c.Public() || c.Name != "Assistenten X" {
			t.Errorf("stored client %+v, %v", c, err)
		}
		// One fetch served the whole flow (authorize, sign-in, consent):
		// the document is cached for its max-age.
		if n := d.count("/bokat/client.json"); n != 1 {
			t.Errorf("document fetched %d times within its max-age, want once", n)
		}
		// After the max-age the document is fetched again and its changes
		// apply: a redirect URI it no longer lists is refused.
		d.publish("/bokat/client.json", "Assistenten", "max-age=600", "https://app.example/cb")
		e.clock.Advance(11 * time.Minute)
		resp2, body := e.browser().get(e.documentClient(id).AuthCodeURL("st", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())))
		if resp2.StatusCode != http.StatusBadRequest || resp2.Header.Get("Location") != "" || d.count("/bokat/client.json") != 2 {
			t.Errorf("after the change: %d %q (fetches %d), want the error page and a second fetch\n%s",
				resp2.StatusCode, resp2.Header.Get("Location"), d.count("/bokat/client.json"), body)
		}
	})
}

// TestClientIDMetadataDocumentRefusals: a document that cannot be trusted
// shows the customer the error page and never redirects.
func TestClientIDMetadataDocumentRefusals(t *testing.T) {
	t.Parallel()
	d := newDocumentServer(t)
	e := newOAuthEnv(t, sqliteDB(t), documentSetup(d, true))
	good := d.publish("/good.json", "Bra", "", callbackURI)
	d.set("/other.json", documentReply{status: 200, body: fmt.Sprintf(`{"client_id":%q,"redirect_uris":[%q]}`, good, callbackURI)})
	d.set("/large.json", documentReply{status: 200, body: fmt.Sprintf(`{"client_id":%q,"redirect_uris":[%q],"client_name":%q}`,
		d.URL+"/large.json", callbackURI, strings.Repeat("x", oauth.MaxClientDocumentBytes))})
	d.set("/moved.json", documentReply{status: 302, location: good})
	d.set("/secret.json", documentReply{status: 200, body: fmt.Sprintf(`{"client_id":%q,"redirect_uris":[%q],
		"token_endpoint_auth_method":"private_key_jwt"}`, d.URL+"/secret.json", callbackURI)})
	d.set("/plainhttp.json", documentReply{status: 200, body: fmt.Sprintf(`{"client_id":%q,"redirect_uris":["http://app.example/cb"]}`,
		d.URL+"/plainhttp.json")})
	d.set("/notjson.json", documentReply{status: 200, body: `<html>`})
	d.set("/test.json", documentReply{status: 200, body: fmt.Sprintf(`{"client_id":%q,"redirect_uris":[%q],"bokat_mode":"test"}`,
		d.URL+"/test.json", callbackURI)})
	bokatLike := d.publish("/bokat-like.json", "B\u200bоkat Support", "", callbackURI) // zero-width space, Cyrillic о

	for name, id := range map[string]string{
		"client_id differs from the URL": d.URL + "/other.json",
		"larger than the limit":          d.URL + "/large.json",
		"redirected":                     d.URL + "/moved.json",
		"not found":                      d.URL + "/missing.json",
		"confidential":                   d.URL + "/secret.json",
		"http redirect URI off loopback": d.URL + "/plainhttp.json",
		"not JSON":                       d.URL + "/notjson.json",
		"a test client (issue 25)":       d.URL + "/test.json",
		"named as Bokat":                 bokatLike,
		"no path":                        d.URL,
		"fragment":                       good + "#x",
		"http client_id":                 strings.Replace(good, "https://", "http://", 1),
	} {
		resp, body := e.browser().get(e.documentClient(id).AuthCodeURL("st", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())))
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" {
			t.Errorf("%s: %d %q, want the 400 error page\n%s", name, resp.StatusCode, resp.Header.Get("Location"), body)
		}
	}

	// A production guard refuses the loopback site before connecting.
	prod := newOAuthEnv(t, sqliteDB(t), documentSetup(d, false))
	before := d.count("/good.json")
	resp, _ := prod.browser().get(prod.documentClient(good).AuthCodeURL("st", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())))
	if resp.StatusCode != http.StatusBadRequest || d.count("/good.json") != before {
		t.Errorf("production guard: %d, fetches %d → %d; want 400 and no fetch", resp.StatusCode, before, d.count("/good.json"))
	}
}
