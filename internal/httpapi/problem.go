package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"bokat"
	"bokat/internal/apidoc"
	"bokat/internal/auth"
)

// codeInfo is what the contract says about an error code: its HTTP status,
// a short title, and the page served at {base_url}/problems/<code>.
type codeInfo struct {
	Status int
	Title  string
	// Advice tells a client what to do about it.
	Advice string
}

// problem is what the problem type pages say about code.
func (info codeInfo) problem(code bokat.Code) apidoc.Problem {
	return apidoc.Problem{Code: code, Status: info.Status, Title: info.Title, Advice: info.Advice}
}

// codes maps every error code to its HTTP status: the one table of it.
var codes = map[bokat.Code]codeInfo{
	bokat.CodeInvalidRequest:               {400, "Invalid request", "The request could not be read (malformed JSON, trailing data, wrong parameter). Fix it; do not retry it unchanged."},
	bokat.CodeValidationFailed:             {400, "Validation failed", "One or more fields break the contract; `issues` names each. Fix the input; do not retry unchanged."},
	bokat.CodeConsentRequired:              {400, "Consent required", "The customer's explicit consent (`user_consent_confirmed: true`) is required before personal data is submitted, and their fresh confirmation (`user_confirmation_confirmed: true`) before a booking is cancelled or rescheduled. Ask the customer, then retry with it."},
	bokat.CodeTermsNotAccepted:             {400, "Terms not accepted", "The customer must accept the option's exact terms (`booking_terms_accepted: true`). Show the terms, ask, then retry."},
	bokat.CodeTermsVersionMismatch:         {400, "Terms version mismatch", "`booking_terms_version` must equal the option's `terms.version` exactly. Echo it unchanged."},
	bokat.CodePostcodeMismatch:             {400, "Postcode mismatch", "The location's postcode must equal the postcode the option was searched for. Search again for the right postcode."},
	bokat.CodeBookingOptionInvalid:         {400, "Booking option invalid", "The `booking_option_id` is not one this service issued, or it was altered. Pass option ids unchanged from a search."},
	bokat.CodeIdempotencyKeyConflict:       {400, "Idempotency key conflict", "The `Idempotency-Key` header and the body's `idempotency_key` differ. Send one key, or the same in both."},
	bokat.CodeUnauthorized:                 {401, "Unauthorized", "A valid credential is required: an OAuth access token or a partner token. Refresh authorization and retry."},
	bokat.CodeInsufficientScope:            {403, "Insufficient scope", "The credential lacks the scope this operation needs; the detail names it. Request that scope."},
	bokat.CodeForbidden:                    {403, "Forbidden", "The caller may not use this operation."},
	bokat.CodeNotFound:                     {404, "Not found", "No operation exists at this path. See /v1/openapi.json."},
	bokat.CodeBookingNotFound:              {404, "Booking not found", "No booking with this id is visible to the authenticated caller. Verify the id and the credential."},
	bokat.CodeWebhookEndpointNotFound:      {404, "Webhook endpoint not found", "No webhook endpoint with this id belongs to the caller."},
	bokat.CodeWebhookEventNotFound:         {404, "Webhook event not found", "No outbox event with this id belongs to the caller."},
	bokat.CodeMethodNotAllowed:             {405, "Method not allowed", "This path does not accept the method. See /v1/openapi.json."},
	bokat.CodeBookingOptionExpired:         {409, "Booking option expired", "The option's lifetime is over. Search again, show the fresh options, and get the customer's new explicit choice before confirming."},
	bokat.CodeBookingOptionUnavailable:     {409, "Booking option unavailable", "The slot is taken or the provider can no longer do it. Search again and get a new explicit choice."},
	bokat.CodeBookingOptionChanged:         {409, "Booking option changed", "The provider's price, terms or coverage changed since the search. Search again and get a new explicit choice."},
	bokat.CodeBookingNotActive:             {409, "Booking not active", "The booking is no longer confirmed (for example it was cancelled); the operation does not apply."},
	bokat.CodeIdempotencyKeyReused:         {409, "Idempotency key reused", "This idempotency key was already used with a different request. Use a new key for a new request."},
	bokat.CodeIdempotencyRequestInProgress: {409, "Idempotency request in progress", "A request with this key is still running. Retry after Retry-After with the same key."},
	bokat.CodeUnsupportedMediaType:         {415, "Unsupported media type", "Send the body as `Content-Type: application/json` in UTF-8 (a charset, when sent, must be utf-8)."},
	bokat.CodePayloadTooLarge:              {413, "Payload too large", "Request bodies are limited to 64 KiB."},
	bokat.CodeUnsupportedVertical:          {422, "Unsupported vertical", "The vertical is not bookable; `supported_vertical_ids` lists those that are."},
	bokat.CodeUnsupportedJobType:           {422, "Unsupported job type", "The job type is not one of the vertical's; `accepted_job_type_ids` lists them."},
	bokat.CodeWebhookDestinationRejected:   {422, "Webhook destination rejected", "Webhook URLs must be public HTTPS on port 443 and must not resolve to private, loopback, link-local or other internal addresses."},
	bokat.CodeWebhookEndpointDisabled:      {409, "Webhook endpoint disabled", "The endpoint is disabled, so nothing can be queued to it. Enable it, then try again."},
	bokat.CodeWebhookEndpointLimitReached:  {422, "Webhook endpoint limit reached", "A client may register at most 20 webhook endpoints. Delete one it no longer uses, then register again."},
	bokat.CodeRateLimited:                  {429, "Rate limited", "Too many requests. Wait for Retry-After; retry writes only with the same idempotency key."},
	bokat.CodeInternalError:                {500, "Internal error", "Something failed on our side. Retry writes only with the same idempotency key; report the api_request_id if it persists."},
	bokat.CodeOptionSigningNotConfigured:   {503, "Option signing not configured", "The operator has not configured booking-option signing keys. Retry later."},
	bokat.CodePersistenceUnavailable:       {503, "Persistence unavailable", "The booking store cannot be reached. Obey Retry-After; retry writes only with the same idempotency key."},
	bokat.CodeProductionTokenNotConfigured: {503, "Production token not configured", "The operator has not created a partner credential yet. Retry later."},
}

