package httpapi

import (
	"net/http"
	"net/url"
	"strings"

	"bokat"
)

// authMode is a route's credential requirement.
type authMode int

const (
	// authNone: a credential is optional; when sent it must be valid.
	authNone authMode = iota
	// authRequired: any credential form with the route's scope.
	authRequired
	// authPartnerOnly: only the partner forms (the deprecated paths).
	authPartnerOnly
)

// route is one operation of the surface.
type route struct {
	method  string
	pattern string
	auth    authMode
	scope   bokat.Scope
	// contract is the contract_version the route's bodies carry.
	contract string
	// successor is set on deprecated paths: the v1 path that replaces them.
	successor string
	// needsPartner: in production the route answers 503
	// production_token_not_configured until a partner credential exists.
	needsPartner bool
	// rate is the route's rate-limit class (search, writes, reads); the zero
	// value classes GET and HEAD as reads and every other method as writes.
	rate    rateClass
	handler handlerFunc
}

// routes is the whole HTTP surface in one table.
func (s *Server) routes() []route {
	const (
		bookings = bokat.BookingsContractVersion
		requests = bokat.RequestsContractVersion
	)
	return []route{
		{method: http.MethodGet, pattern: "/v1/capabilities", contract: requests, rate: rateReads, handler: s.handleCapabilities(false)},
		{method: http.MethodGet, pattern: "/v1/openapi.json", contract: bookings, rate: rateReads, handler: s.handleOpenAPI},
		{method: http.MethodGet, pattern: "/llms.txt", contract: bookings, rate: rateReads, handler: s.handleLLMsText},
		{method: http.MethodGet, pattern: "/docs", contract: bookings, rate: rateReads, handler: s.handleDocs},
		{method: http.MethodGet, pattern: "/problems/{code}", contract: bookings, rate: rateReads, handler: s.handleProblemPage},
		{method: http.MethodGet, pattern: "/problems", contract: bookings, rate: rateReads, handler: s.handleProblemIndex},
		{method: http.MethodPost, pattern: "/v1/booking-options", contract: bookings, rate: rateSearch, handler: s.handleSearch},
		{method: http.MethodGet, pattern: "/terms/{service_id}", contract: bookings, rate: rateReads, handler: s.handleTerms},
		{method: http.MethodPost, pattern: "/v1/requests", auth: authRequired, scope: bokat.ScopeRequestsCreate, contract: requests, handler: s.handleCreateRequest},
		{method: http.MethodPost, pattern: "/v1/bookings", auth: authRequired, scope: bokat.ScopeBookingsConfirm, contract: bookings, handler: s.handleConfirm},
		{method: http.MethodGet, pattern: "/v1/bookings/{booking_id}", auth: authRequired, scope: bokat.ScopeBookingsRead, contract: bookings, handler: s.handleBookingStatus(false)},
		{method: http.MethodPost, pattern: "/v1/bookings/{booking_id}/cancel", auth: authRequired, scope: bokat.ScopeBookingsCancel, contract: bookings, handler: s.handleCancel},
		{method: http.MethodPost, pattern: "/v1/bookings/{booking_id}/reschedule", auth: authRequired, scope: bokat.ScopeBookingsReschedule, contract: bookings, handler: s.handleReschedule},
		{method: http.MethodPost, pattern: "/v1/bookings/{booking_id}/booking-options", auth: authRequired, scope: bokat.ScopeBookingsReschedule, contract: bookings, rate: rateSearch, handler: s.handleBookingOptions},
		// Providers' calendar feeds: the secret token in the path is the credential.
		{method: http.MethodGet, pattern: "/calendar/{provider_id}/{feed}", contract: bookings, handler: s.handleCalendarFeed},

		{method: http.MethodGet, pattern: "/v1/webhook-endpoints", auth: authRequired, scope: bokat.ScopeWebhooksManage, contract: bookings, handler: s.handleListWebhookEndpoints},
		{method: http.MethodPost, pattern: "/v1/webhook-endpoints", auth: authRequired, scope: bokat.ScopeWebhooksManage, contract: bookings, handler: s.handleCreateWebhookEndpoint},
		{method: http.MethodDelete, pattern: "/v1/webhook-endpoints/{endpoint_id}", auth: authRequired, scope: bokat.ScopeWebhooksManage, contract: bookings, handler: s.handleDeleteWebhookEndpoint},
		{method: http.MethodPost, pattern: "/v1/webhook-endpoints/{endpoint_id}/enable", auth: authRequired, scope: bokat.ScopeWebhooksManage, contract: bookings, handler: s.handleSetWebhookEndpointEnabled(true)},
		{method: http.MethodPost, pattern: "/v1/webhook-endpoints/{endpoint_id}/disable", auth: authRequired, scope: bokat.ScopeWebhooksManage, contract: bookings, handler: s.handleSetWebhookEndpointEnabled(false)},
		{method: http.MethodPost, pattern: "/v1/webhook-endpoints/{endpoint_id}/rotate-secret", auth: authRequired, scope: bokat.ScopeWebhooksManage, contract: bookings, handler: s.handleRotateWebhookSecret},
		{method: http.MethodGet, pattern: "/v1/webhook-endpoints/{endpoint_id}/deliveries", auth: authRequired, scope: bokat.ScopeWebhooksManage, contract: bookings, handler: s.handleListWebhookAttempts},
		{method: http.MethodPost, pattern: "/v1/webhook-endpoints/{endpoint_id}/recover", auth: authRequired, scope: bokat.ScopeWebhooksManage, contract: bookings, handler: s.handleRecoverWebhookEndpoint},
		{method: http.MethodPost, pattern: "/v1/webhook-events/{outbox_id}/replay", auth: authRequired, scope: bokat.ScopeWebhooksManage, contract: bookings, handler: s.handleReplayWebhookEvent},

		// The provider API: provider tokens only, for their own provider (providerapi.go).
		{method: http.MethodGet, pattern: "/v1/provider/bookings", auth: authRequired, scope: bokat.ScopeProviderBookingsRead, contract: bookings, rate: rateReads, handler: s.handleProviderBookings},
		{method: http.MethodGet, pattern: "/v1/provider/bookings/{booking_id}", auth: authRequired, scope: bokat.ScopeProviderBookingsRead, contract: bookings, rate: rateReads, handler: s.handleProviderBooking},
		{method: http.MethodPost, pattern: "/v1/provider/bookings/{booking_id}/acknowledge", auth: authRequired, scope: bokat.ScopeProviderBookingsWrite, contract: bookings, handler: s.handleProviderAcknowledge},
		{method: http.MethodPost, pattern: "/v1/provider/bookings/{booking_id}/flag", auth: authRequired, scope: bokat.ScopeProviderBookingsWrite, contract: bookings, handler: s.handleProviderFlag},
		{method: http.MethodPost, pattern: "/v1/provider/bookings/{booking_id}/cancel", auth: authRequired, scope: bokat.ScopeProviderBookingsWrite, contract: bookings, handler: s.handleProviderCancel},
		{method: http.MethodGet, pattern: "/v1/provider/blocks", auth: authRequired, scope: bokat.ScopeProviderCalendarWrite, contract: bookings, rate: rateReads, handler: s.handleProviderBlocks},
		{method: http.MethodPost, pattern: "/v1/provider/blocks", auth: authRequired, scope: bokat.ScopeProviderCalendarWrite, contract: bookings, handler: s.handleProviderAddBlock},
		{method: http.MethodPost, pattern: "/v1/provider/blocks/{block_id}/remove", auth: authRequired, scope: bokat.ScopeProviderCalendarWrite, contract: bookings, handler: s.handleProviderRemoveBlock},
		{method: http.MethodGet, pattern: "/v1/provider/hours", auth: authRequired, scope: bokat.ScopeProviderSupplyWrite, contract: bookings, rate: rateReads, handler: s.handleProviderHours},
		{method: http.MethodPut, pattern: "/v1/provider/hours", auth: authRequired, scope: bokat.ScopeProviderSupplyWrite, contract: bookings, handler: s.handleProviderPutHours},
		{method: http.MethodGet, pattern: "/v1/provider/prices", auth: authRequired, scope: bokat.ScopeProviderSupplyWrite, contract: bookings, rate: rateReads, handler: s.handleProviderPrices},
		{method: http.MethodPut, pattern: "/v1/provider/prices", auth: authRequired, scope: bokat.ScopeProviderSupplyWrite, contract: bookings, handler: s.handleProviderPutPrices},
		{method: http.MethodPut, pattern: "/v1/provider/postcodes", auth: authRequired, scope: bokat.ScopeProviderSupplyWrite, contract: bookings, handler: s.handleProviderPutPostcodes},
		{method: http.MethodPut, pattern: "/v1/provider/pause", auth: authRequired, scope: bokat.ScopeProviderCalendarWrite, contract: bookings, handler: s.handleProviderPause},
		{method: http.MethodGet, pattern: "/v1/provider/calendars", auth: authRequired, scope: bokat.ScopeProviderCalendarWrite, contract: bookings, rate: rateReads, handler: s.handleProviderCalendars},
		{method: http.MethodPost, pattern: "/v1/provider/calendars", auth: authRequired, scope: bokat.ScopeProviderCalendarWrite, contract: bookings, handler: s.handleProviderAddCalendar},
		{method: http.MethodPatch, pattern: "/v1/provider/calendars/{feed_id}", auth: authRequired, scope: bokat.ScopeProviderCalendarWrite, contract: bookings, handler: s.handleProviderCalendarRule},
		{method: http.MethodDelete, pattern: "/v1/provider/calendars/{feed_id}", auth: authRequired, scope: bokat.ScopeProviderCalendarWrite, contract: bookings, handler: s.handleProviderRemoveCalendar},
		{method: http.MethodGet, pattern: "/v1/provider/calendar-conflicts", auth: authRequired, scope: bokat.ScopeProviderCalendarWrite, contract: bookings, rate: rateReads, handler: s.handleProviderCalendarConflicts},
		// The caller's events of its realm, as webhooks carry them (docs/testing.md).
		{method: http.MethodGet, pattern: "/v1/events", auth: authRequired, scope: bokat.ScopeBookingsRead, contract: bookings, rate: rateReads, handler: s.handleEvents},
		// Test mode (docs/testing.md): test credentials only.
		{method: http.MethodGet, pattern: "/v1/test/messages", auth: authRequired, scope: bokat.ScopeBookingsRead, contract: bookings, rate: rateReads, handler: s.handleTestMessages},
		{method: http.MethodGet, pattern: "/v1/test/clock", auth: authRequired, scope: bokat.ScopeBookingsRead, contract: bookings, rate: rateReads, handler: s.handleTestClock},
		{method: http.MethodPost, pattern: "/v1/test/clock/advance", auth: authRequired, scope: bokat.ScopeBookingsRead, contract: bookings, handler: s.handleTestClockAdvance},

		// Deprecated paths: same handlers, PublicRequestError bodies, deprecation headers.
		{method: http.MethodGet, pattern: "/api/public/requests/capabilities", contract: requests, successor: "/v1/capabilities", rate: rateReads, handler: s.handleCapabilities(true)},
		{method: http.MethodPost, pattern: "/api/public/requests", auth: authPartnerOnly, scope: bokat.ScopeRequestsCreate, contract: requests, successor: "/v1/requests", needsPartner: true, handler: s.handleCreateRequest},
		{method: http.MethodPost, pattern: "/api/public/booking-options", contract: bookings, successor: "/v1/booking-options", rate: rateSearch, handler: s.handleSearch},
		{method: http.MethodPost, pattern: "/api/public/bookings", auth: authPartnerOnly, scope: bokat.ScopeBookingsConfirm, contract: bookings, successor: "/v1/bookings", handler: s.handleConfirm},
		{method: http.MethodGet, pattern: "/api/public/bookings/{booking_id}", auth: authPartnerOnly, scope: bokat.ScopeBookingsRead, contract: bookings, successor: "/v1/bookings/{booking_id}", handler: s.handleBookingStatus(true)},
	}
}

