package httpapi

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"bokat"
	"bokat/internal/ratelimit"
	"bokat/internal/schedule"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
)

const (
	apiProviderA = "prv_sthlm_vvs_1"
	apiProviderB = "prv_sthlm_vvs_2"
)

// providerToken creates a provider token with every provider scope.
func (e *testEnv) providerToken(providerID string) string {
	e.t.Helper()
	_, token, err := e.authn.CreateProviderToken(context.Background(), providerID, "test", bokat.ProviderScopes(), time.Now())
	if err != nil {
		e.t.Fatal(err)
	}
	if !strings.HasPrefix(token, "bkv_") {
		e.t.Fatalf("token %q lacks the provider prefix", token[:4])
	}
	return token
}

// providerCall is one provider API route as the matrix calls it.
type providerCall struct {
	method, pattern string
	path            func() string
	body            any
	// others is what another provider's token gets: 404 for an object of
	// provider A, 200 for its own collection.
	others int
}

// TestProviderAPIAuthorization calls every provider API route with no
// credential, a partner token, another provider's token and the
// provider's own token, and checks each answer.
func TestProviderAPIAuthorization(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		// Development's --webhook-allow-private: a calendar may live on
		// loopback (it is not read here).
		e := newTestEnv(t, db, allowPrivate).withDemoSupply()
		own, other := e.providerToken(apiProviderA), e.providerToken(apiProviderB)
		start := time.Now().Add(72 * time.Hour).Truncate(time.Hour)
		sqlstoretest.InsertBookingEntry(t, db, apiProviderA, "bk_api_a", start, start.Add(time.Hour))
		day := schedule.DateOf(time.Now()).AddDays(20).String()
		var blockID, feedID string
		feed := func() string { return "/v1/provider/calendars/" + feedID }
		booking := func(suffix string) func() string {
			return func() string { return "/v1/provider/bookings/bk_api_a" + suffix }
		}
		fixed := func(p string) func() string { return func() string { return p } }
		calls := []providerCall{
			{"GET", "/v1/provider/bookings", fixed("/v1/provider/bookings"), nil, 200},
			{"GET", "/v1/provider/bookings/{booking_id}", booking(""), nil, 404},
			{"POST", "/v1/provider/bookings/{booking_id}/acknowledge", booking("/acknowledge"), map[string]any{}, 404},
			{"POST", "/v1/provider/bookings/{booking_id}/flag", booking("/flag"), map[string]any{"note": "Porten har ny kod."}, 404},
			{"GET", "/v1/provider/blocks", fixed("/v1/provider/blocks"), nil, 200},
			{"POST", "/v1/provider/blocks", fixed("/v1/provider/blocks"), map[string]any{"kind": "days", "from": day}, 200},
			{"POST", "/v1/provider/blocks/{block_id}/remove", func() string { return "/v1/provider/blocks/" + blockID + "/remove" }, map[string]any{}, 404},
			{"GET", "/v1/provider/hours", fixed("/v1/provider/hours"), nil, 200},
			{"PUT", "/v1/provider/hours", fixed("/v1/provider/hours"), map[string]any{"weekly": map[string]any{"weekdays": []string{"08:00-16:00"}},
				"min_notice_minutes": 120, "horizon_days": 21}, 200},
			{"GET", "/v1/provider/prices", fixed("/v1/provider/prices"), nil, 200},
			{"PUT", "/v1/provider/prices", fixed("/v1/provider/prices"), map[string]any{"services": []any{
				map[string]any{"service_id": "vvs_install_faucet_standard", "price_sek": 1990}}}, 200},
			{"PUT", "/v1/provider/postcodes", fixed("/v1/provider/postcodes"), map[string]any{"postcodes": []string{"111-118"}}, 200},
			{"PUT", "/v1/provider/pause", fixed("/v1/provider/pause"), map[string]any{"until": nil}, 200},
			{"GET", "/v1/provider/calendars", fixed("/v1/provider/calendars"), nil, 200},
			{"POST", "/v1/provider/calendars", fixed("/v1/provider/calendars"), map[string]any{"url": "http://127.0.0.1:9/hemlig/a.ics"}, 200},
			{"PATCH", "/v1/provider/calendars/{feed_id}", feed, map[string]any{"rule": "everything"}, 404},
			{"GET", "/v1/provider/calendar-conflicts", fixed("/v1/provider/calendar-conflicts"), nil, 200},
			{"DELETE", "/v1/provider/calendars/{feed_id}", feed, map[string]any{}, 404},
			{"POST", "/v1/provider/bookings/{booking_id}/cancel", booking("/cancel"), map[string]any{"reason": "illness"}, 404},
		}
		var covered []string
		for i, c := range calls {
			covered = append(covered, c.method+" "+c.pattern)
			for _, cred := range []struct {
				name   string
				header map[string]string
				want   int
			}{
				{"no credential", nil, http.StatusUnauthorized},
				{"partner token", bearer(e.token), http.StatusForbidden},
				{"another provider", bearer(other), c.others},
				{"own provider", bearer(own), http.StatusOK},
			} {
				h := map[string]string{}
				for k, v := range cred.header {
					h[k] = v
				}
				if c.body != nil {
					h["Idempotency-Key"] = fmt.Sprintf("k-%d-%s", i, cred.name)
				}
				res := e.do(request{Method: c.method, Path: c.path(), Body: c.body, Header: h})
				if res.Status != cred.want {
					t.Errorf("%s %s with %s: %d, want %d\n%s", c.method, c.pattern, cred.name, res.Status, cred.want, res.Body)
				}
				if cred.name == "own provider" && c.method == "POST" && c.pattern == "/v1/provider/blocks" {
					b, _ := res.JSON["block"].(map[string]any)
					blockID, _ = b["block_id"].(string)
				}
				if cred.name == "own provider" && c.method == "POST" && c.pattern == "/v1/provider/calendars" {
					b, _ := res.JSON["calendar"].(map[string]any)
					feedID, _ = b["feed_id"].(string)
				}
			}
		}
		for _, rt := range e.srv.routes() {
			if strings.HasPrefix(rt.pattern, "/v1/provider/") && !slices.Contains(covered, rt.method+" "+rt.pattern) {
				t.Errorf("the matrix does not call %s %s", rt.method, rt.pattern)
			}
		}
		// Another provider's writes touched its own supply only.
		var prices []int64
		var cancels int
		if err := db.R().QueryRowContext(context.Background(), `SELECT COUNT(*) FROM provider_audit WHERE provider_id = $1
			AND action = 'booking.cancelled' AND actor LIKE 'pt_%'`, apiProviderA).Scan(&cancels); err != nil || cancels != 1 {
			t.Errorf("audit rows of the token's cancel: %d (%v), want 1", cancels, err)
		}
		for _, id := range []string{apiProviderA, apiProviderB} {
			var p int64
			if err := db.R().QueryRowContext(context.Background(), `SELECT price_sek FROM provider_services
				WHERE provider_id = $1 AND service_id = 'vvs_install_faucet_standard'`, id).Scan(&p); err != nil {
				t.Fatal(err)
			}
			prices = append(prices, p)
		}
		if prices[0] != 1990 || prices[1] != 1990 {
			t.Errorf("faucet prices of A and B after each set its own: %v", prices)
		}
		// Each provider added its own calendar; A's was changed and removed
		// by A only.
		for id, want := range map[string]int{apiProviderA: 0, apiProviderB: 1} {
			if list, err := db.ProviderFeeds(context.Background(), id); err != nil || len(list) != want ||
				(want == 1 && list[0].Rule != "busy_only") {
				t.Errorf("calendars of %s after the matrix: %+v (%v), want %d", id, list, err, want)
			}
		}
	})
}

