package httpapi

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"bokat"
	"bokat/internal/booking"
	"bokat/internal/schedule"
	"bokat/internal/sqlstore"
	"bokat/internal/supply"
)

// withDemoSupply loads the demo supply into the env's store.
func (e *testEnv) withDemoSupply() *testEnv {
	e.t.Helper()
	providers, err := demoProviders()
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := supply.ImportParsed(context.Background(), sqlstore.Bind[supply.Tx](e.db), supply.DemoName, providers, time.Now()); err != nil {
		e.t.Fatal(err)
	}
	return e
}

// demoProviders is the demo supply, parsed once per test process
// (ImportParsed does not change what it is given).
var demoProviders = sync.OnceValues(func() ([]bokat.ProviderSupply, error) {
	cat, err := loadCatalog()
	if err != nil {
		return nil, err
	}
	return supply.Parse(supply.DemoName, supply.Demo(), cat)
})

func faucetSearch() map[string]any {
	return map[string]any{
		"spec_version": "public_bookings_api_v1",
		"vertical_id":  "vvs",
		"job_type_id":  "install_faucet",
		"description":  "Byta köksblandare, ny blandare finns på plats.",
		"location":     map[string]any{"country_code": "SE", "postcode": "113 45", "city": "Stockholm"},
		"timing":       map[string]any{"preferred_time_text": "inom två veckor"},
		"locale":       "sv-SE",
	}
}

func movingHomeSearch() map[string]any {
	b := faucetSearch()
	b["vertical_id"], b["job_type_id"] = "moving", "moving_home"
	b["description"] = "Flytt av en tvåa inom Stockholm."
	b["destination_location"] = map[string]any{"country_code": "SE", "postcode": "11822"}
	b["details"] = map[string]any{"home_size_sqm": 58, "boxes": 25, "elevator_origin": true, "elevator_destination": false}
	return b
}

func with(b map[string]any, mutate func(map[string]any)) map[string]any {
	mutate(b)
	return b
}

func TestSearchOverHTTP(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		e.withDemoSupply()
		before := time.Now()
		r := e.do(request{Method: "POST", Path: "/v1/booking-options", Body: faucetSearch()})
		if r.Status != 200 {
			t.Fatalf("status %d: %s", r.Status, r.Body)
		}
		checkMetadata(t, r, bokat.BookingsContractVersion)
		for k, want := range map[string]any{"ok": true, "spec_version": "public_bookings_api_v1", "availability_checked": true,
			"provider_selected": false, "booking_created": false, "direct_booking_available": true} {
			if r.JSON[k] != want {
				t.Errorf("%s = %v, want %v", k, r.JSON[k], want)
			}
		}
		if r.JSON["fallback"] != nil {
			t.Errorf("fallback = %v with options", r.JSON["fallback"])
		}
		step, _ := r.JSON["safe_next_step"].(string)
		if !strings.Contains(step, "choose one explicitly") || !strings.Contains(step, "Nothing is booked yet") {
			t.Errorf("safe_next_step = %q", step)
		}
		if w, _ := r.JSON["requested_time_window"].(map[string]any); w == nil || w["label"] == "" {
			t.Errorf("requested_time_window = %v", r.JSON["requested_time_window"])
		}
		options := r.JSON["options"].([]any)
		if len(options) != 6 || r.JSON["option_count"] != float64(len(options)) {
			t.Fatalf("%d options, option_count %v; want 6 (two Stockholm plumbers, three slots each)", len(options), r.JSON["option_count"])
		}
		providers := map[string]bool{}
		for i, raw := range options {
			o := raw.(map[string]any)
			providers[o["provider"].(map[string]any)["id"].(string)] = true
			svc := o["service"].(map[string]any)
			if svc["service_id"] != "vvs_install_faucet_standard" || svc["vertical_id"] != "vvs" || svc["job_type_id"] != "install_faucet" {
				t.Errorf("option %d service = %v", i, svc)
			}
			price := o["price"].(map[string]any)
			if price["currency"] != "SEK" || price["pricing_model"] != "flat" || price["price_type"] != "avg_fixed" ||
				price["quantity"] != nil || price["unit_price_sek"] != nil {
				t.Errorf("option %d price = %v", i, price)
			}
			terms := o["terms"].(map[string]any)
			if terms["version"] != "fixed_price_terms_v1:vvs_install_faucet_standard" ||
				terms["url"] != "http://bokat.test/terms/vvs_install_faucet_standard" || len(terms["sections"].([]any)) < 5 {
				t.Errorf("option %d terms = %v", i, terms)
			}
			for _, u := range terms["source_urls"].([]any) {
				if s := u.(string); !strings.HasPrefix(s, "http://bokat.test/") && !strings.HasPrefix(s, "https://") {
					t.Errorf("source url %q is not absolute", s)
				}
			}
			if scope := o["scope"].(map[string]any); len(scope["included_sv"].([]any)) == 0 {
				t.Errorf("option %d scope = %v", i, scope)
			}
			expires, err := time.Parse(time.RFC3339, o["expires_at"].(string))
			if err != nil || expires.Before(before.Add(14*time.Minute)) || expires.After(time.Now().Add(15*time.Minute+time.Second)) {
				t.Errorf("expires_at = %v, want about 15 minutes from now", o["expires_at"])
			}
			claims, err := testOptionKeys.Verify(o["booking_option_id"].(string), time.Now())
			if err != nil {
				t.Fatalf("option %d id does not verify: %v", i, err)
			}
			slot := o["slot"].(map[string]any)
			start, _ := time.Parse(time.RFC3339, slot["start_at"].(string))
			if claims.ProviderID != o["provider"].(map[string]any)["id"] || !claims.SlotStart.Equal(start) ||
				float64(claims.AmountSEK) != price["amount_sek"] || claims.Postcode != "11345" || claims.TermsVersion != terms["version"] {
				t.Errorf("option %d claims %+v do not match the option", i, claims)
			}
			if !strings.HasSuffix(slot["start_at"].(string), "+01:00") && !strings.HasSuffix(slot["start_at"].(string), "+02:00") {
				t.Errorf("slot start %v is not on the Stockholm clock", slot["start_at"])
			}
		}
		if len(providers) != 2 {
			t.Errorf("options of %d providers, want 2", len(providers))
		}
	})
}

