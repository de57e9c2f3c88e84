package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"bokat/internal/calsync"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/webhook"
	"bokat/internal/webhook/webhooktest"
)

// allowPrivate serves as development does with --webhook-allow-private:
// calendar feeds (and webhooks) may live on http and loopback.
func allowPrivate(c *envConfig) { c.WebhookAllowPrivate = true }

// TestProviderAPICalendars keeps a provider's calendar through the API on
// each engine, with a real feed served on loopback and read by the real
// sync worker: a refused address (not echoed), an add and its keyed
// replay, the same address again, the sync result and the conflict with a
// confirmed booking in the reads, a rule change and a key reused for
// another rule, a removal without a body, and the audit rows. Every answer
// is checked against the contract.
func TestProviderAPICalendars(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newTestEnv(t, db, allowPrivate).withDemoSupply()
		own := e.providerToken(apiProviderA)
		h := func(key string) map[string]string {
			m := bearer(own)
			m["Idempotency-Key"] = key
			return m
		}
		start := time.Now().Add(72 * time.Hour).Truncate(time.Hour)
		sqlstoretest.InsertBookingEntry(t, db, apiProviderA, "bk_api_cal", start, start.Add(2*time.Hour))
		stamp := func(t time.Time) string { return t.UTC().Format("20060102T150405Z") }
		ics := "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Apple Inc.//iCloud//EN\r\nBEGIN:VEVENT\r\nUID:ovr@icloud.com\r\n" +
			"DTSTAMP:" + stamp(start) + "\r\nDTSTART:" + stamp(start.Add(time.Hour)) + "\r\nDTEND:" + stamp(start.Add(3*time.Hour)) +
			"\r\nSUMMARY:Egen bokning\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/calendar")
			fmt.Fprint(w, ics)
		}))
		t.Cleanup(srv.Close)
		secret := srv.URL + "/hemlig/5e7d/basic.ics"

		res := e.do(request{Method: "POST", Path: "/v1/provider/calendars", Header: h("refused"),
			Body: map[string]any{"url": "ftp://127.0.0.1/hemlig/5e7d/basic.ics"}})
		if res.Status != http.StatusBadRequest || res.JSON["code"] != "validation_failed" || strings.Contains(string(res.Body), "5e7d") {
			t.Errorf("a refused address: %d %s", res.Status, res.Body)
		}
		add := map[string]any{"url": secret}
		first := e.do(request{Method: "POST", Path: "/v1/provider/calendars", Header: h("add-1"), Body: add})
		again := e.do(request{Method: "POST", Path: "/v1/provider/calendars", Header: h("add-1"), Body: add})
		c1, _ := first.JSON["calendar"].(map[string]any)
		c2, _ := again.JSON["calendar"].(map[string]any)
		if first.Status != 200 || again.Status != 200 || c1["feed_id"] == nil || c1["feed_id"] != c2["feed_id"] ||
			again.Header.Get("Idempotent-Replayed") != "true" || c1["label"] != "127.0.0.1" || c1["rule"] != "busy_only" ||
			c1["source"] != "provider" || c1["last_synced_at"] != nil || strings.Contains(string(first.Body), "5e7d") {
			t.Fatalf("an added calendar and its replay: %d %s / %d %s", first.Status, first.Body, again.Status, again.Body)
		}
		feedID := c1["feed_id"].(string)
		if res := e.do(request{Method: "POST", Path: "/v1/provider/calendars", Header: h("add-2"), Body: add}); res.Status != http.StatusBadRequest ||
			!strings.Contains(string(res.Body), "already has this calendar") {
			t.Errorf("the same address again: %d %s", res.Status, res.Body)
		}

		worker, err := calsync.NewWorker(calsync.Config{Store: sqlstore.Bind[calsync.Tx](db),
			Fetch: calsync.FetchConfig{Guard: webhook.NewGuard(webhooktest.NewResolver(), true)}})
		if err != nil {
			t.Fatal(err)
		}
		if r, err := worker.RunOnce(context.Background()); err != nil || r.Changed != 1 {
			t.Fatalf("sync round %+v, %v", r, err)
		}
		list := e.do(request{Method: "GET", Path: "/v1/provider/calendars", Header: bearer(own)})
		cals, _ := list.JSON["calendars"].([]any)
		if len(cals) != 1 {
			t.Fatalf("calendars after the sync: %s", list.Body)
		}
		if c := cals[0].(map[string]any); c["feed_id"] != feedID || c["last_synced_at"] == nil || c["last_error"] != nil ||
			c["busy_count"] != float64(1) || c["stale"] != false {
			t.Errorf("the calendar after the sync: %v", c)
		}
		conflicts := e.do(request{Method: "GET", Path: "/v1/provider/calendar-conflicts", Header: bearer(own)})
		if list, _ := conflicts.JSON["conflicts"].([]any); len(list) != 1 || list[0].(map[string]any)["booking_id"] != "bk_api_cal" ||
			list[0].(map[string]any)["feed_id"] != feedID {
			t.Errorf("conflicts: %s", conflicts.Body)
		}
		if other := e.do(request{Method: "GET", Path: "/v1/provider/calendar-conflicts", Header: bearer(e.providerToken(apiProviderB))}); strings.Contains(string(other.Body), "bk_api_cal") {
			t.Errorf("another provider sees A's conflict: %s", other.Body)
		}

		rule := e.do(request{Method: "PATCH", Path: "/v1/provider/calendars/" + feedID, Header: h("rule-1"), Body: map[string]any{"rule": "everything"}})
		if c, _ := rule.JSON["calendar"].(map[string]any); rule.Status != 200 || c["rule"] != "everything" || c["feed_id"] != feedID || c["label"] != "127.0.0.1" {
			t.Errorf("a rule change: %d %s", rule.Status, rule.Body)
		}
		if res := e.do(request{Method: "PATCH", Path: "/v1/provider/calendars/" + feedID, Header: h("rule-1"), Body: map[string]any{"rule": "all_day_busy"}}); res.Status != http.StatusConflict {
			t.Errorf("a key reused for another rule: %d %s", res.Status, res.Body)
		}
		if res := e.do(request{Method: "PATCH", Path: "/v1/provider/calendars/" + feedID, Header: h("rule-bad"), Body: map[string]any{"rule": "sometimes"}}); res.Status != http.StatusBadRequest {
			t.Errorf("an unknown rule: %d %s", res.Status, res.Body)
		}
		if got, _ := db.ProviderFeeds(context.Background(), apiProviderA); len(got) != 1 || got[0].Rule != calsync.RuleEverything {
			t.Errorf("stored feeds after the rule changes: %+v", got)
		}

		gone := e.do(request{Method: "DELETE", Path: "/v1/provider/calendars/" + feedID, Header: h("remove-1")})
		if gone.Status != 200 || gone.JSON["removed"] != true || gone.JSON["feed_id"] != feedID {
			t.Errorf("a removal without a body: %d %s", gone.Status, gone.Body)
		}
		if res := e.do(request{Method: "DELETE", Path: "/v1/provider/calendars/" + feedID, Header: h("remove-2")}); res.Status != http.StatusNotFound {
			t.Errorf("removing it again: %d %s", res.Status, res.Body)
		}
		if list := e.do(request{Method: "GET", Path: "/v1/provider/calendars", Header: bearer(own)}); !strings.Contains(string(list.Body), `"calendars":[]`) {
			t.Errorf("calendars after the removal: %s", list.Body)
		}
		var n int
		if err := db.R().QueryRowContext(context.Background(), `SELECT COUNT(*) FROM provider_audit WHERE provider_id = $1
			AND action IN ('calendar.added', 'calendar.rule', 'calendar.removed') AND actor LIKE 'pt_%'
			AND object_id = $2 AND note NOT LIKE '%5e7d%'`, apiProviderA, feedID).Scan(&n); err != nil || n != 3 {
			t.Errorf("audit rows of the token's calendar writes: %d (%v), want 3", n, err)
		}
	})
}
