package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"

	"bokat"
	"bokat/internal/auth"
	"bokat/internal/booking"
	"bokat/internal/idem"
)

// The keyed-write path: confirm, cancel, reschedule and request creation
// read their body, check its flags, decode it, take its idempotency key,
// fingerprint it, call their use case once and answer the stored outcome.
// A handler states only what differs (keyedWrite) and maps the decoded
// body to its use case's input.

// keyedBody is a decoded write body that carries its idempotency key.
type keyedBody interface {
	// takeIdempotencyKey returns the body's key and clears it: the key is
	// not part of what it identifies.
	takeIdempotencyKey() string
}

func (in *confirmRequestWire) takeIdempotencyKey() string    { return take(&in.IdempotencyKey) }
func (in *cancelRequestWire) takeIdempotencyKey() string     { return take(&in.IdempotencyKey) }
func (in *rescheduleRequestWire) takeIdempotencyKey() string { return take(&in.IdempotencyKey) }
func (in *createRequestBody) takeIdempotencyKey() string     { return take(&in.IdempotencyKey) }

func take(s *string) string {
	v := *s
	*s = ""
	return v
}

// keyedWrite describes one keyed write.
type keyedWrite struct {
	// operation names the write in its idempotency key.
	operation string
	// bookingID is the booking the write acts on (empty for a creation);
	// it is part of the fingerprint, so one key cannot act on two bookings.
	bookingID string
	// precheck sees the raw body before schema validation, so that a
	// missing consent or confirmation is answered with its own code and
	// the personal data in the body is not processed at all without it.
	// It applies the use case's own consent rule.
	precheck func(body []byte) error
	// headerKey accepts the key in the Idempotency-Key header too (it must
	// then equal the body's, if both are sent).
	headerKey bool
	// status answers the write (HTTP 201 for a creation, 200 for a
	// change); the stored outcome holds only the body.
	status int
	// replayInBody answers a replay with HTTP 200 and idempotent_replay
	// rewritten to true; otherwise a replay repeats status and the stored
	// body. Either way the header Idempotent-Replayed tells it.
	replayInBody bool
	// counted is called once for a write that was not a replay.
	counted func()
}

// keyedCall runs the use case of a keyed write with the principal, the
// idempotency key and the fingerprint; it returns the outcome and whether
// it is a replay.
type keyedCall[B any] func(p bokat.Principal, in *B, key idem.Key, fingerprint string) (idem.Outcome, bool, error)

// serveKeyed serves a keyed write: read the body, precheck it, decode it
// into B, take its key, fingerprint it, call once, count and answer.
func serveKeyed[B any, PB interface {
	*B
	keyedBody
}](s *Server, w http.ResponseWriter, r *http.Request, kw keyedWrite, call keyedCall[B]) error {
	body, err := readJSONBody(r)
	if err != nil {
		return err
	}
	if kw.precheck != nil {
		if err := kw.precheck(body); err != nil {
			return err
		}
	}
	var in B
	if err := s.decodeBody(r, body, &in); err != nil {
		return err
	}
	key := PB(&in).takeIdempotencyKey()
	if kw.headerKey {
		if key, err = headerOrBodyKey(r, key); err != nil {
			return err
		}
	}
	fp, err := idem.Fingerprint(in, kw.bookingID)
	if err != nil {
		return err
	}
	p := auth.PrincipalFrom(r.Context())
	out, replay, err := call(p, &in, idem.Key{Owner: p.OwnerKey(), Operation: kw.operation, Key: key, Mode: p.Realm()}, fp)
	if err != nil {
		return err
	}
	if !replay && kw.counted != nil && !p.Realm().Test() {
		kw.counted()
	}
	return s.writeOutcome(w, r, kw, out, replay)
}

// headerOrBodyKey is the key of a write that takes it in the
// Idempotency-Key header or the body.
func headerOrBodyKey(r *http.Request, bodyKey string) (string, error) {
	headerKey := r.Header.Get("Idempotency-Key")
	if headerKey != "" && bodyKey != "" && headerKey != bodyKey {
		return "", &bokat.Error{Code: bokat.CodeIdempotencyKeyConflict,
			Detail: "The Idempotency-Key header and the body's idempotency_key differ.",
			Issues: []string{"Idempotency-Key (header): differs from idempotency_key in the body"}}
	}
	if headerKey != "" {
		return headerKey, nil
	}
	return bodyKey, nil
}

// bookingConsent is the precheck of the booking write op: the use case's
// consent rule (booking.CheckConsent) applied to the flags of the raw body,
// each of which counts only as the JSON literal true. A body that is not a
// JSON object passes: schema validation reports it.
func bookingConsent(op string) func([]byte) error {
	return func(body []byte) error {
		var f struct {
			UserConsent      json.RawMessage `json:"user_consent_confirmed"`
			UserConfirmation json.RawMessage `json:"user_confirmation_confirmed"`
			TermsAccepted    json.RawMessage `json:"booking_terms_accepted"`
		}
		if json.Unmarshal(body, &f) != nil {
			return nil
		}
		return booking.CheckConsent(op, booking.ConsentFlags{UserConsent: isTrue(f.UserConsent),
			UserConfirmation: isTrue(f.UserConfirmation), TermsAccepted: isTrue(f.TermsAccepted)})
	}
}

func isTrue(raw json.RawMessage) bool { return string(raw) == "true" }

// writeOutcome answers a keyed write: the stored body with the write's
// status, and for a replay the header Idempotent-Replayed; with
// replayInBody a replay answers HTTP 200 with idempotent_replay rewritten
// to true.
func (s *Server) writeOutcome(w http.ResponseWriter, r *http.Request, kw keyedWrite, out idem.Outcome, replay bool) error {
	if !replay || !kw.replayInBody {
		if replay {
			w.Header().Set("Idempotent-Replayed", "true")
		}
		s.writeJSON(w, r, kw.status, json.RawMessage(out.Body))
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(out.Body, &m); err != nil {
		return fmt.Errorf("stored response of an idempotent write is not a JSON object: %w", err)
	}
	m["idempotent_replay"] = json.RawMessage("true")
	w.Header().Set("Idempotent-Replayed", "true")
	s.writeJSON(w, r, http.StatusOK, m)
	return nil
}