func TestSearchOverHTTPShowsUnitPrices(t *testing.T) {
	t.Parallel()
	e := sqliteEnv(t).withDemoSupply()
	body := with(faucetSearch(), func(b map[string]any) {
		b["vertical_id"], b["job_type_id"] = "cleaning", "cleaning_window"
		b["details"] = map[string]any{"window_count": 12}
		b["locale"] = "en-GB"
	})
	r := e.do(request{Method: "POST", Path: "/v1/booking-options", Body: body})
	if r.Status != 200 || r.JSON["direct_booking_available"] != true {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	for _, raw := range r.JSON["options"].([]any) {
		o := raw.(map[string]any)
		price := o["price"].(map[string]any)
		unit, _ := price["unit_price_sek"].(float64)
		if price["pricing_model"] != "per_window" || price["unit"] != "fönster" || price["quantity"] != float64(12) || unit <= 0 ||
			price["amount_sek"] != unit*12 || price["minimum_charge_sek"] == nil {
			t.Errorf("price = %v", price)
		}
		if label := o["slot"].(map[string]any)["label"].(string); !strings.Contains(label, ", ") || strings.Contains(label, "kl.") {
			t.Errorf("slot label %q is not English", label)
		}
	}
}

func TestSearchOverHTTPFallsBack(t *testing.T) {
	t.Parallel()
	e := sqliteEnv(t).withDemoSupply()
	tests := []struct {
		name   string
		body   map[string]any
		reason string
	}{
		{"job type without a seed", with(faucetSearch(), func(b map[string]any) { b["job_type_id"] = "leak_hidden" }), booking.ReasonNotDirectlyBookable},
		{"postcode without supply", with(faucetSearch(), func(b map[string]any) {
			b["location"] = map[string]any{"country_code": "SE", "postcode": "981 20"}
		}), booking.ReasonNoCoverage},
		{"size outside the fixed price", with(faucetSearch(), func(b map[string]any) {
			b["vertical_id"], b["job_type_id"] = "cleaning", "cleaning_move_out"
			b["details"] = map[string]any{"home_size_sqm": 400}
		}), booking.ReasonQuantityOutOfRange},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(request{Method: "POST", Path: "/v1/booking-options", Body: tc.body})
			if r.Status != 200 {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			if r.JSON["direct_booking_available"] != false || r.JSON["option_count"] != float64(0) || len(r.JSON["options"].([]any)) != 0 ||
				r.JSON["availability_checked"] != true || r.JSON["booking_created"] != false || r.JSON["provider_selected"] != false {
				t.Errorf("body = %s", r.Body)
			}
			fb, _ := r.JSON["fallback"].(map[string]any)
			if fb["type"] != "provider_follow_up_request" || fb["endpoint"] != "http://bokat.test/v1/requests" || fb["reason"] != tc.reason {
				t.Errorf("fallback = %v", fb)
			}
			if step, _ := r.JSON["safe_next_step"].(string); !strings.Contains(step, "follow-up request") {
				t.Errorf("safe_next_step = %q", step)
			}
		})
	}
}