func TestProviderAPIWritesAreKeyedAndRefusedClearly(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newTestEnv(t, db).withDemoSupply()
		own := e.providerToken(apiProviderA)
		start := schedule.DateOf(time.Now()).AddDays(10).At(10 * 60)
		sqlstoretest.InsertBookingEntry(t, db, apiProviderA, "bk_api_way", start, start.Add(time.Hour))
		day := schedule.DateOf(start).String()
		h := func(key string) map[string]string {
			m := bearer(own)
			m["Idempotency-Key"] = key
			return m
		}

		res := e.do(request{Method: "POST", Path: "/v1/provider/blocks", Header: h("over"),
			Body: map[string]any{"kind": "hours", "from": day, "start": "09:00", "end": "12:00"}})
		if res.Status != http.StatusBadRequest || res.JSON["code"] != "validation_failed" || !strings.Contains(string(res.Body), "bk_api_way") {
			t.Errorf("a block over a booking: %d %s", res.Status, res.Body)
		}
		body := map[string]any{"kind": "hours", "from": day, "start": "13:00", "end": "15:00", "weeks": 3, "note": "Kurs"}
		first := e.do(request{Method: "POST", Path: "/v1/provider/blocks", Header: h("block-1"), Body: body})
		again := e.do(request{Method: "POST", Path: "/v1/provider/blocks", Header: h("block-1"), Body: body})
		b1, _ := first.JSON["block"].(map[string]any)
		b2, _ := again.JSON["block"].(map[string]any)
		if first.Status != 200 || again.Status != 200 || b1["block_id"] == nil || b1["block_id"] != b2["block_id"] ||
			again.Header.Get("Idempotent-Replayed") != "true" || again.JSON["idempotent_replay"] != true {
			t.Fatalf("a replayed block: %d %s / %d %s", first.Status, first.Body, again.Status, again.Body)
		}
		var n int
		if err := db.R().QueryRowContext(context.Background(), `SELECT COUNT(*) FROM calendar_entries WHERE block_id = $1`,
			b1["block_id"]).Scan(&n); err != nil || n != 3 {
			t.Errorf("stored %d occurrences (%v), want 3", n, err)
		}
		body["weeks"] = 2
		if res := e.do(request{Method: "POST", Path: "/v1/provider/blocks", Header: h("block-1"), Body: body}); res.Status != http.StatusConflict {
			t.Errorf("a key reused for another block: %d %s", res.Status, res.Body)
		}
		for name, bad := range map[string]struct {
			path string
			body any
		}{
			"a flat price given per unit": {"/v1/provider/prices", map[string]any{"services": []any{map[string]any{"service_id": "vvs_install_faucet_standard", "unit_price_sek": 10}}}},
			"hours backwards":             {"/v1/provider/hours", map[string]any{"weekly": map[string]any{"monday": []string{"17:00-08:00"}}, "min_notice_minutes": 0, "horizon_days": 14}},
			"not a postcode":              {"/v1/provider/postcodes", map[string]any{"postcodes": []string{"0"}}},
			"a pause in the past":         {"/v1/provider/pause", map[string]any{"until": "2020-01-01"}},
			"an unknown field":            {"/v1/provider/postcodes", map[string]any{"postcodes": []string{"113"}, "extra": 1}},
		} {
			res := e.do(request{Method: "PUT", Path: bad.path, Header: h("bad-" + name), Body: bad.body})
			if res.Status != http.StatusBadRequest || res.JSON["code"] != "validation_failed" {
				t.Errorf("%s: %d %s", name, res.Status, res.Body)
			}
		}
		res = e.do(request{Method: "GET", Path: "/v1/provider/hours", Header: bearer(own)})
		if weekly, _ := res.JSON["weekly"].(map[string]any); res.Status != 200 || fmt.Sprint(weekly["monday"]) != "[08:00-17:00]" {
			t.Errorf("hours after refused changes: %d %s", res.Status, res.Body)
		}
	})
}

