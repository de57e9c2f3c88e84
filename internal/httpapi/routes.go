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
		{method: http.MethodGet, pattern: "/problems/{code}", contract: bookings, rate: rateReads, handler: s.handleProblemPage},
		{method: http.MethodGet, pattern: "/problems", contract: bookings, rate: rateReads, handler: s.handleProblemIndex},

		// Deprecated paths: same handlers, PublicRequestError bodies, deprecation headers.
		{method: http.MethodGet, pattern: "/api/public/requests/capabilities", contract: requests, successor: "/v1/capabilities", rate: rateReads, handler: s.handleCapabilities(true)},
	}
}

func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, err := w.Write(s.contract.JSON())
	return err
}