// TestSearchOverHTTPOffersNextAvailable: the demo providers do not work
// weekends, so a weekend window is empty, and the response names the
// earliest free times after it (times only), validated against the schema.
func TestSearchOverHTTPOffersNextAvailable(t *testing.T) {
	t.Parallel()
	e := sqliteEnv(t).withDemoSupply()
	r := e.do(request{Method: "POST", Path: "/v1/booking-options", Body: with(faucetSearch(), func(b map[string]any) {
		b["timing"] = map[string]any{"preferred_time_text": "i helgen"}
	})})
	if r.Status != 200 || r.JSON["option_count"] != float64(0) || r.JSON["direct_booking_available"] != false {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	if fb, _ := r.JSON["fallback"].(map[string]any); fb["reason"] != booking.ReasonNoFreeSlot {
		t.Errorf("fallback = %v", fb)
	}
	windowEnd, err := time.Parse(time.RFC3339, r.JSON["requested_time_window"].(map[string]any)["end_at"].(string))
	if err != nil {
		t.Fatal(err)
	}
	next, _ := r.JSON["next_available"].([]any)
	if len(next) == 0 || len(next) > 3 {
		t.Fatalf("next_available = %v", r.JSON["next_available"])
	}
	var prev time.Time
	for _, n := range next {
		m := n.(map[string]any)
		start, err := time.Parse(time.RFC3339, m["start_at"].(string))
		if err != nil || start.Before(windowEnd) || !start.After(prev) || m["label"] == "" || len(m) != 3 {
			t.Errorf("next_available entry %v (window ends %s)", m, windowEnd)
		}
		if wd := start.In(schedule.Stockholm()).Weekday(); wd == time.Saturday || wd == time.Sunday {
			t.Errorf("next available %s falls on a weekend", start)
		}
		prev = start
	}
	if step, _ := r.JSON["safe_next_step"].(string); !strings.Contains(step, "next_available") || !strings.Contains(step, "search again") {
		t.Errorf("safe_next_step = %q", step)
	}
	// A window with options carries none.
	if r := e.do(request{Method: "POST", Path: "/v1/booking-options", Body: faucetSearch()}); r.Status != 200 || r.JSON["next_available"] != nil {
		t.Errorf("a search with options: %d next_available %v", r.Status, r.JSON["next_available"])
	}
	// Past the demo providers' 14-day horizon: its own reason and the last
	// bookable date, no next_available.
	horizonDate := func() string { return time.Now().In(schedule.Stockholm()).AddDate(0, 0, 14).Format(time.DateOnly) }
	before := horizonDate()
	r = e.do(request{Method: "POST", Path: "/v1/booking-options", Body: with(faucetSearch(), func(b map[string]any) {
		b["timing"] = map[string]any{"preferred_time_text": "om tre veckor"}
	})})
	after := horizonDate()
	if fb, _ := r.JSON["fallback"].(map[string]any); r.Status != 200 || fb["reason"] != booking.ReasonBeyondHorizon || r.JSON["next_available"] != nil {
		t.Fatalf("in three weeks: %d %s", r.Status, r.Body)
	}
	if last := r.JSON["last_bookable_date"]; last != before && last != after {
		t.Errorf("last_bookable_date = %v, want %s", last, after)
	}
	if step, _ := r.JSON["safe_next_step"].(string); !strings.Contains(step, "last_bookable_date") {
		t.Errorf("safe_next_step = %q", step)
	}
}

func TestSearchOverHTTPRejectsUnsupportedVerticalsAndJobTypesWith422(t *testing.T) {
	t.Parallel()
	e := sqliteEnv(t)
	supported := []any{"vvs", "electrician", "moving", "cleaning"}
	tests := []struct {
		name       string
		path       string
		body       map[string]any
		code       bokat.Code
		stepPrefix string
		accepted   bool
	}{
		{"not bookable yet", "/v1/booking-options", with(faucetSearch(), func(b map[string]any) {
			b["vertical_id"], b["job_type_id"] = "painting", "paint_room"
		}), bokat.CodeUnsupportedVertical, "Painting cannot be booked", false},
		{"unknown vertical with other errors", "/v1/booking-options", with(faucetSearch(), func(b map[string]any) {
			b["vertical_id"] = "plumbing"
			b["description"] = "kort"
			b["colour"] = "red"
		}), bokat.CodeUnsupportedVertical, "Use one of supported_vertical_ids", false},
		{"carpentry on the deprecated path", "/api/public/booking-options", with(faucetSearch(), func(b map[string]any) {
			b["vertical_id"] = "carpentry"
		}), bokat.CodeUnsupportedVertical, "Carpentry cannot be booked", false},
		{"unknown job type", "/v1/booking-options", with(faucetSearch(), func(b map[string]any) { b["job_type_id"] = "install_sauna" }),
			bokat.CodeUnsupportedJobType, "Pick the one job_type_id", true},
		{"job type of another vertical", "/api/public/booking-options", with(faucetSearch(), func(b map[string]any) {
			b["job_type_id"] = "cleaning_window"
		}), bokat.CodeUnsupportedJobType, "Pick the one job_type_id", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := e.do(request{Method: "POST", Path: tc.path, Body: tc.body})
			legacy := strings.HasPrefix(tc.path, "/api/")
			if legacy {
				if r.Status != 422 || r.JSON["error"] != string(tc.code) || r.Header.Get("Deprecation") == "" {
					t.Fatalf("legacy: status %d body %s", r.Status, r.Body)
				}
			} else {
				checkProblem(t, r, 422, tc.code, tc.path)
			}
			if !slices.Equal(r.JSON["supported_vertical_ids"].([]any), supported) {
				t.Errorf("supported_vertical_ids = %v", r.JSON["supported_vertical_ids"])
			}
			if step, _ := r.JSON["safe_next_step"].(string); !strings.HasPrefix(step, tc.stepPrefix) {
				t.Errorf("safe_next_step = %q, want it to start %q", step, tc.stepPrefix)
			}
			if ids, _ := r.JSON["accepted_job_type_ids"].([]any); tc.accepted != (len(ids) == 17 && ids[0] == "leak_visible") {
				t.Errorf("accepted_job_type_ids = %v", r.JSON["accepted_job_type_ids"])
			}
		})
	}
}

