package calsync

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"bokat/internal/webhook"
)

// Defaults of FetchConfig.
const (
	DefaultFetchTimeout = 20 * time.Second
	DefaultMaxFeedBytes = 4 << 20
	DefaultMaxRedirects = 3
)

// UserAgent is sent with every poll.
const UserAgent = "Bokat-Calendar-Sync/1.0"

// FetchConfig configures how feeds are read.
type FetchConfig struct {
	// Guard decides where a feed may be read from, as for webhooks: https
	// on port 443 to public addresses in production (checked on the
	// address and on every redirect, and again on the socket dialled);
	// with AllowPrivate (development) http and loopback too.
	Guard *webhook.Guard
	// Timeout bounds one poll, from connecting to the last byte.
	Timeout time.Duration
	// MaxBytes bounds a feed's body; a larger feed fails the poll.
	MaxBytes int64
	// MaxRedirects bounds the redirects followed.
	MaxRedirects int
	// TLS, when set, replaces the default TLS client configuration (tests
	// trust their own certificate authority with it).
	TLS *tls.Config
	// Dial, when set, replaces the guard's dialer: tests route a public
	// name to a local server with it, the guard still judging every URL.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// fetcher reads feeds over HTTP.
type fetcher struct {
	guard    *webhook.Guard
	client   *http.Client
	maxBytes int64
}

func newFetcher(cfg FetchConfig) (*fetcher, error) {
	if cfg.Guard == nil {
		return nil, errors.New("calsync: FetchConfig.Guard is required")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultFetchTimeout
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxFeedBytes
	}
	if cfg.MaxRedirects <= 0 {
		cfg.MaxRedirects = DefaultMaxRedirects
	}
	dial := cfg.Dial
	if dial == nil {
		dial = cfg.Guard.DialContext
	}
	transport := &http.Transport{
		Proxy:                  nil, // never through a proxy: the guard must see the real destination
		DialContext:            dial,
		TLSClientConfig:        cfg.TLS,
		TLSHandshakeTimeout:    cfg.Timeout,
		ResponseHeaderTimeout:  cfg.Timeout,
		MaxResponseHeaderBytes: 64 << 10,
		MaxIdleConns:           32,
		MaxIdleConnsPerHost:    4,
		IdleConnTimeout:        60 * time.Second,
		ForceAttemptHTTP2:      true,
	}
	f := &fetcher{guard: cfg.Guard, maxBytes: cfg.MaxBytes}
	f.client = &http.Client{
		Transport: transport,
		Timeout:   cfg.Timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > cfg.MaxRedirects {
				return &fetchError{summary: fmt.Sprintf("more than %d redirects", cfg.MaxRedirects)}
			}
			if _, err := cfg.Guard.CheckURL(req.Context(), req.URL.String()); err != nil {
				return &fetchError{summary: "redirect refused: " + reason(err)}
			}
			return nil
		},
	}
	return f, nil
}

// fetchError is a failed poll; summary never holds the feed's address.
type fetchError struct{ summary string }

func (e *fetchError) Error() string { return e.summary }

func reason(err error) string {
	var rej *webhook.RejectedError
	if errors.As(err, &rej) {
		return rej.Reason
	}
	var dial *webhook.DialRefusedError
	if errors.As(err, &dial) {
		return dial.Error()
	}
	return "the address is not allowed"
}

// fetched is a poll's answer.
type fetched struct {
	notModified        bool
	body               []byte
	etag, lastModified string
}

// fetch reads the feed at raw, conditionally on the validators when given.
// Errors are *fetchError, whose text holds no address.
func (f *fetcher) fetch(ctx context.Context, raw, etag, lastModified string) (fetched, error) {
	if _, err := f.guard.CheckURL(ctx, raw); err != nil {
		if ctx.Err() != nil {
			return fetched{}, &fetchError{summary: "the poll was interrupted"}
		}
		return fetched{}, &fetchError{summary: "address refused: " + reason(err)}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil {
		return fetched{}, &fetchError{summary: "the address cannot be read"}
	}
	req.Header.Set("User-Agent", UserAgent)
	req.Header.Set("Accept", "text/calendar, */*;q=0.5")
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	if lastModified != "" {
		req.Header.Set("If-Modified-Since", lastModified)
	}
	resp, err := f.client.Do(req)
	if err != nil {
		return fetched{}, &fetchError{summary: transportSummary(err)}
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotModified:
		return fetched{notModified: true, etag: etag, lastModified: lastModified}, nil
	case resp.StatusCode != http.StatusOK:
		return fetched{}, &fetchError{summary: fmt.Sprintf("the server answered HTTP %d", resp.StatusCode)}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, f.maxBytes+1))
	if err != nil {
		return fetched{}, &fetchError{summary: transportSummary(err)}
	}
	if int64(len(body)) > f.maxBytes {
		return fetched{}, &fetchError{summary: fmt.Sprintf("the calendar is larger than %d KiB", f.maxBytes>>10)}
	}
	return fetched{body: body, etag: resp.Header.Get("ETag"), lastModified: resp.Header.Get("Last-Modified")}, nil
}

// transportSummary describes a failed request without its URL.
func transportSummary(err error) string {
	var fe *fetchError
	if errors.As(err, &fe) {
		return fe.summary
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var dial *webhook.DialRefusedError
	switch {
	case errors.As(err, &dial):
		return dial.Error()
	case errors.Is(err, context.DeadlineExceeded), strings.Contains(err.Error(), "Client.Timeout"):
		return "the server did not answer in time"
	case errors.Is(err, context.Canceled):
		return "the poll was interrupted"
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return "the host name could not be resolved"
	}
	var certErr *tls.CertificateVerificationError
	if errors.As(err, &certErr) {
		return "the server's certificate is not valid"
	}
	return "the server could not be reached"
}
