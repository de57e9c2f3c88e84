package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"bokat"
	"bokat/internal/auth"
)

// Webhooks is what the webhook operations need: endpoint management and
// replay, each acting only on the principal's own endpoints and events.
type Webhooks interface {
	RegisterEndpoint(ctx context.Context, p bokat.Principal, url string, types []bokat.EventType) (bokat.WebhookEndpoint, string, error)
	ListEndpoints(ctx context.Context, p bokat.Principal) ([]bokat.WebhookEndpoint, error)
	DeleteEndpoint(ctx context.Context, p bokat.Principal, id string) error
	Replay(ctx context.Context, p bokat.Principal, outboxID string) (bokat.WebhookReplay, error)
	SetEndpointEnabled(ctx context.Context, p bokat.Principal, id string, enabled bool) (bokat.WebhookEndpoint, error)
	RotateSecret(ctx context.Context, p bokat.Principal, id string) (bokat.WebhookSecretRotation, error)
	ListAttempts(ctx context.Context, p bokat.Principal, id, cursor string, limit int) (bokat.WebhookAttemptPage, error)
	Recover(ctx context.Context, p bokat.Principal, id string, since time.Time) (int, error)
}

// Wire types of the webhook operations.
type (
	wireWebhookEndpointCreate struct {
		URL        string   `json:"url"`
		EventTypes []string `json:"event_types"`
	}
	wireWebhookEndpoint struct {
		ID           string   `json:"id"`
		URL          string   `json:"url"`
		EventTypes   []string `json:"event_types"`
		SigningKeyID string   `json:"signing_key_id"`
		Enabled      bool     `json:"enabled"`
		CreatedAt    string   `json:"created_at"`
		UpdatedAt    string   `json:"updated_at"`
	}
	wireWebhookEndpointCreated struct {
		OK                     bool                `json:"ok"`
		Endpoint               wireWebhookEndpoint `json:"endpoint"`
		SigningSecret          string              `json:"signing_secret"`
		SigningSecretShownOnce bool                `json:"signing_secret_shown_once"`
	}
	wireWebhookSecretRotated struct {
		OK                      bool                `json:"ok"`
		Endpoint                wireWebhookEndpoint `json:"endpoint"`
		SigningSecret           string              `json:"signing_secret"`
		SigningSecretShownOnce  bool                `json:"signing_secret_shown_once"`
		PreviousSecretExpiresAt string              `json:"previous_secret_expires_at"`
	}
	wireWebhookAttempt struct {
		WebhookID   string  `json:"webhook_id"`
		OutboxID    string  `json:"outbox_id"`
		EventType   string  `json:"event_type"`
		Attempt     int     `json:"attempt"`
		AttemptedAt string  `json:"attempted_at"`
		StatusCode  *int    `json:"status_code"`
		ErrorClass  *string `json:"error_class"`
		LatencyMS   int64   `json:"latency_ms"`
	}
	wireWebhookAttemptList struct {
		OK         bool                 `json:"ok"`
		Attempts   []wireWebhookAttempt `json:"attempts"`
		NextCursor *string              `json:"next_cursor"`
	}
	wireWebhookRecover struct {
		Since string `json:"since"`
	}
	wireWebhookRecovered struct {
		OK     bool `json:"ok"`
		Queued int  `json:"queued"`
	}
	wireWebhookEndpointResponse struct {
		OK       bool                `json:"ok"`
		Endpoint wireWebhookEndpoint `json:"endpoint"`
	}
	wireWebhookEndpointList struct {
		OK        bool                  `json:"ok"`
		Endpoints []wireWebhookEndpoint `json:"endpoints"`
	}
	wireOK struct {
		OK bool `json:"ok"`
	}
	wireWebhookReplay struct {
		ID        string `json:"id"`
		BookingID string `json:"booking_id"`
		EventType string `json:"event_type"`
		Status    string `json:"status"`
		CreatedAt string `json:"created_at"`
	}
	wireWebhookReplayResponse struct {
		OK     bool              `json:"ok"`
		Replay wireWebhookReplay `json:"replay"`
	}
)

// utcTime formats an instant for the webhook resources.
func utcTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func toWireEndpoint(e bokat.WebhookEndpoint) wireWebhookEndpoint {
	types := make([]string, len(e.EventTypes))
	for i, t := range e.EventTypes {
		types[i] = string(t)
	}
	return wireWebhookEndpoint{
		ID: e.ID, URL: e.URL, EventTypes: types, SigningKeyID: e.SigningKeyID, Enabled: e.Enabled,
		CreatedAt: utcTime(e.CreatedAt), UpdatedAt: utcTime(e.UpdatedAt),
	}
}