func TestSearchOverHTTPValidatesTheRequest(t *testing.T) {
	t.Parallel()
	e := sqliteEnv(t).withDemoSupply()
	const whenHome = ` when vertical_id is "moving" and job_type_id is "moving_home"`
	tests := []struct {
		name  string
		body  map[string]any
		issue string
	}{
		{"moving_home without destination", with(movingHomeSearch(), func(b map[string]any) { delete(b, "destination_location") }),
			`destination_location: is required when vertical_id is "moving" and job_type_id is one of "moving_home", "moving_office", "moving_piano"`},
		{"moving_home without details", with(movingHomeSearch(), func(b map[string]any) { delete(b, "details") }), "details: is required" + whenHome},
		{"moving_home without boxes", with(movingHomeSearch(), func(b map[string]any) { delete(b["details"].(map[string]any), "boxes") }),
			"details.boxes: is required" + whenHome},
		{"postcode", with(faucetSearch(), func(b map[string]any) { b["location"].(map[string]any)["postcode"] = "1134" }),
			`location.postcode: must match the pattern "^[0-9]{3} ?[0-9]{2}$"`},
		{"street address", with(faucetSearch(), func(b map[string]any) { b["location"].(map[string]any)["address"] = "Drottninggatan 1" }),
			`location: unknown field "address"`},
		{"customer data", with(faucetSearch(), func(b map[string]any) { b["customer"] = map[string]any{"name": "Anna"} }),
			`(root): unknown field "customer"`},
		{"contact data in details", with(faucetSearch(), func(b map[string]any) { b["details"] = map[string]any{"email": "anna@example.se"} }),
			"details.email: must not be sent with a search; customer name, address, phone and e-mail belong in the confirmation only"},
		{"no timing", with(faucetSearch(), func(b map[string]any) { b["timing"] = map[string]any{} }),
			"timing: must include preferred_time_text, or urgency"},
		{"country", with(faucetSearch(), func(b map[string]any) { b["location"].(map[string]any)["country_code"] = "NO" }),
			`location.country_code: must be "SE"`},
		{"quantity not a number", with(faucetSearch(), func(b map[string]any) {
			b["vertical_id"], b["job_type_id"] = "cleaning", "cleaning_window"
			b["details"] = map[string]any{"window_count": "tolv"}
		}), "details.window_count: must be an integer"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := e.do(request{Method: "POST", Path: "/v1/booking-options", Body: tc.body})
			checkProblem(t, r, 400, bokat.CodeValidationFailed, "/v1/booking-options")
			issues, _ := r.JSON["issues"].([]any)
			if !slices.Contains(issues, any(tc.issue)) {
				t.Errorf("issues = %q, want %q", issues, tc.issue)
			}
			if strings.Contains(string(r.Body), "anna@example.se") || strings.Contains(string(r.Body), "Drottninggatan") {
				t.Error("the error echoes submitted contact data")
			}
		})
	}
	t.Run("moving_home valid", func(t *testing.T) {
		t.Parallel()
		r := e.do(request{Method: "POST", Path: "/v1/booking-options", Body: movingHomeSearch()})
		if r.Status != 200 || r.JSON["direct_booking_available"] != true {
			t.Fatalf("status %d: %s", r.Status, r.Body)
		}
	})
}

