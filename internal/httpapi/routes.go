package httpapi

import (
	"net/http"

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
	handler      handlerFunc
}

// routes is the whole HTTP surface in one table.
func (s *Server) routes() []route {
	const (
		bookings = bokat.BookingsContractVersion
		requests = bokat.RequestsContractVersion
	)
	return []route{
		{method: http.MethodGet, pattern: "/v1/capabilities", contract: requests, handler: s.handleCapabilities(false)},
		{method: http.MethodGet, pattern: "/v1/openapi.json", contract: bookings, handler: s.handleOpenAPI},
		{method: http.MethodGet, pattern: "/problems/{code}", contract: bookings, handler: s.handleProblemPage},
		{method: http.MethodGet, pattern: "/problems", contract: bookings, handler: s.handleProblemIndex},
		{method: http.MethodPost, pattern: "/v1/booking-options", contract: bookings, handler: s.handleSearch},
		{method: http.MethodGet, pattern: "/terms/{service_id}", contract: bookings, handler: s.handleTerms},
		{method: http.MethodPost, pattern: "/v1/requests", auth: authRequired, scope: bokat.ScopeRequestsCreate, contract: requests, handler: s.handleCreateRequest},
		{method: http.MethodPost, pattern: "/v1/bookings", auth: authRequired, scope: bokat.ScopeBookingsConfirm, contract: bookings, handler: s.handleConfirm},
		{method: http.MethodGet, pattern: "/v1/bookings/{booking_id}", auth: authRequired, scope: bokat.ScopeBookingsRead, contract: bookings, handler: s.handleBookingStatus(false)},
		{method: http.MethodPost, pattern: "/v1/bookings/{booking_id}/cancel", auth: authRequired, scope: bokat.ScopeBookingsCancel, contract: bookings, handler: s.handleCancel},
		{method: http.MethodPost, pattern: "/v1/bookings/{booking_id}/reschedule", auth: authRequired, scope: bokat.ScopeBookingsReschedule, contract: bookings, handler: s.handleReschedule},
		// Providers' calendar feeds: the secret token in the path is the credential.
		{method: http.MethodGet, pattern: "/calendar/{provider_id}/{feed}", contract: bookings, handler: s.handleCalendarFeed},

		// Deprecated paths: same handlers, PublicRequestError bodies, deprecation headers.
		{method: http.MethodGet, pattern: "/api/public/requests/capabilities", contract: requests, successor: "/v1/capabilities", handler: s.handleCapabilities(true)},
		{method: http.MethodPost, pattern: "/api/public/requests", auth: authPartnerOnly, scope: bokat.ScopeRequestsCreate, contract: requests, successor: "/v1/requests", needsPartner: true, handler: s.handleCreateRequest},
		{method: http.MethodPost, pattern: "/api/public/booking-options", contract: bookings, successor: "/v1/booking-options", handler: s.handleSearch},
		{method: http.MethodPost, pattern: "/api/public/bookings", auth: authPartnerOnly, scope: bokat.ScopeBookingsConfirm, contract: bookings, successor: "/v1/bookings", handler: s.handleConfirm},
		{method: http.MethodGet, pattern: "/api/public/bookings/{booking_id}", auth: authPartnerOnly, scope: bokat.ScopeBookingsRead, contract: bookings, successor: "/v1/bookings/{booking_id}", handler: s.handleBookingStatus(true)},
	}
}

func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, err := w.Write(s.contract.JSON())
	return err
}