// statusOf returns the HTTP status of a code.
func statusOf(c bokat.Code) int {
	if info, ok := codes[c]; ok {
		return info.Status
	}
	return http.StatusInternalServerError
}

// asAPIError turns any error into the *bokat.Error the caller sees. Store
// outages become persistence_unavailable; anything unknown becomes
// internal_error (the cause is kept for the log only).
func asAPIError(err error) *bokat.Error {
	var e *bokat.Error
	if errors.As(err, &e) {
		return e
	}
	if errors.Is(err, bokat.ErrUnavailable) {
		return &bokat.Error{Code: bokat.CodePersistenceUnavailable, Detail: "The booking store is unavailable right now.",
			RetryAfter: 5 * time.Second, Err: err}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &bokat.Error{Code: bokat.CodePersistenceUnavailable, Detail: "The request timed out reaching the booking store.",
			RetryAfter: 5 * time.Second, Err: err}
	}
	return &bokat.Error{Code: bokat.CodeInternalError, Detail: "An internal error occurred.", Err: err}
}

// problemBody is the wire shape of a v1 error (application/problem+json).
func (s *Server) problemBody(r *http.Request, e *bokat.Error, status int) map[string]any {
	info := codes[e.Code]
	title := info.Title
	if title == "" {
		title = string(e.Code)
	}
	body := map[string]any{
		"type":     s.baseURL + "/problems/" + string(e.Code),
		"title":    title,
		"status":   status,
		"detail":   e.Detail,
		"instance": r.URL.EscapedPath(),
		"code":     string(e.Code),
		"ok":       false,
		"error":    string(e.Code),
	}
	s.addErrorExtras(body, e)
	return body
}

// legacyErrorBody is the wire shape of an error on the deprecated
// /api/public paths (PublicRequestError).
func (s *Server) legacyErrorBody(e *bokat.Error, status int) map[string]any {
	body := map[string]any{
		"ok":     false,
		"error":  string(e.Code),
		"status": status,
	}
	if e.Detail != "" {
		body["detail"] = e.Detail
	}
	s.addErrorExtras(body, e)
	return body
}

func (s *Server) addErrorExtras(body map[string]any, e *bokat.Error) {
	if len(e.Issues) > 0 {
		body["issues"] = e.Issues
	}
	if e.SafeNextStep != "" {
		body["safe_next_step"] = e.SafeNextStep
	}
	if e.OptionRefreshRequired {
		body["option_refresh_required"] = true
	}
	for k, v := range e.Extra {
		if _, taken := body[k]; !taken {
			body[k] = v
		}
	}
}

// writeError answers err in the route's error shape, logging internal
// failures once with their cause.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	e := asAPIError(err)
	status := statusOf(e.Code)
	info := requestInfoFrom(r.Context())
	if status >= 500 && !configurationState(e.Code) {
		s.log.ErrorContext(r.Context(), "request failed", "code", string(e.Code), "error", errString(e.Err),
			"api_request_id", info.id, "trace_id", info.traceID)
	}
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int((e.RetryAfter+time.Second-1)/time.Second)))
	}
	if status == http.StatusUnauthorized || status == http.StatusForbidden {
		s.setAuthenticateHeader(w, e)
	}
	if info.legacy {
		s.writeJSON(w, r, status, s.legacyErrorBody(e, status))
		return
	}
	w.Header().Set("Content-Type", "application/problem+json")
	s.writeJSON(w, r, status, s.problemBody(r, e, status))
}

func (s *Server) setAuthenticateHeader(w http.ResponseWriter, e *bokat.Error) {
	v := fmt.Sprintf(`Bearer realm="bokat", resource_metadata=%q`, s.baseURL+"/.well-known/oauth-protected-resource")
	switch e.Code {
	case bokat.CodeUnauthorized:
		// RFC 6750 section 3.1: no error code when no credential was sent.
		if errors.Is(e, auth.ErrInvalidCredential) {
			v += `, error="invalid_token"`
		}
	case bokat.CodeInsufficientScope:
		if scope, ok := e.Extra["required_scope"].(string); ok {
			v += fmt.Sprintf(`, error="insufficient_scope", scope=%q`, scope)
		}
	default:
		return
	}
	w.Header().Set("WWW-Authenticate", v)
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func (s *Server) handleProblemPage(w http.ResponseWriter, r *http.Request) error {
	code := bokat.Code(r.PathValue("code"))
	info, ok := codes[code]
	if !ok {
		return bokat.Errorf(bokat.CodeNotFound, "no problem type %q is documented", code)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	return apidoc.WriteProblemPage(w, info.problem(code), s.baseURL)
}

func (s *Server) handleProblemIndex(w http.ResponseWriter, r *http.Request) error {
	ps := make([]apidoc.Problem, 0, len(codes))
	for c, info := range codes {
		ps = append(ps, info.problem(c))
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	return apidoc.WriteProblemIndex(w, ps, s.baseURL)
}
