package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"bokat"
)

// SecretPrefix starts every signing secret.
const SecretPrefix = bokat.WebhookSecretPrefix

// NewSigningSecret returns a fresh signing secret in the Standard Webhooks
// form: "whsec_" followed by standard base64 (with padding) of 32 random
// bytes. Its HMAC key is the decoded bytes (see SigningKey).
func NewSigningSecret() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err)) // cannot happen on supported platforms
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(b)
}

// SigningKey returns the HMAC key of a signing secret. A secret issued in the
// Standard Webhooks form ("whsec_" + 44 characters of padded standard base64
// of 32 bytes) is keyed with the decoded bytes. Any other secret, such as
// those issued before ("whsec_" + 43 characters of unpadded base64url, which
// never decode as padded standard base64), is keyed with the bytes of the
// whole string, "whsec_" included.
func SigningKey(secret string) []byte {
	if rest, ok := strings.CutPrefix(secret, SecretPrefix); ok && len(rest) == 44 {
		if key, err := base64.StdEncoding.Strict().DecodeString(rest); err == nil && len(key) == 32 {
			return key
		}
	}
	return []byte(secret)
}

// newSigningKeyID returns the id naming one version of an endpoint's secret.
func newSigningKeyID() string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err))
	}
	return bokat.SigningKeyIDPrefix + hex.EncodeToString(b)
}

// Sign returns the Webhook-Signature value of a delivery: the HMAC-SHA256,
// keyed with SigningKey(secret), over "<webhookID>.<timestamp>.<body>",
// twice, space-separated: first "v1," + base64url without padding (the
// contract's encoding), then "v1," + standard base64 with padding (the one
// Standard Webhooks libraries compare). body must be the exact bytes sent.
func Sign(secret, webhookID string, timestamp int64, body []byte) string {
	m := hmac.New(sha256.New, SigningKey(secret))
	m.Write([]byte(webhookID))
	m.Write([]byte{'.'})
	m.Write(strconv.AppendInt(nil, timestamp, 10))
	m.Write([]byte{'.'})
	m.Write(body)
	sum := m.Sum(nil)
	return "v1," + base64.RawURLEncoding.EncodeToString(sum) + " v1," + base64.StdEncoding.EncodeToString(sum)
}