// walkPattern walks a route pattern ("/v1/bookings/{booking_id}/cancel"),
// giving literal each literal piece and wildcard each wildcard's name
// ("{rest...}" names rest), in order. It is the one reader of patterns:
// successor links, the paths of MCP tool calls and the text check use it.
func walkPattern(pattern string, literal func(string), wildcard func(name string)) {
	for {
		open := strings.IndexByte(pattern, '{')
		end := strings.IndexByte(pattern, '}')
		if open < 0 || end < open {
			literal(pattern)
			return
		}
		literal(pattern[:open])
		wildcard(strings.TrimSuffix(pattern[open+1:end], "..."))
		pattern = pattern[end+1:]
	}
}

// fillPattern returns the path of a route pattern whose wildcards hold
// value(name), escaped.
func fillPattern(pattern string, value func(name string) string) string {
	var b strings.Builder
	walkPattern(pattern, func(lit string) { b.WriteString(lit) },
		func(name string) { b.WriteString(url.PathEscape(value(name))) })
	return b.String()
}

// protocolRoute is an endpoint whose responses follow the OAuth RFCs rather
// than the v1 conventions: no v1 metadata in its bodies, no Problem errors,
// no route-level credential check (the token and revocation endpoints
// authenticate OAuth clients themselves).
type protocolRoute struct {
	method  string
	pattern string
	handler http.Handler
}

