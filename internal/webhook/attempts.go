package webhook

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"bokat"
)

// Page sizes of the attempts list.
const (
	DefaultAttemptsLimit = 20
	MaxAttemptsLimit     = 100
)

// ListAttempts returns a page of up to limit (1 to MaxAttemptsLimit)
// attempts of deliveries to the principal's endpoint, newest first,
// continuing after cursor (empty: from the newest). An endpoint that is
// unknown or not the principal's answers webhook_endpoint_not_found; a
// cursor this server did not hand out, validation_failed.
func (s *Service) ListAttempts(ctx context.Context, p bokat.Principal, id, cursor string, limit int) (bokat.WebhookAttemptPage, error) {
	if !validEndpointID(id) {
		return bokat.WebhookAttemptPage{}, endpointNotFound()
	}
	if limit < 1 || limit > MaxAttemptsLimit {
		return bokat.WebhookAttemptPage{}, &bokat.Error{Code: bokat.CodeValidationFailed,
			Detail: fmt.Sprintf("limit must be an integer from 1 to %d.", MaxAttemptsLimit),
			Issues: []string{fmt.Sprintf("limit: must be from 1 to %d", MaxAttemptsLimit)}}
	}
	after, err := decodeCursor(cursor)
	if err != nil {
		return bokat.WebhookAttemptPage{}, &bokat.Error{Code: bokat.CodeValidationFailed,
			Detail: "The cursor is not one this API handed out.", Issues: []string{"cursor: not a valid cursor"},
			SafeNextStep: "Pass next_cursor from the previous page unchanged, or omit it to start at the newest attempt."}
	}
	// One row more than asked tells whether another page follows.
	rows, err := s.db.EndpointAttempts(ctx, p.ClientID, p.UserID, id, after, limit+1)
	if errors.Is(err, bokat.ErrNotFound) {
		return bokat.WebhookAttemptPage{}, endpointNotFound()
	}
	if err != nil {
		return bokat.WebhookAttemptPage{}, err
	}
	var page bokat.WebhookAttemptPage
	if len(rows) > limit {
		rows = rows[:limit]
		last := rows[limit-1]
		page.NextCursor = encodeCursor(AttemptPosition{AttemptedAt: last.AttemptedAt, DeliveryID: last.DeliveryID, Attempt: last.Attempt})
	}
	page.Attempts = make([]bokat.WebhookAttempt, len(rows))
	for i, r := range rows {
		page.Attempts[i] = bokat.WebhookAttempt{
			WebhookID: r.WebhookID, OutboxID: r.OutboxID, EventType: bokat.EventType(r.EventType), Attempt: r.Attempt,
			AttemptedAt: r.AttemptedAt, StatusCode: r.StatusCode, ErrorClass: errorClass(r.StatusCode, r.Error), Latency: r.Latency,
		}
	}
	return page, nil
}

// errorClass classifies a recorded attempt by its status and the error the
// Sender worded (see Sender.Deliver and Sender.describe).
func errorClass(status int, msg string) string {
	switch {
	case status >= 200 && status < 300:
		return ""
	case status != 0:
		return bokat.WebhookErrorHTTPStatus
	case strings.HasSuffix(msg, "(timeout)"):
		return bokat.WebhookErrorTimeout
	case strings.HasPrefix(msg, "destination refused at connect"):
		return bokat.WebhookErrorRefused
	case strings.HasPrefix(msg, "cannot unseal"), strings.HasPrefix(msg, "the endpoint URL is not usable"):
		return bokat.WebhookErrorInternal
	default:
		return bokat.WebhookErrorNetwork
	}
}

// A cursor is base64url of "<attempted_at ms>.<attempt>.<delivery id>":
// opaque to clients, who only pass it back.
func encodeCursor(p AttemptPosition) string {
	return base64.RawURLEncoding.EncodeToString([]byte(
		strconv.FormatInt(p.AttemptedAt.UnixMilli(), 10) + "." + strconv.Itoa(p.Attempt) + "." + p.DeliveryID))
}

func decodeCursor(c string) (AttemptPosition, error) {
	if c == "" {
		return AttemptPosition{}, nil
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(c)
	if err != nil {
		return AttemptPosition{}, err
	}
	parts := strings.SplitN(string(raw), ".", 3)
	if len(parts) != 3 || uuid.Validate(parts[2]) != nil {
		return AttemptPosition{}, errors.New("malformed cursor")
	}
	ms, err1 := strconv.ParseInt(parts[0], 10, 64)
	n, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil || ms < 0 || n < 1 {
		return AttemptPosition{}, errors.New("malformed cursor")
	}
	return AttemptPosition{AttemptedAt: time.UnixMilli(ms), DeliveryID: parts[2], Attempt: n}, nil
}
