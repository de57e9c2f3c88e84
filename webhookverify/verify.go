// Package webhookverify verifies Bokat webhook deliveries. It is meant for
// receivers (integrators) and depends on the standard library only.
//
// A delivery is a POST with three headers: Webhook-Id (the dedupe key: unique
// per delivery event, kept by retries, new on replay), Webhook-Timestamp
// (Unix seconds) and Webhook-Signature ("v1,<sig>", space-separated). <sig>
// is HMAC-SHA256 over "<Webhook-Id>.<Webhook-Timestamp>.<raw body>", sent
// twice: encoded base64url without padding (the contract's encoding) and
// standard base64 with padding (the Standard Webhooks encoding). Either
// matches, in its canonical form only.
//
// The HMAC key depends on the secret's form. A secret in the Standard
// Webhooks form, "whsec_" followed by padded standard base64 of 32 bytes (44
// characters, ending in "="), is keyed with those 32 decoded bytes. Any other
// secret, such as those issued before ("whsec_" followed by 43 base64url
// characters), is keyed with the bytes of the whole string, "whsec_" included.
//
// Verify the raw body bytes before parsing them, reject timestamps more than
// five minutes away from now, and deduplicate on the returned Webhook-Id.
package webhookverify

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// DefaultTolerance is how far Webhook-Timestamp may be from now: 300 seconds.
const DefaultTolerance = 300 * time.Second

// MaxBodyBytes is how much of a request body VerifyRequest reads.
const MaxBodyBytes = 1 << 20

// Errors of Verify. Each wrong delivery matches one of them with errors.Is.
var (
	ErrMissingHeader       = errors.New("webhookverify: missing Webhook-Id, Webhook-Timestamp or Webhook-Signature header")
	ErrBadTimestamp        = errors.New("webhookverify: Webhook-Timestamp is not a Unix time in seconds")
	ErrTimestampTooOld     = errors.New("webhookverify: Webhook-Timestamp is too old")
	ErrTimestampTooNew     = errors.New("webhookverify: Webhook-Timestamp is too far in the future")
	ErrNoMatchingSignature = errors.New("webhookverify: no matching v1 signature")
	ErrBodyTooLarge        = errors.New("webhookverify: request body is too large")
)

// Verifier verifies deliveries signed with one signing secret.
type Verifier struct {
	key       []byte
	tolerance time.Duration
	now       func() time.Time
}

// Option adjusts a Verifier.
type Option func(*Verifier)

// WithTolerance sets how far a timestamp may be from now (default
// DefaultTolerance).
func WithTolerance(d time.Duration) Option { return func(v *Verifier) { v.tolerance = d } }

// WithClock sets the clock timestamps are compared with (default time.Now).
func WithClock(now func() time.Time) Option { return func(v *Verifier) { v.now = now } }

// New returns a Verifier for the signing secret exactly as returned at
// registration ("whsec_" followed by 44 characters of standard base64, or by
// 43 base64url characters for secrets issued before).
func New(secret string, opts ...Option) (*Verifier, error) {
	if !strings.HasPrefix(secret, "whsec_") || len(secret) < len("whsec_")+32 {
		return nil, errors.New("webhookverify: the secret must be the whole whsec_... string shown at registration")
	}
	v := &Verifier{key: signingKey(secret), tolerance: DefaultTolerance, now: time.Now}
	for _, o := range opts {
		o(v)
	}
	return v, nil
}

// Verify checks a delivery's headers against its raw body and returns its
// Webhook-Id, the key to deduplicate on. Parse body only after Verify
// returned nil.
func (v *Verifier) Verify(header http.Header, body []byte) (webhookID string, err error) {
	id := header.Get("Webhook-Id")
	tsText := header.Get("Webhook-Timestamp")
	sigs := header.Get("Webhook-Signature")
	if id == "" || tsText == "" || sigs == "" {
		return "", ErrMissingHeader
	}
	ts, err := strconv.ParseInt(tsText, 10, 64)
	if err != nil {
		return "", ErrBadTimestamp
	}
	now := v.now().Unix()
	tol := int64(v.tolerance / time.Second)
	switch {
	case now-ts > tol:
		return "", ErrTimestampTooOld
	case ts-now > tol:
		return "", ErrTimestampTooNew
	}
	want := mac(v.key, id, tsText, body)
	for _, s := range strings.Fields(sigs) {
		version, sig, ok := strings.Cut(s, ",")
		if !ok || version != "v1" {
			continue
		}
		// Strict: only the canonical encoding of a signature matches; a
		// copy with other unused low bits in its last character does not.
		// The two encodings never both decode one string: padded standard
		// base64 of a digest ends in "=", which base64url here never has.
		got, err := base64.RawURLEncoding.Strict().DecodeString(sig)
		if err != nil {
			got, err = base64.StdEncoding.Strict().DecodeString(sig)
		}
		if err != nil {
			continue
		}
		if hmac.Equal(got, want) {
			return id, nil
		}
	}
	return "", ErrNoMatchingSignature
}

// VerifyRequest reads the request's body (at most MaxBodyBytes) and verifies
// it. It returns the Webhook-Id and the raw body to parse.
func (v *Verifier) VerifyRequest(r *http.Request) (webhookID string, body []byte, err error) {
	body, err = io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
	if err != nil {
		return "", nil, fmt.Errorf("webhookverify: read body: %w", err)
	}
	if len(body) > MaxBodyBytes {
		return "", nil, ErrBodyTooLarge
	}
	id, err := v.Verify(r.Header, body)
	if err != nil {
		return "", nil, err
	}
	return id, body, nil
}

func mac(key []byte, id, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + ts + "."))
	m.Write(body)
	return m.Sum(nil)
}

// signingKey returns the HMAC key of a signing secret, as the package
// comment says.
func signingKey(secret string) []byte {
	if rest, ok := strings.CutPrefix(secret, "whsec_"); ok && len(rest) == 44 {
		if key, err := base64.StdEncoding.Strict().DecodeString(rest); err == nil && len(key) == 32 {
			return key
		}
	}
	return []byte(secret)
}

// Sign returns the Webhook-Signature value Bokat sends for a delivery: the
// base64url signature, a space, and the standard base64 one. It lets
// receivers build signed deliveries in their own tests.
func Sign(secret, webhookID string, timestamp time.Time, body []byte) string {
	sum := mac(signingKey(secret), webhookID, strconv.FormatInt(timestamp.Unix(), 10), body)
	return "v1," + base64.RawURLEncoding.EncodeToString(sum) + " v1," + base64.StdEncoding.EncodeToString(sum)
}
