package operator_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
)

// TestConsoleListsFailingWebhooksAndCredentials shows the webhook
// endpoints that fail (disabled, failed or retried deliveries; not the
// healthy one, and never an address's path) and the partner credentials
// and OAuth clients (never a secret's hash), on each engine.
func TestConsoleListsFailingWebhooksAndCredentials(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newEnv(t, db)
		e.invite(t, operatorEmail)
		id := e.book(t, "hooks")
		var event string
		if err := db.R().QueryRowContext(context.Background(), `SELECT id FROM outbox_events WHERE booking_id = $1`, id).Scan(&event); err != nil {
			t.Fatal(err)
		}
		now := e.clock.Now().UnixMilli()
		for _, ep := range []struct {
			id, url  string
			disabled any
		}{
			{"whe_disabled", "https://hooks.partner.example/in?token=hemlig123", now},
			{"whe_retried", "https://retry.partner.example/hook", nil},
			{"whe_healthy", "https://fine.partner.example/hook", nil},
		} {
			if err := e.exec(`INSERT INTO webhook_endpoints (id, owner_client_id, url, event_types, signing_key_id, secret_key_id,
				secret_ciphertext, disabled_at, disabled_reason, created_at, updated_at)
				VALUES ($1, 'pc_console', $2, 'booking.confirmed', 'whk_1', 'sk_1', 'sealed', $3, $4, $5, $5)`,
				ep.id, ep.url, ep.disabled, map[bool]string{true: "too_many_failures"}[ep.disabled != nil], now); err != nil {
				t.Fatal(err)
			}
		}
		for _, d := range []struct {
			id, endpoint, status string
			attempts, code       int
		}{{"whd_1", "whe_retried", "pending", 2, 500}, {"whd_2", "whe_healthy", "delivered", 1, 200}} {
			if err := e.exec(`INSERT INTO webhook_deliveries (id, webhook_id, outbox_id, endpoint_id, origin, status, attempts,
				next_attempt_at, last_status_code, last_error, created_at, updated_at)
				VALUES ($1, $1, $2, $3, 'relay', $4, $5, $6, $7, $8, $6, $6)`, d.id, event, d.endpoint, d.status, d.attempts, now,
				d.code, map[bool]string{true: "the receiver answered 500"}[d.code == 500]); err != nil {
				t.Fatal(err)
			}
		}
		if err := e.exec(`INSERT INTO partner_clients (id, name, token_hash, scopes, created_at, revoked_at)
			VALUES ('pc_old', 'Gamla Partnern', 'hash-of-the-token', 'bookings:read', $1, $1),
			       ('pc_live', 'Assistenten AB', 'hash-of-another', 'bookings:read bookings:write', $1, NULL)`, now); err != nil {
			t.Fatal(err)
		}
		if err := e.exec(`INSERT INTO oauth_clients (id, name, secret_hash, redirect_uris, scopes, created_at, registration)
			VALUES ('oc_dyn', 'Dynamisk klient', NULL, 'https://app.example/cb', 'bookings:read', $1, 'dynamic')`, now); err != nil {
			t.Fatal(err)
		}
		c := newClient(t, e.srv.URL)
		c.SignIn(e.sender, operatorEmail)

		hooks := c.Do("GET", "/operator/webhooks", nil)
		if hooks.Status != http.StatusOK {
			t.Fatalf("webhooks: %d", hooks.Status)
		}
		for _, w := range []string{"whe_disabled", "hooks.partner.example", "too_many_failures", "whe_retried", "HTTP 500",
			"the receiver answered 500"} {
			if !strings.Contains(hooks.Body, w) {
				t.Errorf("the webhooks page lacks %q", w)
			}
		}
		for _, banned := range []string{"whe_healthy", "hemlig123", "/in?token", "sealed"} {
			if strings.Contains(hooks.Body, banned) {
				t.Errorf("the webhooks page shows %q", banned)
			}
		}

		creds := c.Do("GET", "/operator/partners?lang=en", nil)
		for _, w := range []string{"Gamla Partnern", "pc_old", "Revoked 2 Mar 2026", "Assistenten AB", "bookings:read bookings:write",
			"Dynamisk klient", "dynamic", "Last used", "never", `id="rotate-pc_live"`, `id="revoke-pc_live"`, `id="revoke-oc_dyn"`,
			`id="purge-submit"`} {
			if !strings.Contains(creds.Body, w) {
				t.Errorf("the partners page lacks %q", w)
			}
		}
		// A revoked credential offers no action; nothing shows a hash.
		if strings.Contains(creds.Body, "hash-of") || strings.Contains(creds.Body, `id="rotate-pc_old"`) ||
			strings.Contains(creds.Body, `id="revoke-pc_old"`) || strings.Contains(creds.Body, "not built yet") {
			t.Errorf("the partners page shows a hash, the placeholder or an action on a revoked credential:\n%s", creds.Body)
		}
	})
}