// TestProviderAPILabourShare sets a price's labour share through the
// provider API, reads it back from the write's answer and from the read,
// and sees 101 and -1 refused with nothing written.
func TestProviderAPILabourShare(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newTestEnv(t, db).withDemoSupply()
		own := e.providerToken(apiProviderA)
		h := func(key string) map[string]string {
			m := bearer(own)
			m["Idempotency-Key"] = key
			return m
		}
		// labour reads the faucet's labour_percent from an answer's
		// services: nil when the answer states none.
		labour := func(res response) any {
			t.Helper()
			list, _ := res.JSON["services"].([]any)
			for _, x := range list {
				if m, _ := x.(map[string]any); m["service_id"] == "vvs_install_faucet_standard" {
					return m["labour_percent"]
				}
			}
			t.Fatalf("no faucet in %s", res.Body)
			return nil
		}
		put := func(key string, percent any) response {
			svc := map[string]any{"service_id": "vvs_install_faucet_standard", "price_sek": 2000}
			if percent != nil {
				svc["labour_percent"] = percent
			}
			return e.do(request{Method: "PUT", Path: "/v1/provider/prices", Header: h(key), Body: map[string]any{"services": []any{svc}}})
		}
		read := func() response {
			return e.do(request{Method: "GET", Path: "/v1/provider/prices", Header: bearer(own)})
		}

		res := put("labour-65", 65)
		if res.Status != http.StatusOK || labour(res) != float64(65) {
			t.Fatalf("setting 65 %%: %d %s", res.Status, res.Body)
		}
		if res := read(); res.Status != http.StatusOK || labour(res) != float64(65) {
			t.Fatalf("reading back: %d %s", res.Status, res.Body)
		}
		for _, bad := range []any{101, -1, 12.5, "65"} {
			res := put(fmt.Sprintf("labour-bad-%v", bad), bad)
			if res.Status != http.StatusBadRequest || res.JSON["code"] != "validation_failed" || !strings.Contains(string(res.Body), "labour_percent") {
				t.Errorf("labour_percent %v: %d %s, want a validation_failed Problem naming labour_percent", bad, res.Status, res.Body)
			}
		}
		if res := read(); labour(res) != float64(65) {
			t.Fatalf("after refused shares: %s, want 65 still", res.Body)
		}
		var stored sql.NullInt64
		if err := db.R().QueryRowContext(context.Background(), `SELECT labour_percent FROM provider_services
			WHERE provider_id = $1 AND service_id = 'vvs_install_faucet_standard'`, apiProviderA).Scan(&stored); err != nil ||
			!stored.Valid || stored.Int64 != 65 {
			t.Fatalf("stored labour_percent %v (%v), want 65", stored, err)
		}
		// Absent means not stated: the read says none.
		if res := put("labour-none", nil); res.Status != http.StatusOK || labour(res) != nil {
			t.Fatalf("a price without a share: %d %s", res.Status, res.Body)
		}
		if res := read(); labour(res) != nil {
			t.Fatalf("reading a price without a share: %s", res.Body)
		}
	})
}