func (s *Server) handleListWebhookEndpoints(w http.ResponseWriter, r *http.Request) error {
	eps, err := s.webhooks.ListEndpoints(r.Context(), auth.PrincipalFrom(r.Context()))
	if err != nil {
		return err
	}
	out := wireWebhookEndpointList{OK: true, Endpoints: make([]wireWebhookEndpoint, len(eps))}
	for i, e := range eps {
		out.Endpoints[i] = toWireEndpoint(e)
	}
	s.writeJSON(w, r, http.StatusOK, out)
	return nil
}

func (s *Server) handleCreateWebhookEndpoint(w http.ResponseWriter, r *http.Request) error {
	return s.withPrivateHint(s.createWebhookEndpoint(w, r))
}

// privateHint tells a developer how to register a local receiver.
const privateHint = "In development, start the server with --webhook-allow-private to let webhooks reach http:// " +
	"and private or loopback addresses (refused in production)."

// withPrivateHint adds privateHint to a refused registration that
// --webhook-allow-private would have admitted, in development without it:
// an http:// URL (refused by the contract's pattern) or a destination the
// guard refused as non-public or not on port 443.
func (s *Server) withPrivateHint(err error) error {
	var e *bokat.Error
	if s.production || s.webhookAllowPrivate || !errors.As(err, &e) {
		return err
	}
	var rej interface{ AllowPrivateWouldAdmit() bool }
	admissible := errors.As(e.Err, &rej) && rej.AllowPrivateWouldAdmit()
	for _, issue := range e.Issues {
		admissible = admissible || e.Code == bokat.CodeValidationFailed && strings.HasPrefix(issue, "url: must match")
	}
	if !admissible {
		return err
	}
	hinted := *e
	hinted.Detail = strings.TrimSpace(e.Detail + " " + privateHint)
	hinted.SafeNextStep = strings.TrimSpace(e.SafeNextStep + " " + privateHint)
	return &hinted
}

func (s *Server) createWebhookEndpoint(w http.ResponseWriter, r *http.Request) error {
	var in wireWebhookEndpointCreate
	if err := s.decodeWebhookEndpointCreate(r, &in); err != nil {
		return err
	}
	types := make([]bokat.EventType, len(in.EventTypes))
	for i, t := range in.EventTypes {
		types[i] = bokat.EventType(t)
	}
	ep, secret, err := s.webhooks.RegisterEndpoint(r.Context(), auth.PrincipalFrom(r.Context()), in.URL, types)
	if err != nil {
		return err
	}
	s.writeJSON(w, r, http.StatusCreated, wireWebhookEndpointCreated{
		OK: true, Endpoint: toWireEndpoint(ep), SigningSecret: secret, SigningSecretShownOnce: true,
	})
	return nil
}

// decodeWebhookEndpointCreate decodes the registration body. With
// --webhook-allow-private (development only) an http:// URL is let through:
// the body is validated by the one decoder with the scheme read as https,
// and the URL is then kept as sent.
func (s *Server) decodeWebhookEndpointCreate(r *http.Request, in *wireWebhookEndpointCreate) error {
	if !s.webhookAllowPrivate || s.production {
		return s.decode(r, in)
	}
	body, readErr := io.ReadAll(r.Body)
	plainHTTP := ""
	// Invalid UTF-8 is left for the decoder to refuse: re-encoding would
	// replace it.
	if readErr == nil && utf8.Valid(body) {
		var fields map[string]json.RawMessage
		var u string
		if json.Unmarshal(body, &fields) == nil && json.Unmarshal(fields["url"], &u) == nil && strings.HasPrefix(u, "http://") {
			plainHTTP = u
			fields["url"], _ = json.Marshal("https://" + strings.TrimPrefix(u, "http://"))
			body, _ = json.Marshal(fields)
		}
	}
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errorReader{readErr}))
	if err := s.decode(r, in); err != nil {
		return err
	}
	if plainHTTP != "" {
		in.URL = plainHTTP
	}
	return nil
}

// errorReader returns err, or io.EOF when err is nil.
type errorReader struct{ err error }

func (e errorReader) Read([]byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	return 0, io.EOF
}

func (s *Server) handleDeleteWebhookEndpoint(w http.ResponseWriter, r *http.Request) error {
	if err := s.webhooks.DeleteEndpoint(r.Context(), auth.PrincipalFrom(r.Context()), r.PathValue("endpoint_id")); err != nil {
		return err
	}
	s.writeJSON(w, r, http.StatusOK, wireOK{OK: true})
	return nil
}

