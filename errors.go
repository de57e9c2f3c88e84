package bokat

import (
	"errors"
	"fmt"
	"time"
)

// Code is a stable, documented, machine-readable error code. Codes match
// ^[a-z0-9_]+$ and are served as problem types under {base_url}/problems/<code>.
type Code string

// The error codes of the public contract. They are stable: integrators switch
// on them. The HTTP status of each lives in exactly one table in the HTTP layer.
const (
	CodeInvalidRequest               Code = "invalid_request"
	CodeValidationFailed             Code = "validation_failed"
	CodeUnsupportedVertical          Code = "unsupported_vertical"
	CodeUnsupportedJobType           Code = "unsupported_job_type"
	CodeConsentRequired              Code = "consent_required"
	CodeTermsNotAccepted             Code = "terms_not_accepted"
	CodeTermsVersionMismatch         Code = "terms_version_mismatch"
	CodePostcodeMismatch             Code = "postcode_mismatch"
	CodeBookingOptionInvalid         Code = "booking_option_invalid"
	CodeBookingOptionExpired         Code = "booking_option_expired"
	CodeBookingOptionUnavailable     Code = "booking_option_unavailable"
	CodeBookingOptionChanged         Code = "booking_option_changed"
	CodeBookingNotFound              Code = "booking_not_found"
	CodeBookingNotActive             Code = "booking_not_active"
	CodeIdempotencyKeyReused         Code = "idempotency_key_reused"
	CodeIdempotencyRequestInProgress Code = "idempotency_request_in_progress"
	CodeIdempotencyKeyConflict       Code = "idempotency_key_conflict"
	CodeUnauthorized                 Code = "unauthorized"
	CodeInsufficientScope            Code = "insufficient_scope"
	CodeForbidden                    Code = "forbidden"
	CodeNotFound                     Code = "not_found"
	CodeMethodNotAllowed             Code = "method_not_allowed"
	CodeUnsupportedMediaType         Code = "unsupported_media_type"
	CodePayloadTooLarge              Code = "payload_too_large"
	CodeRateLimited                  Code = "rate_limited"
	CodeOptionSigningNotConfigured   Code = "option_signing_not_configured"
	CodePersistenceUnavailable       Code = "persistence_unavailable"
	CodeProductionTokenNotConfigured Code = "production_token_not_configured"
	CodeWebhookDestinationRejected   Code = "webhook_destination_rejected"
	CodeWebhookEndpointNotFound      Code = "webhook_endpoint_not_found"
	CodeWebhookEventNotFound         Code = "webhook_event_not_found"
	CodeWebhookEndpointLimitReached  Code = "webhook_endpoint_limit_reached"
	CodeWebhookEndpointDisabled      Code = "webhook_endpoint_disabled"
	CodeInternalError                Code = "internal_error"
)

// Error is a failure the API reports to its caller. Detail must never hold
// secrets or customer contact data: it is shown to the caller and may be logged.
type Error struct {
	Code   Code
	Detail string
	// Issues lists each failing field, e.g. "customer.email: must be a valid e-mail address".
	Issues []string
	// SafeNextStep tells an assistant what it may do next.
	SafeNextStep string
	// OptionRefreshRequired means: search fresh options before retrying.
	OptionRefreshRequired bool
	// RetryAfter, when positive, is sent as the Retry-After header.
	RetryAfter time.Duration
	// Extra holds further documented members of the error body, such as
	// accepted_job_type_ids or consent_required_before_create.
	Extra map[string]any
	// Err is the underlying cause; it is logged, never shown.
	Err error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Detail, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Detail)
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with the code and a formatted detail.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Detail: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of err when it is, or wraps, an *Error, and
// CodeInternalError otherwise.
func ErrorCode(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternalError
}

// ErrUnavailable marks a failure to reach the store. The HTTP layer answers
// 503 persistence_unavailable with Retry-After.
var ErrUnavailable = errors.New("store unavailable")

// ErrNotFound is returned by lookups that find nothing.
var ErrNotFound = errors.New("not found")

// ErrConflict is returned when a write violates a uniqueness or exclusion rule.
var ErrConflict = errors.New("conflict")
