package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strconv"
)

// SecretPrefix starts every signing secret.
const SecretPrefix = "whsec_"

// NewSigningSecret returns a fresh signing secret: "whsec_" followed by 32
// random bytes in base64url without padding.
func NewSigningSecret() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err)) // cannot happen on supported platforms
	}
	return SecretPrefix + base64.RawURLEncoding.EncodeToString(b)
}

// newSigningKeyID returns the id naming one version of an endpoint's secret.
func newSigningKeyID() string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err))
	}
	return "whk_" + hex.EncodeToString(b)
}

// Sign returns the Webhook-Signature value of a delivery: "v1," followed by
// base64url without padding of HMAC-SHA256, keyed with the bytes of the
// secret string exactly as shown at registration, over
// "<webhookID>.<timestamp>.<body>". body must be the exact bytes sent.
func Sign(secret, webhookID string, timestamp int64, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(webhookID))
	m.Write([]byte{'.'})
	m.Write(strconv.AppendInt(nil, timestamp, 10))
	m.Write([]byte{'.'})
	m.Write(body)
	return "v1," + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}