// handleSetWebhookEndpointEnabled serves the enable and disable operations.
func (s *Server) handleSetWebhookEndpointEnabled(enabled bool) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		ep, err := s.webhooks.SetEndpointEnabled(r.Context(), auth.PrincipalFrom(r.Context()), r.PathValue("endpoint_id"), enabled)
		if err != nil {
			return err
		}
		s.writeJSON(w, r, http.StatusOK, wireWebhookEndpointResponse{OK: true, Endpoint: toWireEndpoint(ep)})
		return nil
	}
}

func (s *Server) handleRotateWebhookSecret(w http.ResponseWriter, r *http.Request) error {
	rot, err := s.webhooks.RotateSecret(r.Context(), auth.PrincipalFrom(r.Context()), r.PathValue("endpoint_id"))
	if err != nil {
		return err
	}
	s.writeJSON(w, r, http.StatusOK, wireWebhookSecretRotated{
		OK: true, Endpoint: toWireEndpoint(rot.Endpoint), SigningSecret: rot.Secret, SigningSecretShownOnce: true,
		PreviousSecretExpiresAt: utcTime(rot.PreviousSecretExpiresAt),
	})
	return nil
}

// attemptsLimitDefault is the page size when limit is not given.
const attemptsLimitDefault = 20

func (s *Server) handleListWebhookAttempts(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	for k, v := range q {
		if (k != "limit" && k != "cursor") || len(v) != 1 {
			// The name is not echoed (it is the caller's text), so the answer
			// is the same whichever offending parameter the map yields first.
			return &bokat.Error{Code: bokat.CodeValidationFailed, Detail: "Only one limit and one cursor query parameter are accepted.",
				Issues: []string{"query: only limit and cursor are accepted, each at most once"}}
		}
	}
	limit := attemptsLimitDefault
	if v, ok := q["limit"]; ok {
		n, err := strconv.Atoi(v[0])
		if err != nil {
			return &bokat.Error{Code: bokat.CodeValidationFailed, Detail: "limit must be an integer.",
				Issues: []string{"limit: must be an integer"}}
		}
		limit = n
	}
	page, err := s.webhooks.ListAttempts(r.Context(), auth.PrincipalFrom(r.Context()), r.PathValue("endpoint_id"), q.Get("cursor"), limit)
	if err != nil {
		return err
	}
	out := wireWebhookAttemptList{OK: true, Attempts: make([]wireWebhookAttempt, len(page.Attempts))}
	for i, a := range page.Attempts {
		wa := wireWebhookAttempt{WebhookID: a.WebhookID, OutboxID: a.OutboxID, EventType: string(a.EventType), Attempt: a.Attempt,
			AttemptedAt: utcTime(a.AttemptedAt), LatencyMS: a.Latency.Milliseconds()}
		if a.StatusCode != 0 {
			wa.StatusCode = &a.StatusCode
		}
		if a.ErrorClass != "" {
			wa.ErrorClass = &a.ErrorClass
		}
		out.Attempts[i] = wa
	}
	if page.NextCursor != "" {
		out.NextCursor = &page.NextCursor
	}
	s.writeJSON(w, r, http.StatusOK, out)
	return nil
}

func (s *Server) handleRecoverWebhookEndpoint(w http.ResponseWriter, r *http.Request) error {
	var in wireWebhookRecover
	if err := s.decode(r, &in); err != nil {
		return err
	}
	since, err := time.Parse(time.RFC3339Nano, in.Since)
	if err != nil {
		return &bokat.Error{Code: bokat.CodeValidationFailed, Detail: "since must be an RFC 3339 date-time.",
			Issues: []string{"since: must be an RFC 3339 date-time"}}
	}
	n, err := s.webhooks.Recover(r.Context(), auth.PrincipalFrom(r.Context()), r.PathValue("endpoint_id"), since)
	if err != nil {
		return err
	}
	s.writeJSON(w, r, http.StatusAccepted, wireWebhookRecovered{OK: true, Queued: n})
	return nil
}

func (s *Server) handleReplayWebhookEvent(w http.ResponseWriter, r *http.Request) error {
	rep, err := s.webhooks.Replay(r.Context(), auth.PrincipalFrom(r.Context()), r.PathValue("outbox_id"))
	if err != nil {
		return err
	}
	s.writeJSON(w, r, http.StatusAccepted, wireWebhookReplayResponse{OK: true, Replay: wireWebhookReplay{
		ID: rep.ID, BookingID: rep.BookingID, EventType: string(rep.EventType), Status: rep.Status,
		CreatedAt: utcTime(rep.CreatedAt),
	}})
	return nil
}