// TestProviderAPIBookingsArePaged lists more bookings than one answer
// holds: has_more and next_after lead to the rest, the last page says no
// more follow, and another provider's booking is no cursor.
func TestProviderAPIBookingsArePaged(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newTestEnv(t, db).withDemoSupply()
		own := e.providerToken(apiProviderA)
		start := time.Now().Add(72 * time.Hour).Truncate(time.Hour)
		for i := range 205 {
			s := start.Add(time.Duration(i) * 2 * time.Hour)
			sqlstoretest.InsertBookingEntry(t, db, apiProviderA, fmt.Sprintf("bk_page_%03d", i), s, s.Add(time.Hour))
		}
		sqlstoretest.InsertBookingEntry(t, db, apiProviderB, "bk_page_b", start, start.Add(time.Hour))
		ids := func(res response) []string {
			t.Helper()
			list, _ := res.JSON["bookings"].([]any)
			var out []string
			for _, b := range list {
				id, _ := b.(map[string]any)["booking_id"].(string)
				out = append(out, id)
			}
			return out
		}
		first := e.do(request{Method: "GET", Path: "/v1/provider/bookings", Header: bearer(own)})
		next, _ := first.JSON["next_after"].(string)
		if got := ids(first); first.Status != 200 || len(got) != 200 || first.JSON["has_more"] != true || next != got[199] {
			t.Fatalf("first page: %d, %d bookings, has_more %v, next_after %q", first.Status, len(got), first.JSON["has_more"], next)
		}
		second := e.do(request{Method: "GET", Path: "/v1/provider/bookings?after=" + next, Header: bearer(own)})
		if got := ids(second); second.Status != 200 || len(got) != 5 || got[0] != "bk_page_200" || got[4] != "bk_page_204" ||
			second.JSON["has_more"] != false || second.JSON["next_after"] != nil {
			t.Errorf("second page: %d %v has_more %v next_after %v", second.Status, got, second.JSON["has_more"], second.JSON["next_after"])
		}
		if res := e.do(request{Method: "GET", Path: "/v1/provider/bookings?after=bk_page_b", Header: bearer(own)}); res.Status != http.StatusNotFound {
			t.Errorf("another provider's booking as the cursor: %d %s", res.Status, res.Body)
		}
	})
}

