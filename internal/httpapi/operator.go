package httpapi

import (
	"net/http"
)

// operatorRoutes serves the operator endpoints beside the API: GET /healthz
// (liveness), GET /readyz (readiness) and, when configured, GET /metrics.
// They are not part of the v1 contract: plain JSON (or the Prometheus text
// format) without the v1 metadata or Problem shape, no credential, no rate
// limit. They pass the access log (at debug level) and request metrics.
func (s *Server) operatorRoutes(mux *http.ServeMux, cfg Config) {
	mux.Handle("GET /healthz", s.operator("/healthz", cfg.Health.LiveHandler()))
	mux.Handle("GET /readyz", s.operator("/readyz", cfg.Health.ReadyHandler()))
	if cfg.ServeMetrics {
		mux.Handle("GET /metrics", s.operator("/metrics", cfg.Metrics.Handler(s.log)))
	}
}

func (s *Server) operator(pattern string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := requestInfoFrom(r.Context())
		info.route = pattern
		info.operator = true
		h.ServeHTTP(w, r)
	})
}
