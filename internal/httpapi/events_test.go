package httpapi

import (
	"context"
	"fmt"
	"testing"

	"bokat"
	"bokat/internal/sqlstore"
	"bokat/internal/supply"
	"bokat/internal/testrealm"
)

// TestEventsListTheCallersOwnRealmOldestFirst: GET /v1/events pages
// through the caller's events with after, as webhook bodies, newest last;
// another client's and the other realm's events are never listed.
func TestEventsListTheCallersOwnRealmOldestFirst(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		e.withDemoSupply()
		cat, _ := loadCatalog()
		if _, err := testrealm.Seed(context.Background(), sqlstore.Bind[supply.Tx](e.db), cat, e.srv.now()); err != nil {
			t.Fatal(err)
		}
		test := e.testPartner(t, "integrator")
		other := e.partner("other", bokat.AllScopes()...)

		var liveIDs []string
		for i := range 3 {
			_, opts := e.searchAs(t, e.token)
			liveIDs = append(liveIDs, e.confirm(t, opts[0], fmt.Sprintf("ev-%d", i))["id"].(string))
		}
		_, testOpts := e.searchAs(t, test)
		var free map[string]any
		for _, o := range testOpts {
			if optionProvider(o) == bokat.TestProviderFree {
				free = o
			}
		}
		if free == nil {
			t.Fatalf("no option of %s in the test search", bokat.TestProviderFree)
		}
		tr := e.do(request{Method: "POST", Path: "/v1/bookings", Body: confirmBody(free, "ev-test"), Header: bearer(test)})
		if tr.Status != 201 {
			t.Fatalf("test confirm: %d %s", tr.Status, tr.Body)
		}
		testID := tr.JSON["booking"].(map[string]any)["id"].(string)

		var seen []string
		after := ""
		for page := 0; page < 5; page++ {
			path := "/v1/events?limit=2"
			if after != "" {
				path += "&after=" + after
			}
			r := e.do(request{Method: "GET", Path: path, Header: bearer(e.token)})
			if r.Status != 200 {
				t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
			}
			for _, ev := range r.JSON["events"].([]any) {
				ev := ev.(map[string]any)
				if ev["id"] != ev["outbox_id"] || ev["type"] != "booking.confirmed" || ev["spec_version"] == nil {
					t.Errorf("event body %v", ev)
				}
				seen = append(seen, ev["data"].(map[string]any)["booking"].(map[string]any)["id"].(string))
			}
			after, _ = r.JSON["next_after"].(string)
			if r.JSON["has_more"] != true {
				break
			}
		}
		if fmt.Sprint(seen) != fmt.Sprint(liveIDs) {
			t.Errorf("live events listed %v, want %v oldest first", seen, liveIDs)
		}

		r := e.do(request{Method: "GET", Path: "/v1/events", Header: bearer(test)})
		evs := r.JSON["events"].([]any)
		checkMode(t, "test events", r.Header, true)
		if len(evs) != 1 || evs[0].(map[string]any)["data"].(map[string]any)["booking"].(map[string]any)["id"] != testID {
			t.Errorf("test events = %v, want only the test booking's", evs)
		}
		if r := e.do(request{Method: "GET", Path: "/v1/events", Header: bearer(other)}); len(r.JSON["events"].([]any)) != 0 {
			t.Errorf("another client sees %d events", len(r.JSON["events"].([]any)))
		}
		// A cursor of another realm's or client's event is unknown.
		if r := e.do(request{Method: "GET", Path: "/v1/events?after=" + after, Header: bearer(test)}); r.Status != 404 {
			t.Errorf("a test credential paging after a live event: %d %s, want 404", r.Status, r.Body)
		}
		if r := e.do(request{Method: "GET", Path: "/v1/events?limit=0", Header: bearer(e.token)}); r.Status != 400 {
			t.Errorf("limit=0: %d, want 400", r.Status)
		}
	})
}
