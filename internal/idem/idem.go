// Package idem is the vocabulary of keyed writes: the idempotency key a
// write is made with, the outcome stored with it and answered again to a
// retry, and the fingerprint two requests with one key are compared by.
// The use cases take and return these; the store keeps them; the transport
// decides how an outcome is answered (its status, and how a replay is told).
package idem

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"bokat"
)

// Key identifies a keyed write: keys are scoped to the calling principal
// (Owner) and the operation. An empty Key makes the write unkeyed.
type Key struct {
	Owner     string
	Operation string
	Key       string
	// Mode is the realm of the principal (empty: live): a key of one realm
	// never replays a record of the other.
	Mode bokat.Mode
}

// Outcome is the stored result of a keyed write: the response body
// (without per-response metadata) that a replay answers again, and the id
// of the resource the write created or changed. It holds no transport
// status: that follows from the operation and whether the answer is a
// replay.
type Outcome struct {
	Body       []byte
	ResourceID string
}

// Fingerprint is the digest idempotency keys are compared by: the decoded
// request (strictly decoded, so member order and white space do not
// matter), marshalled as JSON without its key, and the id of the resource
// the write acts on (empty for a creation), so that one key cannot act on
// two resources. Stored keys hold this digest: changing how it is computed
// makes every retry of an earlier write fail as a reused key.
func Fingerprint(decoded any, resourceID string) (string, error) {
	raw, err := json.Marshal(decoded)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	h.Write([]byte(resourceID))
	h.Write([]byte{0})
	h.Write(raw)
	return hex.EncodeToString(h.Sum(nil)), nil
}
