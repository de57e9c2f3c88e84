package oauth

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"bokat"
)

// Client ID Metadata Documents: a client_id that is an https URL names a
// JSON document of client metadata the client publishes there. The server
// fetches it through the SSRF guard webhooks use, within size and time
// limits, caches it within bounds, and keeps the client as a public client
// row under the URL (refreshed from each fetch), so grants and tokens
// refer to it as to any client.
const (
	// MaxClientDocumentBytes bounds a fetched document.
	MaxClientDocumentBytes = 5 << 10
	// ClientDocumentTimeout bounds one fetch, connection included.
	ClientDocumentTimeout = 5 * time.Second
	// ClientDocumentMinTTL and ClientDocumentMaxTTL bound how long a
	// document is cached, whatever its Cache-Control says;
	// ClientDocumentDefaultTTL applies without a max-age.
	ClientDocumentMinTTL     = time.Minute
	ClientDocumentMaxTTL     = 24 * time.Hour
	ClientDocumentDefaultTTL = 5 * time.Minute
	// maxClientDocuments bounds the cache; when full, expired entries go,
	// then everything.
	maxClientDocuments = 1000
	// maxClientIDURL bounds a client_id URL.
	maxClientIDURL = 2000
)

// DocumentGuard is the SSRF guard of outgoing fetches (*webhook.Guard):
// CheckURL refuses a destination whose scheme, port or resolved addresses
// are not allowed, and DialContext re-checks the address actually dialled.
type DocumentGuard interface {
	CheckURL(ctx context.Context, raw string) (*url.URL, error)
	DialContext(ctx context.Context, network, addr string) (net.Conn, error)
}

// clientDocuments fetches and caches Client ID Metadata Documents.
type clientDocuments struct {
	guard  DocumentGuard
	client *http.Client
	mu     sync.Mutex
	cache  map[string]time.Time // client id → when its document goes stale
}