// TestProviderAPIIsRateLimited spends a provider token's read and write
// quotas: the next request of each class is 429 with the API's Problem and
// writes nothing, while another provider's token from the same address (two
// providers on one booking system's server) keeps its own quota.
func TestProviderAPIIsRateLimited(t *testing.T) {
	t.Parallel()
	clk := newTestClock()
	e := sqliteEnv(t, withLimits(ratelimit.NewMemory(ratelimit.MemoryOptions{Now: clk.Now}), smallLimits(10, 2, 2))).withDemoSupply()
	own, other := e.providerToken(apiProviderA), e.providerToken(apiProviderB)
	read := func(token string) response {
		return e.do(request{Method: "GET", Path: "/v1/provider/hours", Header: bearer(token)})
	}
	write := func(token, key string) response {
		h := bearer(token)
		h["Idempotency-Key"] = key
		return e.do(request{Method: "PUT", Path: "/v1/provider/postcodes", Header: h, Body: map[string]any{"postcodes": []string{"11" + key[len(key)-1:]}}})
	}
	for i := range 2 {
		if r := read(own); r.Status != 200 || r.Header.Get("RateLimit-Policy") != `"reads";q=2;w=60` {
			t.Fatalf("read %d: %d %q", i+1, r.Status, r.Header.Get("RateLimit-Policy"))
		}
		if r := write(own, fmt.Sprintf("w%d", i+1)); r.Status != 200 || r.Header.Get("RateLimit-Policy") != `"writes";q=2;w=60` {
			t.Fatalf("write %d: %d %q %s", i+1, r.Status, r.Header.Get("RateLimit-Policy"), r.Body)
		}
	}
	checkRateLimited(t, read(own), "/v1/provider/hours", bokat.BookingsContractVersion)
	checkRateLimited(t, write(own, "w3"), "/v1/provider/postcodes", bokat.BookingsContractVersion)
	var writes int
	if err := e.db.R().QueryRowContext(context.Background(), `SELECT COUNT(*) FROM provider_audit
		WHERE provider_id = $1 AND action = 'supply.postcodes'`, apiProviderA).Scan(&writes); err != nil || writes != 2 {
		t.Errorf("postcode changes of A: %d (%v), want the two allowed", writes, err)
	}
	if r := read(other); r.Status != 200 {
		t.Errorf("another provider's token after A's quota is spent: %d", r.Status)
	}
	if r := write(other, "b1"); r.Status != 200 {
		t.Errorf("another provider's write after A's quota is spent: %d %s", r.Status, r.Body)
	}
}
