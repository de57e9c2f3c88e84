package httpapi

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"bokat"
	"bokat/internal/booking"
	"bokat/internal/sqlstore"
	"bokat/internal/supply"
)

// TestCapabilitiesDescribeTheTaxReductionRules checks that capability
// discovery states the ROT and RUT rules with their dates and caps, each job
// type's decision with its source, and the agent contract's forbidden claim
// and phrasing of the estimate.
func TestCapabilitiesDescribeTheTaxReductionRules(t *testing.T) {
	t.Parallel()
	e := sqliteEnv(t)
	r := e.do(request{Method: "GET", Path: "/v1/capabilities"})
	if r.Status != 200 {
		t.Fatalf("capabilities: %d %s", r.Status, r.Body)
	}
	rules, _ := r.JSON["tax_reduction_rules"].(map[string]any)
	if rules["preliminary"] != true || rules["caps_applied"] != false {
		t.Fatalf("tax_reduction_rules = %v", rules)
	}
	type rule struct {
		kind      string
		rate      float64
		from, end string
	}
	got := map[string]rule{}
	for _, x := range rules["rules"].([]any) {
		m := x.(map[string]any)
		end, _ := m["paid_until"].(string)
		got[m["version"].(string)] = rule{m["kind"].(string), m["rate_percent"].(float64), m["paid_from"].(string), end}
		if m["yearly_cap_sek"] != float64(75000) || len(m["sources"].([]any)) == 0 {
			t.Errorf("rule %v: caps or sources wrong", m)
		}
		if m["kind"] == "rot" && m["kind_yearly_cap_sek"] != float64(50000) {
			t.Errorf("ROT rule %v: kind cap, want 50000", m)
		}
	}
	want := map[string]rule{
		"rot_2025-05-12": {"rot", 50, "2025-05-12", "2025-12-31"},
		"rot_2026-01-01": {"rot", 30, "2026-01-01", ""},
		"rut_2025-01-01": {"rut", 50, "2025-01-01", ""},
	}
	for v, w := range want {
		if got[v] != w {
			t.Errorf("rule %s = %+v, want %+v", v, got[v], w)
		}
	}
	kinds := rules["kinds"].([]any)
	if len(kinds) != 2 || !strings.Contains(kinds[0].(map[string]any)["counts_en"].(string), "Material") {
		t.Errorf("kinds = %v", kinds)
	}

	decided := map[string]string{}
	for _, v := range r.JSON["supported_verticals"].([]any) {
		for _, jt := range v.(map[string]any)["job_types"].([]any) {
			m := jt.(map[string]any)
			td, _ := m["tax_deduction"].(map[string]any)
			if s, _ := td["source"].(string); !strings.Contains(s, "Skatteverket") {
				t.Errorf("%s: tax_deduction %v cites no source", m["job_type_id"], td)
			}
			decided[m["job_type_id"].(string)], _ = td["kind"].(string)
		}
	}
	for id, kind := range map[string]string{"install_faucet": "rot", "electrical_install_ceiling_lamp": "rot",
		"cleaning_window": "rut", "moving_home": "rut", "electrical_install_ev_charger": "none"} {
		if decided[id] != kind {
			t.Errorf("%s: tax_deduction kind = %q, want %s", id, decided[id], kind)
		}
	}

	contract := r.JSON["agent_contract"].(map[string]any)
	found := false
	for _, c := range contract["forbidden_claims"].([]any) {
		if s := c.(string); strings.Contains(s, "ROT/RUT reduction as granted or as the booked price") {
			found = true
		}
	}
	if !found {
		t.Errorf("forbidden_claims lack the ROT/RUT claim: %v", contract["forbidden_claims"])
	}
	if s := contract["safe_next_step"].(string); !strings.Contains(s, "tax_reduction_estimate") || !strings.Contains(s, "preliminary estimate") ||
		!strings.Contains(s, "never ask the user for their personal identity number") {
		t.Errorf("safe_next_step does not say how to phrase the estimate: %q", s)
	}
}

// taxSupply has, in 113 45, a plumber stating its labour share, one that
// does not, a window cleaner stating 100 % and an electrician stating a
// labour share for an EV charger (a job type that gives no reduction).
const taxSupply = `version: 1
providers:
  - id: prv_rot
    name: Rot Rör AB
    email: rot@example.se
    postcodes: ["113"]
    hours: {weekdays: ["08:00-17:00"]}
    services:
      - {service_id: vvs_install_faucet_standard, price_sek: 2000, labour_percent: 80}
      - {service_id: electrician_install_ev_charger_standard, price_sek: 9000, labour_percent: 90}
  - id: prv_plain
    name: Plain Rör AB
    email: plain@example.se
    postcodes: ["113"]
    hours: {weekdays: ["08:00-17:00"]}
    services:
      - {service_id: vvs_install_faucet_standard, price_sek: 1900}
  - id: prv_rut
    name: Rut Fönster AB
    email: rut@example.se
    postcodes: ["113"]
    hours: {weekdays: ["08:00-17:00"]}
    services:
      - {service_id: cleaning_window_per_window, unit_price_sek: 85, labour_percent: 100}
`

