package httpapi

import (
	"strings"
	"testing"

	"bokat"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
)

// TestWebhookRejectionsNameTheDevelopmentFlag: in development without
// --webhook-allow-private, a registration the flag would admit (http://, a
// loopback or private address, another port) says how to allow it; one it
// would not admit, and every one in production, does not.
func TestWebhookRejectionsNameTheDevelopmentFlag(t *testing.T) {
	t.Parallel()
	for _, production := range []bool{false, true} {
		e := newWebhookEnv(t, sqlstoretest.Open(t, sqlstore.SQLite), false, func(c *envConfig) { c.Production = production })
		_, token := e.client("Acme", bokat.ScopeWebhooksManage)
		for _, tc := range []struct {
			url    string
			status int
			hint   bool
		}{
			{"http://127.0.0.1:8080/hook", 400, true},
			{"http://hooks.partner.se/bokat", 400, true},
			{"https://127.0.0.1/bokat", 422, true},
			{"https://loopback.partner.se/bokat", 422, true},
			{"https://private.partner.se/bokat", 422, true},
			{"https://hooks.partner.se:8443/bokat", 422, true},
			{"https://bokat:pw@hooks.partner.se/bokat", 422, false},
			{"https://nowhere.partner.se/bokat", 422, false},
		} {
			r := e.register(token, tc.url)
			detail, _ := r.JSON["detail"].(string)
			step, _ := r.JSON["safe_next_step"].(string)
			want := tc.hint && !production
			if r.Status != tc.status || strings.Contains(detail, "--webhook-allow-private") != want ||
				strings.Contains(step, "--webhook-allow-private") != want {
				t.Errorf("production %v, %s: %d detail %q step %q; want %d, hint %v", production, tc.url, r.Status, detail, step, tc.status, want)
			}
		}
	}
}