func TestLegacySearchSharesTheHandler(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		e.withDemoSupply()
		r := e.do(request{Method: "POST", Path: "/api/public/booking-options", Body: faucetSearch(), Header: bearer(e.token)})
		if r.Status != 200 || r.JSON["direct_booking_available"] != true || r.JSON["option_count"] != float64(6) {
			t.Fatalf("status %d: %s", r.Status, r.Body)
		}
		if r.Header.Get("Deprecation") == "" || r.Header.Get("Link") != `<http://bokat.test/v1/booking-options>; rel="successor-version"` {
			t.Errorf("Deprecation %q Link %q", r.Header.Get("Deprecation"), r.Header.Get("Link"))
		}
		bad := e.do(request{Method: "POST", Path: "/api/public/booking-options", Body: with(faucetSearch(), func(b map[string]any) { b["description"] = "kort" })})
		if bad.Status != 400 || bad.JSON["ok"] != false || bad.JSON["error"] != "validation_failed" || bad.Header.Get("Content-Type") != "application/json" {
			t.Errorf("legacy error: %d %s %s", bad.Status, bad.Header.Get("Content-Type"), bad.Body)
		}
	})
}

func TestSearchWithoutSigningKeysAnswers503(t *testing.T) {
	t.Parallel()
	e := sqliteEnv(t, func(c *envConfig) {
		s, err := booking.NewSearch(booking.Config{Catalog: c.Catalog, Store: c.Store.(*sqlstore.DB)})
		if err != nil {
			t.Fatal(err)
		}
		c.Search = s
	})
	e.withDemoSupply()
	r := e.do(request{Method: "POST", Path: "/v1/booking-options", Body: faucetSearch()})
	checkProblem(t, r, 503, bokat.CodeOptionSigningNotConfigured, "/v1/booking-options")
	if r.Header.Get("Retry-After") == "" {
		t.Error("no Retry-After")
	}
	// The unsupported vertical is still reported as such.
	r = e.do(request{Method: "POST", Path: "/v1/booking-options", Body: with(faucetSearch(), func(b map[string]any) { b["vertical_id"] = "gardening" })})
	checkProblem(t, r, 422, bokat.CodeUnsupportedVertical, "/v1/booking-options")
}

func TestTermsPage(t *testing.T) {
	t.Parallel()
	e := sqliteEnv(t)
	cat, _ := loadCatalog()
	svc, _ := cat.Service("moving_home_starter_3h")
	r := e.do(request{Method: "GET", Path: "/terms/moving_home_starter_3h", NoValidate: true})
	if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") || r.Header.Get("Content-Language") != "sv" {
		t.Fatalf("status %d, Content-Type %q", r.Status, r.Header.Get("Content-Type"))
	}
	page := string(r.Body)
	for _, want := range []string{svc.Terms.Version, "<h2>Vad som ingår</h2>", "<h2>Avbokning och ombokning</h2>", "<li>" + svc.Scope.IncludedSV[0] + "</li>",
		`<a href="https://www.konsumentverket.se/">`} {
		if !strings.Contains(page, want) {
			t.Errorf("the terms page lacks %q", want)
		}
	}
	for _, sec := range svc.Terms.Sections {
		if !strings.Contains(page, `id="`+sec.ID+`"`) {
			t.Errorf("the terms page lacks section %s", sec.ID)
		}
	}
	r = e.do(request{Method: "GET", Path: "/terms/no_such_service", NoValidate: true})
	if r.Status != 404 || r.JSON["code"] != "not_found" {
		t.Errorf("unknown service: %d %s", r.Status, r.Body)
	}
}