func (e *testEnv) withSupply(file string) {
	e.t.Helper()
	cat, _ := loadCatalog()
	if _, err := supply.Import(context.Background(), sqlstore.Bind[supply.Tx](e.db), cat, "tax.yaml", []byte(file), time.Now()); err != nil {
		e.t.Fatal(err)
	}
}

// optionOf returns the first option of the provider among opts.
func optionOf(t testing.TB, opts []map[string]any, provider string) map[string]any {
	t.Helper()
	for _, o := range opts {
		if optionProvider(o) == provider {
			return o
		}
	}
	t.Fatalf("no option of %s", provider)
	return nil
}

// TestTaxEstimateFromSearchToStatus follows an estimate through search,
// confirmation, status, a change of the provider's labour share and MCP, on
// both engines; every response is validated against the contract.
func TestTaxEstimateFromSearchToStatus(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		e.withSupply(taxSupply)
		search := e.do(request{Method: "POST", Path: "/v1/booking-options", Body: faucetSearch()})
		if s, _ := search.JSON["safe_next_step"].(string); !strings.Contains(s, "tax_reduction_estimate") ||
			!strings.Contains(s, "never ask for a personal identity number") {
			t.Errorf("search safe_next_step does not say how to phrase the estimate: %q", s)
		}
		opts := e.options(t, faucetSearch())
		rot := optionOf(t, opts, "prv_rot")
		est, _ := rot["tax_reduction_estimate"].(map[string]any)
		// 2000 SEK, 80 % labour: 1600 SEK labour, 30 % ROT (work paid from 2026): 480 SEK.
		want := map[string]any{"preliminary": true, "kind": "rot", "rate_percent": float64(30), "labour_percent": float64(80),
			"labour_amount_sek": float64(1600), "estimated_reduction_sek": float64(480), "price_after_reduction_sek": float64(1520),
			"rules_version": "rot_2026-01-01", "caps_applied": false, "yearly_cap_sek": float64(75000), "kind_yearly_cap_sek": float64(50000)}
		for k, v := range want {
			if est[k] != v {
				t.Errorf("option estimate %s = %v, want %v", k, est[k], v)
			}
		}
		if price := rot["price"].(map[string]any); price["amount_sek"] != float64(2000) {
			t.Errorf("the option's price changed with the estimate: %v", price)
		}
		conditions := map[string]bool{}
		for _, c := range est["conditions"].([]any) {
			conditions[c.(map[string]any)["id"].(string)] = true
		}
		for _, id := range []string{"yearly_allowance", "rot_ownership", "invoicing_details"} {
			if !conditions[id] {
				t.Errorf("the estimate lacks the condition %s: %v", id, est["conditions"])
			}
		}
		if label, _ := est["label_en"].(string); !strings.Contains(label, "Preliminary") || !strings.Contains(label, "not the booked price") {
			t.Errorf("label_en = %q", label)
		}
		if _, has := optionOf(t, opts, "prv_plain")["tax_reduction_estimate"]; has {
			t.Errorf("a price without a stated labour part got an estimate")
		}

		// Confirmation and status show the option's figure; the booked price stays the full price.
		r := e.do(request{Method: "POST", Path: "/v1/bookings", Body: confirmBody(rot, "tax-1"), Header: bearer(e.token)})
		if r.Status != 201 {
			t.Fatalf("confirm: %d %s", r.Status, r.Body)
		}
		b := r.JSON["booking"].(map[string]any)
		if b["price_sek"] != float64(2000) || !jsonEqual(t, mustJSON(t, b["tax_reduction_estimate"]), mustJSON(t, est)) {
			t.Errorf("confirmed booking: price %v, estimate %v; want 2000 and the option's %v", b["price_sek"], b["tax_reduction_estimate"], est)
		}
		if s, _ := r.JSON["safe_next_step"].(string); !strings.Contains(s, "about 480 SEK") || !strings.Contains(s, "not a granted reduction") {
			t.Errorf("confirm safe_next_step = %q", s)
		}
		id := b["id"].(string)
		status := e.do(request{Method: "GET", Path: "/v1/bookings/" + id, Header: bearer(e.token)})
		if got := status.JSON["booking"].(map[string]any)["tax_reduction_estimate"]; !jsonEqual(t, mustJSON(t, got), mustJSON(t, est)) {
			t.Errorf("status estimate = %v, want %v", got, est)
		}

		// The provider now states another labour share: the booking keeps its
		// figure, and an option issued before refreshes.
		older := opts[len(opts)-1]
		for _, o := range opts {
			if optionProvider(o) == "prv_rot" && o["booking_option_id"] != rot["booking_option_id"] {
				older = o
			}
		}
		e.withSupply(strings.Replace(taxSupply, "price_sek: 2000, labour_percent: 80", "price_sek: 2000, labour_percent: 50", 1))
		status = e.do(request{Method: "GET", Path: "/v1/bookings/" + id, Header: bearer(e.token)})
		if got := status.JSON["booking"].(map[string]any)["tax_reduction_estimate"].(map[string]any); got["estimated_reduction_sek"] != float64(480) {
			t.Errorf("after the labour share changed, the booking's estimate = %v, want its 480", got)
		}
		if optionProvider(older) == "prv_rot" {
			r = e.do(request{Method: "POST", Path: "/v1/bookings", Body: confirmBody(older, "tax-2"), Header: bearer(e.token)})
			checkProblem(t, r, 409, bokat.CodeBookingOptionChanged, "/v1/bookings")
		} else {
			t.Errorf("the search gave prv_rot one option only")
		}

		// A reschedule takes the new option's figure (now 50 % labour: 300 SEK),
		// and the booking's own options to move to show it.
		moves := e.do(request{Method: "POST", Path: "/v1/bookings/" + id + "/booking-options", Body: rescheduleOptionsBody(), Header: bearer(e.token)})
		if moves.Status != 200 {
			t.Fatalf("reschedule options: %d %s", moves.Status, moves.Body)
		}
		var moveTo map[string]any
		for _, x := range moves.JSON["options"].([]any) {
			o := x.(map[string]any)
			if got, _ := o["tax_reduction_estimate"].(map[string]any); got["estimated_reduction_sek"] != float64(300) {
				t.Errorf("reschedule option estimate = %v, want 2000 × 50 %% × 30 %% = 300", got)
			}
			if moveTo == nil && optionStart(o) != b["slot_start_at"] {
				moveTo = o
			}
		}
		if s, _ := moves.JSON["safe_next_step"].(string); !strings.Contains(s, "tax_reduction_estimate") {
			t.Errorf("reschedule options safe_next_step does not say how to phrase the estimate: %q", s)
		}
		if moveTo == nil {
			t.Fatal("no other option of prv_rot to move to")
		}
		r = e.do(request{Method: "POST", Path: "/v1/bookings/" + id + "/reschedule", Body: rescheduleBody(moveTo, "tax-move"), Header: bearer(e.token)})
		if r.Status != 200 {
			t.Fatalf("reschedule: %d %s", r.Status, r.Body)
		}
		moved := r.JSON["booking"].(map[string]any)["tax_reduction_estimate"].(map[string]any)
		if moved["estimated_reduction_sek"] != float64(300) || moved["labour_percent"] != float64(50) ||
			!jsonEqual(t, mustJSON(t, moved), mustJSON(t, moveTo["tax_reduction_estimate"])) {
			t.Errorf("rescheduled estimate = %v, want the new option's %v", moved, moveTo["tax_reduction_estimate"])
		}
		est = moved

		// The events (the bodies webhooks deliver) carry each figure: the
		// confirmation's 480 SEK, the reschedule's 300 SEK.
		wantEvents := map[string]float64{"booking.confirmed": 480, "booking.rescheduled": 300}
		events := e.do(request{Method: "GET", Path: "/v1/events", Header: bearer(e.token)})
		for _, ev := range events.JSON["events"].([]any) {
			m := ev.(map[string]any)
			eb := m["data"].(map[string]any)["booking"].(map[string]any)
			want, ok := wantEvents[m["type"].(string)]
			if !ok || eb["id"] != id {
				continue
			}
			delete(wantEvents, m["type"].(string))
			got, _ := eb["tax_reduction_estimate"].(map[string]any)
			if got["estimated_reduction_sek"] != want || got["preliminary"] != true || len(got["conditions"].([]any)) == 0 {
				t.Errorf("%s event: estimate %v, want %v SEK with its conditions", m["type"], got, want)
			}
		}
		if len(wantEvents) != 0 {
			t.Errorf("no event of %v for %s", wantEvents, id)
		}

		// RUT on a per-window price: 10 windows × 85 SEK, all labour, 50 %.
		windows := with(faucetSearch(), func(b map[string]any) {
			b["vertical_id"], b["job_type_id"], b["description"] = "cleaning", "cleaning_window", "Fönsterputs, tio fönster."
			b["details"] = map[string]any{"window_count": 10}
		})
		rut := optionOf(t, e.options(t, windows), "prv_rut")["tax_reduction_estimate"].(map[string]any)
		if rut["kind"] != "rut" || rut["rate_percent"] != float64(50) || rut["labour_amount_sek"] != float64(850) ||
			rut["estimated_reduction_sek"] != float64(425) || rut["price_after_reduction_sek"] != float64(425) {
			t.Errorf("window cleaning estimate = %v", rut)
		}
		for _, c := range rut["conditions"].([]any) {
			if c.(map[string]any)["id"] == "rot_ownership" {
				t.Errorf("a RUT estimate states ROT's ownership rule")
			}
		}

		// An EV charger gives no ROT, whatever the labour share.
		charger := with(faucetSearch(), func(b map[string]any) {
			b["vertical_id"], b["job_type_id"], b["description"] = "electrician", "electrical_install_ev_charger", "Laddbox på husväggen."
		})
		if _, has := optionOf(t, e.options(t, charger), "prv_rot")["tax_reduction_estimate"]; has {
			t.Errorf("an EV charger option got a ROT/RUT estimate")
		}

		// MCP tool results are the REST bodies: the same estimate.
		s := e.mcpConnect(t, mcpEras[len(mcpEras)-1], e.token)
		found := s.call("search_booking_options", faucetSearch()).success(t, "search")
		var viaMCP map[string]any
		for _, o := range found["options"].([]any) {
			if om := o.(map[string]any); optionProvider(om) == "prv_rot" {
				viaMCP, _ = om["tax_reduction_estimate"].(map[string]any)
			}
		}
		if viaMCP["estimated_reduction_sek"] != float64(300) || viaMCP["labour_percent"] != float64(50) {
			t.Errorf("MCP search estimate = %v, want 2000 × 50 %% × 30 %% = 300", viaMCP)
		}
		st := s.call("get_booking_status", map[string]any{"booking_id": id}).success(t, "status")
		if got := st["booking"].(map[string]any)["tax_reduction_estimate"]; !jsonEqual(t, mustJSON(t, got), mustJSON(t, est)) {
			t.Errorf("MCP status estimate = %v, want %v", got, est)
		}
	})
}

