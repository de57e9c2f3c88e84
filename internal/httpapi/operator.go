package httpapi

import (
	"net/http"
)

// operatorRoutes serves the operator endpoints beside the API: GET /healthz
// (liveness), GET /readyz (readiness) and, when configured, GET /metrics.
// They are not part of the v1 contract: plain JSON (or the Prometheus text
// format) without the v1 metadata or Problem shape, no credential. /readyz
// (a database round trip) and /metrics spend the client IP's control quota
// (a refusal is the 429 Problem); /healthz, which does no work, spends
// none, so a liveness probe is never refused. They pass the access log (at
// debug level) and request metrics.
func (s *Server) operatorRoutes(mux *http.ServeMux, cfg Config) {
	mux.Handle("GET /healthz", s.operator("/healthz", false, cfg.Health.LiveHandler()))
	mux.Handle("GET /readyz", s.operator("/readyz", true, cfg.Health.ReadyHandler()))
	if cfg.ServeMetrics {
		mux.Handle("GET /metrics", s.operator("/metrics", true, cfg.Metrics.Handler(s.log)))
	}
}

func (s *Server) operator(pattern string, limited bool, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := requestInfoFrom(r.Context())
		info.route = pattern
		info.operator = true
		if limited && !s.allowControl(w, r, 1) {
			return
		}
		h.ServeHTTP(w, r)
	})
}