// protocolRoutes lists the OAuth discovery documents (RFC 8414, RFC 9728)
// and the authorization server's endpoints (package oauth).
func (s *Server) protocolRoutes() []protocolRoute {
	as := s.oauth
	return []protocolRoute{
		{http.MethodGet, "/.well-known/oauth-protected-resource", http.HandlerFunc(s.handleResourceMetadata)},
		// The MCP surface (package mcp) and its RFC 9728 resource metadata.
		{http.MethodGet, "/.well-known/oauth-protected-resource/mcp", s.mcp.ResourceMetadata()},
		{http.MethodPost, "/mcp", s.mcpEndpoint()},
		{http.MethodGet, "/mcp", s.mcpEndpoint()},
		{http.MethodDelete, "/mcp", s.mcpEndpoint()},
		{http.MethodGet, "/.well-known/oauth-authorization-server", as.Metadata()},
		{http.MethodGet, "/oauth/authorize", as.Authorize()},
		{http.MethodPost, "/oauth/authorize", as.Authorize()},
		{http.MethodGet, "/oauth/sign-in", as.SignIn()},
		{http.MethodPost, "/oauth/sign-in", as.SignIn()},
		{http.MethodGet, "/oauth/sign-in/code", as.SignInCode()},
		{http.MethodPost, "/oauth/sign-in/code", as.SignInCode()},
		{http.MethodPost, "/oauth/sign-out", as.SignOut()},
		{http.MethodPost, "/oauth/token", as.Token()},
		{http.MethodPost, "/oauth/revoke", as.Revoke()},
		{http.MethodPost, "/oauth/register", as.Register()},
		// The provider pages (package provider), when configured.
		{http.MethodGet, "/provider/", s.providerPages},
		{http.MethodPost, "/provider/", s.providerPages},
		// The operator console (package operator), when served here.
		{http.MethodGet, "/operator/", s.operatorPages},
		{http.MethodPost, "/operator/", s.operatorPages},
	}
}

// AdminHandler serves the pages h under prefix ("/operator") on a listener
// of their own (serve's --admin-addr), as the API's listener would serve
// them: request ids, the access log, request metrics and the client's
// address (through trusted proxies) for the pages' rate limits. Every
// other path answers 404.
func (s *Server) AdminHandler(prefix string, h http.Handler) http.Handler {
	mux := http.NewServeMux()
	for _, m := range []string{http.MethodGet, http.MethodPost} {
		mux.Handle(m+" "+prefix+"/", s.wrapProtocol(protocolRoute{m, prefix + "/", h}))
	}
	mux.Handle("/", http.NotFoundHandler())
	return s.withRequestInfo(mux)
}

func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, err := w.Write(s.openapiJSON)
	return err
}