// TestConfirmRefusesAnOptionWhoseEstimateNoLongerHolds checks that an
// option signed with another labour share or another ROT/RUT rule than the
// current ones must be searched again, like an option with another price.
func TestConfirmRefusesAnOptionWhoseEstimateNoLongerHolds(t *testing.T) {
	t.Parallel()
	e := sqliteEnv(t)
	e.withSupply(taxSupply)
	rot := optionOf(t, e.options(t, faucetSearch()), "prv_rot")
	plain := optionOf(t, e.options(t, faucetSearch()), "prv_plain")
	tests := []struct {
		name   string
		option map[string]any
		mutate func(*booking.OptionClaims)
	}{
		{"another labour share", rot, func(c *booking.OptionClaims) { c.Labour = bokat.StatedLabour(90) }},
		{"labour share no longer stated", rot, func(c *booking.OptionClaims) { c.Labour = bokat.LabourShare{} }},
		{"another rule", rot, func(c *booking.OptionClaims) { c.TaxRulesVersion = "rot_2025-05-12" }},
		{"a rule where none applies", plain, func(c *booking.OptionClaims) { c.TaxRulesVersion = "rot_2026-01-01" }},
	}
	for i, tt := range tests {
		body := confirmBody(tt.option, fmt.Sprintf("tax-stale-%d", i))
		body["booking_option_id"] = resign(t, tt.option, tt.mutate)
		r := e.do(request{Method: "POST", Path: "/v1/bookings", Body: body, Header: bearer(e.token)})
		if r.Status != 409 || r.JSON["code"] != string(bokat.CodeBookingOptionChanged) {
			t.Errorf("%s: %d %s, want 409 booking_option_changed", tt.name, r.Status, r.Body)
		}
	}
	r := e.do(request{Method: "POST", Path: "/v1/bookings", Body: confirmBody(rot, "tax-fresh"), Header: bearer(e.token)})
	if r.Status != 201 {
		t.Errorf("the unchanged option: %d %s", r.Status, r.Body)
	}
}