func newClientDocuments(guard DocumentGuard, tlsConfig *tls.Config) *clientDocuments {
	tr := &http.Transport{
		DialContext:            guard.DialContext,
		TLSClientConfig:        tlsConfig,
		TLSHandshakeTimeout:    ClientDocumentTimeout,
		ResponseHeaderTimeout:  ClientDocumentTimeout,
		MaxResponseHeaderBytes: 16 << 10,
		DisableCompression:     true,
		// Fetches are rare and go anywhere: no idle connections are kept,
		// and no proxy is consulted (the guard judges the real peer).
		DisableKeepAlives: true,
	}
	return &clientDocuments{
		guard: guard,
		client: &http.Client{
			Transport: tr,
			Timeout:   ClientDocumentTimeout,
			// A document is served at its URL: a redirect is refused, so
			// the guard has judged every destination.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		cache: make(map[string]time.Time),
	}
}

// isDocumentClientID reports whether a client_id names a Client ID
// Metadata Document.
func isDocumentClientID(id string) bool { return strings.HasPrefix(id, "https://") }

// errClientDocument is a document that cannot be used; its text says why,
// for the log (it holds no secret: the URL is public).
type errClientDocument struct{ why string }

func (e *errClientDocument) Error() string { return "client metadata document: " + e.why }

// lookupClient returns the active client with the id. An https client_id
// is a Client ID Metadata Document, fetched when its cached copy is stale
// (or refused with *errClientDocument when it cannot be used). An unknown
// or revoked client is bokat.ErrNotFound.
func (s *Server) lookupClient(ctx context.Context, id string) (Client, error) {
	if !isDocumentClientID(id) || s.documents == nil {
		if len(id) > 100 {
			return Client{}, bokat.ErrNotFound
		}
		return s.store.OAuthClient(ctx, id)
	}
	d := s.documents
	now := s.now()
	d.mu.Lock()
	stale, ok := d.cache[id]
	d.mu.Unlock()
	if ok && now.Before(stale) {
		return s.store.OAuthClient(ctx, id)
	}
	c, ttl, err := d.fetch(ctx, id)
	if err != nil {
		return Client{}, err
	}
	c.CreatedAt = now
	stored, err := s.store.PutMetadataClient(ctx, c)
	if err != nil {
		return Client{}, err
	}
	d.mu.Lock()
	if len(d.cache) >= maxClientDocuments {
		for k, t := range d.cache {
			if !now.Before(t) {
				delete(d.cache, k)
			}
		}
		if len(d.cache) >= maxClientDocuments {
			clear(d.cache)
		}
	}
	d.cache[id] = now.Add(ttl)
	d.mu.Unlock()
	return stored, nil
}

// checkDocumentURL checks a client_id URL: https, with a path, without
// fragment, user information or dot segments.
func checkDocumentURL(raw string) error {
	if len(raw) > maxClientIDURL || bokat.CheckText(raw, false) != "" || strings.ContainsAny(raw, " #") {
		return &errClientDocument{"the client_id URL is too long or not clean text"}
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.Opaque != "" {
		return &errClientDocument{"the client_id must be an https URL with a host"}
	}
	if u.Path == "" || u.Path == "/" {
		return &errClientDocument{"the client_id URL must have a path"}
	}
	for _, seg := range strings.Split(u.Path, "/") {
		if seg == "." || seg == ".." {
			return &errClientDocument{"the client_id URL must not hold dot segments"}
		}
	}
	return nil
}

// fetch gets and validates the document at id, returning its client (not
// yet stored) and how long to cache it.
func (d *clientDocuments) fetch(ctx context.Context, id string) (Client, time.Duration, error) {
	if err := checkDocumentURL(id); err != nil {
		return Client{}, 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, ClientDocumentTimeout)
	defer cancel()
	if _, err := d.guard.CheckURL(ctx, id); err != nil {
		return Client{}, 0, &errClientDocument{"the client_id URL is not an allowed destination: " + err.Error()}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, id, nil)
	if err != nil {
		return Client{}, 0, &errClientDocument{"the client_id URL is not valid"}
	}
	req.Header.Set("Accept", "application/json")
	resp, err := d.client.Do(req)
	if err != nil {
		return Client{}, 0, &errClientDocument{"fetch failed: " + err.Error()}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Client{}, 0, &errClientDocument{fmt.Sprintf("fetch answered %d, want 200", resp.StatusCode)}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxClientDocumentBytes+1))
	if err != nil {
		return Client{}, 0, &errClientDocument{"reading the document failed: " + err.Error()}
	}
	if len(body) > MaxClientDocumentBytes {
		return Client{}, 0, &errClientDocument{fmt.Sprintf("the document exceeds %d bytes", MaxClientDocumentBytes)}
	}
	var m clientMetadata
	if err := json.Unmarshal(body, &m); err != nil {
		return Client{}, 0, &errClientDocument{"the document is not a JSON object of client metadata"}
	}
	if m.ClientID != id {
		return Client{}, 0, &errClientDocument{"the document's client_id differs from its URL"}
	}
	for _, u := range m.RedirectURIs {
		if bokat.CheckText(u, false) != "" {
			return Client{}, 0, &errClientDocument{"a redirect URI is not clean text"}
		}
	}
	u, _ := url.Parse(id)
	c, merr := m.publicClient(asciiHost(u.Hostname()), false)
	if merr != nil {
		return Client{}, 0, &errClientDocument{merr.description}
	}
	if c.Mode.Test() {
		// A document anyone can point at is a live client; a test client
		// registers itself (the registration endpoint's bokat_mode).
		return Client{}, 0, &errClientDocument{"a Client ID Metadata Document names a live client: register a test client at the registration endpoint with " + ModeMetadataMember + " test"}
	}
	c.ID = id
	c.Registration = ClientMetadata
	return c, cacheTTL(resp.Header.Get("Cache-Control")), nil
}

// cacheTTL is how long to keep a document: its max-age (no-store and
// no-cache count as zero), within the bounds.
func cacheTTL(cacheControl string) time.Duration {
	ttl := ClientDocumentDefaultTTL
	for _, d := range strings.Split(cacheControl, ",") {
		name, value, _ := strings.Cut(strings.TrimSpace(strings.ToLower(d)), "=")
		switch name {
		case "no-store", "no-cache":
			return ClientDocumentMinTTL
		case "max-age":
			if n, err := strconv.Atoi(strings.Trim(value, `"`)); err == nil && n >= 0 {
				ttl = time.Duration(min(n, 1<<30)) * time.Second
			}
		}
	}
	return min(max(ttl, ClientDocumentMinTTL), ClientDocumentMaxTTL)
}

// documentError tells whether err is a refused document.
func documentError(err error) bool {
	var de *errClientDocument
	return errors.As(err, &de)
}
