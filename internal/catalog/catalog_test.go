package catalog

import (
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// specRow is one row of a job-type table of the interface specification,
// copied cell by cell: job_type_id, routing, fit, seed ("-" or
// "service_id / model / ptype / mode / fit") and required_signals.
type specRow struct {
	id, routing, fit, seed, signals string
}

// specJobTypes are the four job-type tables of the interface specification,
// in table order.
var specJobTypes = map[string][]specRow{
	"vvs": {
		{"leak_visible", "standardized", "medium", "-", "leak_source_known, leak_activity_known, shutoff_status_known"},
		{"leak_hidden", "needs_clarification", "low", "-", "hidden_damage_context_known"},
		{"leak_faucet_fixture", "standardized", "high", "-", "fixture_known, leak_pattern_known"},
		{"leak_appliance", "standardized", "medium", "-", "fixture_known, leak_pattern_known, shutoff_status_known"},
		{"clog_fixture", "standardized", "high", "vvs_drain_jetting_single_starting / starting_price / starting_price / quote_or_visit / medium", "fixture_known, blockage_severity_known"},
		{"clog_toilet", "standardized", "medium", "-", "overflow_status_known, backup_scope_known"},
		{"clog_main_backup", "needs_clarification", "low", "-", "backup_scope_known, sewage_present_known"},
		{"toilet_running_refill", "standardized", "high", "-", "running_pattern_known"},
		{"toilet_weak_flush", "standardized", "medium", "-", "flush_scope_known"},
		{"hotwater_no_hot", "needs_clarification", "medium", "-", "hot_water_scope_known"},
		{"hotwater_leak_or_safety", "needs_clarification", "low", "-", "heater_symptom_known"},
		{"pressure_single_fixture", "standardized", "medium", "-", "pressure_scope_known, pressure_timeline_known"},
		{"pressure_whole_home", "needs_clarification", "low", "-", "pressure_scope_known, pressure_timeline_known"},
		{"install_faucet", "standardized", "high", "vvs_install_faucet_standard / flat / avg_fixed / direct_job_candidate / high", "install_target_known, install_type_known, product_on_site_known"},
		{"install_toilet", "standardized", "medium", "vvs_install_toilet_standard / flat / avg_fixed / direct_job_candidate / high", "install_type_known, product_on_site_known"},
		{"install_appliance_hookup", "standardized", "high", "vvs_install_appliance_hookup_standard / flat / avg_fixed / direct_job_candidate / high", "install_target_known, product_on_site_known, connection_readiness_known"},
		{"install_other_fixture", "needs_clarification", "low", "vvs_install_outdoor_tap_standard / flat / avg_fixed / quote_or_visit / medium", "install_target_known, install_type_known, product_on_site_known"},
	},
	"electrician": {
		{"electrical_hidden_fault", "needs_clarification", "low", "-", "symptom_known, power_scope_known, breaker_rcd_status_known, safety_risk_known, urgency_known"},
		{"electrical_panel_work", "needs_clarification", "low", "-", "panel_work_type_known, electrical_panel_known, main_fuse_or_capacity_known, safety_risk_known, drawings_or_photos_known"},
		{"electrical_power_outage", "needs_clarification", "low", "-", "power_scope_known, breaker_rcd_status_known, safety_risk_known, urgency_known, issue_scope_known"},
		{"electrical_install_ev_charger", "needs_clarification", "medium", "electrician_install_ev_charger_standard / flat / avg_fixed / quote_or_visit / medium", "charger_model_known, charger_location_known, electrical_panel_known, load_balancing_known, cable_route_known"},
		{"electrical_solar_pv", "specialist", "low", "-", "renovation_scope_known, electrical_panel_known, cable_route_known, drawings_or_photos_known, access_known"},
		{"electrical_install_spotlights", "needs_clarification", "medium", "electrician_install_spotlights_per_item / per_item / avg_unit / quote_or_visit / medium", "spot_count_known, ceiling_type_known, existing_wiring_known, dimmer_product_known, room_type_known"},
		{"electrical_install_dimmer", "standardized", "high", "electrician_install_dimmer_standard / flat / avg_fixed / direct_job_candidate / high", "fixture_type_known, existing_point_known, dimmer_product_known, indoor_outdoor_wetroom_known"},
		{"electrical_replace_outlet_switch", "standardized", "high", "electrician_replace_outlet_switch_standard / flat / avg_fixed / direct_job_candidate / high", "fixture_type_known, quantity_known, existing_point_known, indoor_outdoor_wetroom_known"},
		{"electrical_appliance_hookup", "needs_clarification", "medium", "-", "appliance_type_known, phase_or_power_known, connection_readiness_known, product_on_site_known, indoor_outdoor_wetroom_known"},
		{"electrical_heating_ventilation", "needs_clarification", "medium", "-", "heating_or_fan_type_known, room_type_known, existing_point_known, product_on_site_known, indoor_outdoor_wetroom_known"},
		{"electrical_install_ceiling_lamp", "standardized", "high", "electrician_install_ceiling_lamp_standard / flat / avg_fixed / direct_job_candidate / high", "lamp_count_known, existing_point_known, ceiling_height_known, product_on_site_known, indoor_outdoor_wetroom_known"},
		{"electrical_new_circuit", "needs_clarification", "low", "-", "fixture_type_known, indoor_outdoor_wetroom_known, cable_route_known, electrical_panel_known, drawings_or_photos_known"},
		{"electrical_inspection_safety", "specialist", "low", "-", "inspection_reason_known, renovation_scope_known, drawings_or_photos_known, access_known"},
		{"electrical_service_visit", "standardized", "medium", "electrician_service_visit_3h / flat / avg_fixed / quote_or_visit / medium", "service_window_known, non_emergency_known, issue_scope_known"},
	},
	"moving": {
		{"moving_home", "standardized", "high", "moving_home_starter_3h / flat / avg_fixed / direct_job_candidate / high", "move_size_known, from_to_known, access_known, inventory_known, date_known"},
		{"moving_office", "needs_clarification", "low", "-", "move_size_known, from_to_known, access_known, inventory_known, date_known"},
		{"moving_packing", "standardized", "medium", "moving_packing_two_packers_2h / per_hour / avg_unit / quote_or_visit / medium", "packing_scope_known, inventory_known, date_known"},
		{"moving_piano", "specialist", "low", "moving_piano_standard_local / flat / avg_fixed / direct_job_candidate / high", "item_details_known, from_to_known, access_known, date_known"},
		{"moving_storage", "needs_clarification", "low", "-", "move_size_known, storage_duration_known, from_to_known, date_known"},
		{"moving_heavy_lift", "specialist", "low", "moving_heavy_lift_2h / per_hour / avg_unit / quote_or_visit / medium", "item_details_known, from_to_known, access_known, date_known"},
		{"moving_disposal", "needs_clarification", "low", "-", "disposal_scope_known, access_known, date_known"},
	},
	"cleaning": {
		{"cleaning_move_out", "standardized", "high", "cleaning_move_out_per_sqm / per_sqm / avg_unit / direct_job_candidate / high", "property_size_known, move_state_known, inspection_deadline_known, add_ons_known, access_known, guarantee_expectation_known"},
		{"cleaning_window", "standardized", "high", "cleaning_window_per_window / per_window / avg_unit / direct_job_candidate / high", "window_count_known, window_sides_known, height_access_known, inside_outside_known, schedule_known"},
		{"cleaning_home_deep", "standardized", "medium", "cleaning_home_deep_per_sqm / per_sqm / avg_unit / direct_job_candidate / high", "property_size_known, scope_depth_known, heavy_soil_known, add_ons_known, access_known, schedule_known"},
		{"cleaning_office_recurring", "standardized", "medium", "cleaning_office_recurring_hourly / per_hour / avg_recurring / recurring_service_start / medium", "commercial_premise_known, area_size_known, frequency_known, after_hours_access_known, invoice_details_known, schedule_known"},
		{"cleaning_commercial_site", "needs_clarification", "low", "-", "commercial_premise_known, area_size_known, operating_constraints_known, hygiene_level_known, after_hours_access_known, schedule_known"},
		{"cleaning_stairwell_property", "standardized", "medium", "cleaning_stairwell_property_recurring_hourly / per_hour / avg_recurring / recurring_service_start / medium", "building_common_areas_known, floors_or_stairwells_known, frequency_known, access_known, property_owner_or_board_known, schedule_known"},
		{"cleaning_post_construction", "needs_clarification", "medium", "cleaning_post_construction_per_sqm / per_sqm / avg_unit / quote_or_visit / medium", "site_stage_known, area_size_known, dust_debris_level_known, waste_removal_known, water_electricity_known, access_known"},
		{"cleaning_floor_care", "needs_clarification", "medium", "-", "surface_material_known, area_size_known, treatment_type_known, furniture_moving_known, drying_access_known, schedule_known"},
		{"cleaning_textile_carpet", "needs_clarification", "medium", "cleaning_textile_carpet_small_job / flat / avg_fixed / quote_or_visit / medium", "textile_type_known, area_or_item_count_known, stain_type_known, on_site_or_pickup_known, drying_access_known, schedule_known"},
		{"cleaning_death_estate", "needs_clarification", "low", "-", "property_size_known, estate_state_known, waste_removal_known, sensitive_material_known, access_known, deadline_known"},
		{"cleaning_mold_graffiti", "specialist", "low", "-", "contamination_type_known, surface_material_known, affected_area_known, cause_or_source_known, photo_or_inspection_known, access_known"},
		{"cleaning_sanitation", "specialist", "low", "-", "contamination_type_known, affected_area_known, severity_known, safety_risk_known, photo_or_inspection_known, access_known"},
		{"cleaning_exterior_surface", "specialist", "low", "-", "surface_type_known, surface_area_known, height_access_known, water_access_known, soil_growth_known, photo_or_inspection_known"},
		{"cleaning_specialist_inspection", "specialist", "low", "-", "specialist_context_known, site_requirements_known, safety_risk_known, access_known, photo_or_inspection_known, schedule_known"},
		{"cleaning_home_recurring", "standardized", "high", "cleaning_home_recurring_hourly / per_hour / avg_recurring / recurring_service_start / medium", "property_size_known, frequency_known, rooms_and_bathrooms_known, access_known, supplies_known, schedule_known"},
		{"cleaning_home_one_off", "standardized", "medium", "cleaning_home_one_off_hourly / per_hour / avg_unit / quote_or_visit / medium", "property_size_known, scope_depth_known, rooms_and_bathrooms_known, access_known, supplies_known, schedule_known"},
	},
}

// load returns a copy of the embedded catalog of the test's own, parsed
// as Load parses it: the tests that break one to see Check fail must not
// change the catalog Load shares.
func load(tb testing.TB) *Catalog {
	tb.Helper()
	c, err := parse([]byte(catalogFile))
	if err != nil {
		tb.Fatalf("Load: %v", err)
	}
	return c
}

func TestLoad(t *testing.T) {
	t.Parallel()
	c, err := Load()
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if err := c.Check(); err != nil {
		t.Errorf("Check of the loaded catalog: %v", err)
	}
	if again, _ := Load(); again != c {
		t.Error("Load parsed the catalog again, want the one shared catalog")
	}
	if !reflect.DeepEqual(c, load(t)) {
		t.Error("the shared catalog differs from a fresh parse")
	}
}

func TestJobTypesMatchSpec(t *testing.T) {
	t.Parallel()
	c := load(t)
	if got, want := c.VerticalIDs(), []string{"vvs", "electrician", "moving", "cleaning"}; !slices.Equal(got, want) {
		t.Fatalf("VerticalIDs() = %v, want %v", got, want)
	}
	for _, vid := range c.VerticalIDs() {
		rows := specJobTypes[vid]
		t.Run(vid, func(t *testing.T) {
			t.Parallel()
			var wantIDs []string
			for _, r := range rows {
				wantIDs = append(wantIDs, r.id)
			}
			if got := c.JobTypeIDs(vid); !slices.Equal(got, wantIDs) {
				t.Errorf("JobTypeIDs(%q) =\n%v\nwant (spec table order, nothing extra)\n%v", vid, got, wantIDs)
			}
			v, _ := c.Vertical(vid)
			if len(v.JobTypes) != len(rows) {
				t.Errorf("%s has %d job types, the spec table %d", vid, len(v.JobTypes), len(rows))
			}
			for _, r := range rows {
				jt, ok := c.JobType(vid, r.id)
				if !ok {
					t.Errorf("job type %s/%s of the spec is missing", vid, r.id)
					continue
				}
				if string(jt.RoutingMode) != r.routing {
					t.Errorf("%s routing_mode = %q, want %q", r.id, jt.RoutingMode, r.routing)
				}
				if string(jt.FixedPriceFit) != r.fit {
					t.Errorf("%s fixed_price_fit = %q, want %q", r.id, jt.FixedPriceFit, r.fit)
				}
				if got, want := jt.RequiredSignals, strings.Split(r.signals, ", "); !slices.Equal(got, want) {
					t.Errorf("%s required_signals =\n%v\nwant\n%v", r.id, got, want)
				}
				if got := seedCell(jt.Seed); got != r.seed {
					t.Errorf("%s fixed_price_seed = %q, want %q", r.id, got, r.seed)
				}
				if s := jt.Seed; s != nil && (s.Currency != "SEK" || !s.ProviderConfirmationRequired) {
					t.Errorf("%s seed currency %q, provider_confirmation_required %t; want SEK, true", r.id, s.Currency, s.ProviderConfirmationRequired)
				}
				if jt.LabelSV == "" || jt.LabelEN == "" {
					t.Errorf("%s labels sv %q en %q, want both", r.id, jt.LabelSV, jt.LabelEN)
				}
			}
		})
	}
	// The only label_en the tables give.
	if jt, _ := c.JobType("vvs", "leak_visible"); jt.LabelEN != "Visible leak" {
		t.Errorf("leak_visible label_en = %q, want %q", jt.LabelEN, "Visible leak")
	}
}

// seedCell renders a seed the way the spec's tables write it.
func seedCell(s *Seed) string {
	if s == nil {
		return "-"
	}
	return strings.Join([]string{s.ServiceID, string(s.PricingModel), string(s.PriceType),
		string(s.BookingModeWhenQualified), string(s.DirectBookingFit)}, " / ")
}

func TestVerticals(t *testing.T) {
	t.Parallel()
	c := load(t)
	wantCount := map[string]int{"vvs": 9, "electrician": 6, "moving": 4, "cleaning": 9}
	for _, v := range c.Verticals {
		if v.FixedPriceServiceCount != wantCount[v.ID] {
			t.Errorf("%s fixed_price_service_count = %d, want %d", v.ID, v.FixedPriceServiceCount, wantCount[v.ID])
		}
		if v.AgentStatus != "booking_and_request_supported" || v.ProviderSupply != "indexed" || v.DirectBookingSupply != "search_required" {
			t.Errorf("%s agent_status %q provider_supply %q direct_booking_supply %q", v.ID, v.AgentStatus, v.ProviderSupply, v.DirectBookingSupply)
		}
		if v.LabelSV == "" || v.LabelEN == "" || v.AgentSummary == "" {
			t.Errorf("%s: labels and agent_summary must be set", v.ID)
		}
		for _, want := range []string{"search", "follow-up request"} {
			if !strings.Contains(v.SafeNextStep, want) {
				t.Errorf("%s safe_next_step does not mention %q: %s", v.ID, want, v.SafeNextStep)
			}
		}
	}
	// The vvs count is larger than its seeded job types; the others match.
	seeded := map[string]int{}
	for _, v := range c.Verticals {
		for _, jt := range v.JobTypes {
			if jt.Seed != nil {
				seeded[v.ID]++
			}
		}
	}
	if want := map[string]int{"vvs": 5, "electrician": 6, "moving": 4, "cleaning": 9}; !maps.Equal(seeded, want) {
		t.Errorf("seeded job types per vertical = %v, want %v", seeded, want)
	}
}

func TestUnavailableVerticals(t *testing.T) {
	t.Parallel()
	c := load(t)
	want := []struct{ id, sv, en string }{
		{"painting", "Målning", "Painting"},
		{"carpentry", "Snickeri", "Carpentry"},
		{"gardening", "Trädgård", "Gardening"},
	}
	if got := c.UnavailableIDs(); len(got) != len(want) {
		t.Fatalf("UnavailableIDs() = %v, want %d verticals", got, len(want))
	}
	for _, w := range want {
		u, ok := c.Unavailable(w.id)
		if !ok {
			t.Errorf("Unavailable(%q) not found", w.id)
			continue
		}
		if u.LabelSV != w.sv || u.LabelEN != w.en {
			t.Errorf("%s labels = %q/%q, want %q/%q", w.id, u.LabelSV, u.LabelEN, w.sv, w.en)
		}
		if u.AgentStatus != "not_bookable_yet" || u.Reason != "not_bookable_yet" || u.SafeNextStep == "" {
			t.Errorf("%s = %+v, want not_bookable_yet status and reason and a safe_next_step", w.id, u)
		}
		if _, ok := c.Vertical(w.id); ok {
			t.Errorf("Vertical(%q) found an unavailable vertical", w.id)
		}
	}
}

func TestServices(t *testing.T) {
	t.Parallel()
	c := load(t)
	ids := c.ServiceIDs()
	if len(ids) != 24 {
		t.Errorf("ServiceIDs() has %d ids, want the 24 seeds of the spec", len(ids))
	}
	if got, want := slices.Sorted(maps.Keys(c.Services)), slices.Sorted(slices.Values(ids)); !slices.Equal(got, want) {
		t.Errorf("service entries\n%v\ndo not match the seeds\n%v", got, want)
	}
	for _, id := range ids {
		t.Run(id, func(t *testing.T) {
			t.Parallel()
			s, ok := c.Service(id)
			if !ok {
				t.Fatalf("Service(%q) not found", id)
			}
			jt, _ := c.JobType(s.VerticalID, s.JobTypeID)
			if jt.Seed == nil || jt.Seed.ServiceID != id || jt.Seed.PricingModel != s.PricingModel || jt.Seed.PriceType != s.PriceType {
				t.Errorf("service %s does not agree with the seed of %s/%s", id, s.VerticalID, s.JobTypeID)
			}
			if s.LabelSV == "" || s.LabelEN == "" {
				t.Errorf("labels sv %q en %q, want both", s.LabelSV, s.LabelEN)
			}
			for name, list := range map[string][]string{
				"included_sv":                  s.Scope.IncludedSV,
				"excluded_sv":                  s.Scope.ExcludedSV,
				"customer_requirements_sv":     s.Scope.CustomerRequirementsSV,
				"price_adjustment_triggers_sv": s.Scope.PriceAdjustmentTriggersSV,
				"quote_triggers_sv":            s.Scope.QuoteTriggersSV,
			} {
				if len(list) < 2 || len(list) > 5 {
					t.Errorf("scope.%s has %d items, want 2 to 5", name, len(list))
				}
				for _, item := range list {
					if strings.TrimSpace(item) == "" {
						t.Errorf("scope.%s has an empty item", name)
					}
				}
			}
			if want := "fixed_price_terms_v1:" + id; s.Terms.Version != want || TermsVersion(id) != want {
				t.Errorf("terms version = %q, TermsVersion = %q, want %q", s.Terms.Version, TermsVersion(id), want)
			}
			if want := "/terms/" + id; s.Terms.URL != want || !slices.Contains(s.Terms.SourceURLs, want) {
				t.Errorf("terms url = %q and source_urls %v, want %q in both", s.Terms.URL, s.Terms.SourceURLs, want)
			}
			for _, site := range []string{"https://www.konsumentverket.se/", "https://www.hallakonsument.se/"} {
				if !slices.Contains(s.Terms.SourceURLs, site) {
					t.Errorf("source_urls %v lack %s", s.Terms.SourceURLs, site)
				}
			}
			var sectionIDs []string
			for _, sec := range s.Terms.Sections {
				sectionIDs = append(sectionIDs, sec.ID)
				if sec.TitleSV == "" || sec.BodySV == "" {
					t.Errorf("section %s has an empty title or body", sec.ID)
				}
			}
			for _, want := range []string{"vad_som_ingar", "pris_och_betalning", "avbokning_och_ombokning", "reklamation_och_garanti", "personuppgifter"} {
				if !slices.Contains(sectionIDs, want) {
					t.Errorf("terms sections %v lack %s", sectionIDs, want)
				}
			}
			if price := sectionBody(s.Terms, "pris_och_betalning"); !strings.Contains(price, "utförarens eget") {
				t.Errorf("price section does not say the price is the provider's own: %s", price)
			}
		})
	}
}

func sectionBody(t Terms, id string) string {
	for _, sec := range t.Sections {
		if sec.ID == id {
			return sec.BodySV
		}
	}
	return ""
}

// TestServiceQuantities pins the unit, details key, quantities and duration
// rule of every service.
func TestServiceQuantities(t *testing.T) {
	t.Parallel()
	c := load(t)
	tests := []struct {
		id                  string
		unit, detail        string
		def, minQ, maxQ     float64
		fixed, perUnit, min int
	}{
		{"vvs_drain_jetting_single_starting", "", "", 0, 0, 0, 90, 0, 0},
		{"vvs_install_faucet_standard", "", "", 0, 0, 0, 90, 0, 0},
		{"vvs_install_toilet_standard", "", "", 0, 0, 0, 180, 0, 0},
		{"vvs_install_appliance_hookup_standard", "", "", 0, 0, 0, 90, 0, 0},
		{"vvs_install_outdoor_tap_standard", "", "", 0, 0, 0, 120, 0, 0},
		{"electrician_install_ev_charger_standard", "", "", 0, 0, 0, 300, 0, 0},
		{"electrician_install_spotlights_per_item", "st", "spot_count", 6, 1, 20, 0, 30, 60},
		{"electrician_install_dimmer_standard", "", "", 0, 0, 0, 60, 0, 0},
		{"electrician_replace_outlet_switch_standard", "", "", 0, 0, 0, 60, 0, 0},
		{"electrician_install_ceiling_lamp_standard", "", "", 0, 0, 0, 60, 0, 0},
		{"electrician_service_visit_3h", "", "", 0, 0, 0, 180, 0, 0},
		{"moving_home_starter_3h", "", "", 0, 0, 0, 180, 0, 0},
		{"moving_packing_two_packers_2h", "timme", "hours", 2, 2, 8, 0, 60, 120},
		{"moving_piano_standard_local", "", "", 0, 0, 0, 120, 0, 0},
		{"moving_heavy_lift_2h", "timme", "hours", 2, 2, 6, 0, 60, 120},
		{"cleaning_move_out_per_sqm", "kvm", "home_size_sqm", 60, 15, 250, 0, 3, 120},
		{"cleaning_window_per_window", "fönster", "window_count", 10, 1, 40, 0, 10, 60},
		{"cleaning_home_deep_per_sqm", "kvm", "home_size_sqm", 60, 15, 250, 0, 3, 120},
		{"cleaning_office_recurring_hourly", "timme", "hours", 2, 1, 8, 0, 60, 60},
		{"cleaning_stairwell_property_recurring_hourly", "timme", "hours", 2, 1, 8, 0, 60, 60},
		{"cleaning_post_construction_per_sqm", "kvm", "area_sqm", 60, 10, 300, 0, 4, 180},
		{"cleaning_textile_carpet_small_job", "", "", 0, 0, 0, 120, 0, 0},
		{"cleaning_home_recurring_hourly", "timme", "hours", 3, 2, 8, 0, 60, 120},
		{"cleaning_home_one_off_hourly", "timme", "hours", 4, 2, 10, 0, 60, 120},
	}
	if len(tests) != len(c.Services) {
		t.Errorf("table has %d services, catalog %d", len(tests), len(c.Services))
	}
	for _, tt := range tests {
		s, ok := c.Service(tt.id)
		if !ok {
			t.Errorf("Service(%q) not found", tt.id)
			continue
		}
		got := []any{s.Unit, s.QuantityDetail, s.DefaultQuantity, s.MinQuantity, s.MaxQuantity,
			s.Duration.FixedMinutes, s.Duration.MinutesPerUnit, s.Duration.MinimumMinutes}
		want := []any{tt.unit, tt.detail, tt.def, tt.minQ, tt.maxQ, tt.fixed, tt.perUnit, tt.min}
		if !slices.Equal(got, want) {
			t.Errorf("%s unit, detail, default, min, max, fixed, per unit, minimum =\n%v\nwant\n%v", tt.id, got, want)
		}
	}
}

func TestQuantity(t *testing.T) {
	t.Parallel()
	c := load(t)
	moveOut, _ := c.Service("cleaning_move_out_per_sqm")
	hours, _ := c.Service("moving_packing_two_packers_2h")
	flat, _ := c.Service("vvs_install_faucet_standard")
	windows, _ := c.Service("cleaning_window_per_window")
	spots, _ := c.Service("electrician_install_spotlights_per_item")
	tests := []struct {
		name    string
		s       Service
		details map[string]any
		want    float64
		wantErr error
	}{
		{"default when details are nil", moveOut, nil, 60, nil},
		{"default when key is null", moveOut, map[string]any{"home_size_sqm": nil}, 60, nil},
		{"from details", moveOut, map[string]any{"home_size_sqm": 74.5}, 74.5, nil},
		{"json number", moveOut, map[string]any{"home_size_sqm": json.Number("80")}, 80, nil},
		{"int", hours, map[string]any{"hours": 3}, 3, nil},
		{"hour default", hours, map[string]any{"other": 1}, 2, nil},
		{"below minimum", hours, map[string]any{"hours": 1}, 0, ErrQuantityOutOfRange},
		{"above maximum", moveOut, map[string]any{"home_size_sqm": 400}, 0, ErrQuantityOutOfRange},
		{"zero", moveOut, map[string]any{"home_size_sqm": 0}, 0, ErrQuantityInvalid},
		{"string", moveOut, map[string]any{"home_size_sqm": "60"}, 0, ErrQuantityInvalid},
		{"flat ignores details", flat, map[string]any{"home_size_sqm": 400}, 1, nil},
		{"fraction of hours", hours, map[string]any{"hours": 2.5}, 2.5, nil},
		{"fraction of windows", windows, map[string]any{"window_count": 2.5}, 0, ErrQuantityNotWhole},
		{"fraction of items", spots, map[string]any{"spot_count": json.Number("3.5")}, 0, ErrQuantityNotWhole},
		{"whole windows written with a fraction part", windows, map[string]any{"window_count": 12.0}, 12, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := tt.s.Quantity(tt.details)
			if !errors.Is(err, tt.wantErr) || got != tt.want {
				t.Errorf("Quantity(%v) = %v, %v; want %v, %v", tt.details, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestDurationMinutes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		rule     DurationRule
		quantity float64
		want     int
	}{
		{"fixed ignores quantity", DurationRule{FixedMinutes: 90}, 7, 90},
		{"fixed rounds up to a quarter", DurationRule{FixedMinutes: 50}, 1, 60},
		{"per unit", DurationRule{MinutesPerUnit: 3, MinimumMinutes: 120}, 60, 180},
		{"per unit minimum", DurationRule{MinutesPerUnit: 3, MinimumMinutes: 120}, 20, 120},
		{"per unit rounds up", DurationRule{MinutesPerUnit: 3, MinimumMinutes: 120}, 61, 195},
		{"hours", DurationRule{MinutesPerUnit: 60, MinimumMinutes: 120}, 2.5, 150},
	}
	for _, tt := range tests {
		if got := tt.rule.Minutes(tt.quantity); got != tt.want {
			t.Errorf("%s: Minutes(%v) = %d, want %d", tt.name, tt.quantity, got, tt.want)
		}
	}
}

func TestCapabilityTexts(t *testing.T) {
	t.Parallel()
	c := load(t)
	ct := c.Capability

	var lc map[string]any
	mustUnmarshal(t, ct.Lifecycle, &lc)
	for k, want := range map[string]any{"creates": "network_visit_request", "request_status": "ready_to_send",
		"booking_created": false, "availability_checked": false, "provider_selected": false} {
		if lc[k] != want {
			t.Errorf("lifecycle.%s = %v, want %v", k, lc[k], want)
		}
	}

	var bl struct {
		Search, Confirm, Fallback string
		AvailabilityTruth         string         `json:"availability_truth"`
		ConfirmedContract         map[string]any `json:"confirmed_contract"`
	}
	mustUnmarshal(t, ct.BookingLifecycle, &bl)
	want := map[string]any{"booking_created": true, "availability_checked": true, "provider_selected": true, "booking_status": "confirmed"}
	if !maps.Equal(bl.ConfirmedContract, want) || bl.Search == "" || bl.Confirm == "" || bl.Fallback == "" || bl.AvailabilityTruth == "" {
		t.Errorf("booking_lifecycle = %+v", bl)
	}

	auth := string(ct.Auth)
	for _, w := range []string{`"pkce_method":"S256"`, `"header_name":"X-Service-Requests-Token"`, "Authorization: Bearer <PARTNER_TOKEN>",
		"non-production local development", "service.requests.create", "service.webhooks.manage"} {
		if !strings.Contains(auth, w) {
			t.Errorf("auth lacks %s", w)
		}
	}

	wantFields := []string{
		"vertical_id", "job_type_id", "description",
		"customer.name, or both customer.first_name and customer.last_name",
		"customer.phone", "customer.email",
		"location.input, location.address or location.postcode (at least one)",
		"timing.preferred_time_text or timing.urgency (at least one)",
		"user_consent_confirmed (must be true)",
	}
	if !slices.Equal(ct.RequiredFields, wantFields) {
		t.Errorf("required_fields =\n%q\nwant\n%q", ct.RequiredFields, wantFields)
	}

	var ac struct {
		Consent         bool     `json:"consent_required_before_pii_submission"`
		RequiredFields  []string `json:"required_fields"`
		ForbiddenClaims []string `json:"forbidden_claims"`
		SafeNextStep    string   `json:"safe_next_step"`
	}
	mustUnmarshal(t, ct.AgentContract, &ac)
	if !ac.Consent || !slices.Equal(ac.RequiredFields, wantFields) || ac.SafeNextStep == "" {
		t.Errorf("agent_contract = %+v", ac)
	}
	claims := strings.Join(ac.ForbiddenClaims, "\n")
	for _, w := range []string{"booking_created true", "availability_checked true", "provider_selected true", "exact price"} {
		if !strings.Contains(claims, w) {
			t.Errorf("forbidden_claims do not cover %q", w)
		}
	}

	var gs map[string]any
	mustUnmarshal(t, ct.GeographicScope, &gs)
	if gs["country_code"] != "SE" || gs["bookable_only_in_country"] != true || gs["country_name"] != "Sverige" || gs["country_name_en"] != "Sweden" {
		t.Errorf("geographic_scope = %v", gs)
	}
	for _, w := range []string{"Emergencies", "safety-critical triage", "DIY repair instructions", "outside Sweden"} {
		if note, _ := gs["note"].(string); !strings.Contains(note, w) {
			t.Errorf("geographic_scope.note lacks %q", w)
		}
	}
}

func mustUnmarshal(tb testing.TB, raw json.RawMessage, v any) {
	tb.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		tb.Fatalf("unmarshal %s: %v", raw, err)
	}
}

func TestLookupsOfUnknownIDs(t *testing.T) {
	t.Parallel()
	c := load(t)
	if _, ok := c.Vertical("painting"); ok {
		t.Error("Vertical(painting) found")
	}
	if _, ok := c.JobType("vvs", "moving_home"); ok {
		t.Error("JobType(vvs, moving_home) found a job type of another vertical")
	}
	if ids := c.JobTypeIDs("painting"); ids != nil {
		t.Errorf("JobTypeIDs(painting) = %v, want nil", ids)
	}
	if _, ok := c.Unavailable("vvs"); ok {
		t.Error("Unavailable(vvs) found")
	}
	if _, ok := c.Service("vvs_unknown"); ok {
		t.Error("Service(vvs_unknown) found")
	}
}

// TestCheckCatchesBrokenCatalogs breaks copies of the catalog and expects
// Check to name the problem.
func TestCheckCatchesBrokenCatalogs(t *testing.T) {
	t.Parallel()
	jobType := func(c *Catalog, vid, id string) *JobType {
		for i := range c.Verticals {
			if c.Verticals[i].ID == vid {
				for j := range c.Verticals[i].JobTypes {
					if c.Verticals[i].JobTypes[j].ID == id {
						return &c.Verticals[i].JobTypes[j]
					}
				}
			}
		}
		t.Fatalf("no job type %s/%s", vid, id)
		return nil
	}
	editService := func(c *Catalog, id string, edit func(*Service)) {
		s := c.Services[id]
		edit(&s)
		c.Services[id] = s
	}
	tests := []struct {
		name   string
		mutate func(c *Catalog)
		want   string
	}{
		{"seed without service", func(c *Catalog) { delete(c.Services, "vvs_install_faucet_standard") },
			`seeded service_id "vvs_install_faucet_standard" (vvs/install_faucet) has no service entry`},
		{"service without seed", func(c *Catalog) { jobType(c, "vvs", "install_faucet").Seed = nil },
			"services[vvs_install_faucet_standard]: no job type has a fixed_price_seed"},
		{"duplicate job type id", func(c *Catalog) {
			c.Verticals[0].JobTypes = append(c.Verticals[0].JobTypes, c.Verticals[0].JobTypes[0])
		}, `job_type_id "leak_visible" is already used`},
		{"job type id reused in another vertical", func(c *Catalog) { jobType(c, "moving", "moving_office").ID = "leak_hidden" },
			`job_type_id "leak_hidden" is already used in vertical "vvs"`},
		{"bad pricing model", func(c *Catalog) { jobType(c, "cleaning", "cleaning_window").Seed.PricingModel = "per_pane" },
			`pricing_model "per_pane" is not valid`},
		{"pricing model and price type disagree", func(c *Catalog) { jobType(c, "vvs", "install_toilet").Seed.PriceType = PriceAvgUnit },
			`pricing_model "flat" does not fit price_type "avg_unit"`},
		{"bad routing mode", func(c *Catalog) { jobType(c, "vvs", "leak_hidden").RoutingMode = "urgent" },
			`routing_mode "urgent" is not valid`},
		{"bad fit", func(c *Catalog) { jobType(c, "vvs", "leak_hidden").FixedPriceFit = "none" },
			`fixed_price_fit "none" is not valid`},
		{"seed currency", func(c *Catalog) { jobType(c, "moving", "moving_home").Seed.Currency = "EUR" },
			`currency is "EUR", want "SEK"`},
		{"provider confirmation not required", func(c *Catalog) {
			jobType(c, "moving", "moving_piano").Seed.ProviderConfirmationRequired = false
		}, "provider_confirmation_required must be true"},
		{"same service in two seeds", func(c *Catalog) {
			jobType(c, "vvs", "clog_toilet").Seed = jobType(c, "vvs", "clog_fixture").Seed
		}, `service_id "vvs_drain_jetting_single_starting" is named by 2 job types`},
		{"count below seeds", func(c *Catalog) { c.Verticals[2].FixedPriceServiceCount = 3 },
			"fixed_price_service_count 3 is less than its 4 seeded job types"},
		{"unsupported vertical", func(c *Catalog) { c.Verticals[3].ID = "painting" },
			`vertical_id "painting" is not a supported vertical`},
		{"missing vertical", func(c *Catalog) { c.Verticals = c.Verticals[:3] },
			`supported vertical "cleaning" is missing`},
		{"bad agent status", func(c *Catalog) { c.Verticals[1].AgentStatus = "booking_only" },
			`agent_status is "booking_only"`},
		{"empty signals", func(c *Catalog) { jobType(c, "vvs", "leak_hidden").RequiredSignals = nil },
			"required_signals is empty"},
		{"terms version form", func(c *Catalog) {
			editService(c, "cleaning_window_per_window", func(s *Service) { s.Terms.Version = "fixed_price_terms_v2:cleaning_window_per_window" })
		}, `version is "fixed_price_terms_v2:cleaning_window_per_window", want "fixed_price_terms_v1:cleaning_window_per_window"`},
		{"missing terms section", func(c *Catalog) {
			editService(c, "moving_home_starter_3h", func(s *Service) { s.Terms.Sections = s.Terms.Sections[1:] })
		}, `section "vad_som_ingar" is missing`},
		{"plain http source", func(c *Catalog) {
			editService(c, "moving_home_starter_3h", func(s *Service) {
				s.Terms.SourceURLs = append(slices.Clone(s.Terms.SourceURLs), "http://example.se/")
			})
		}, "neither a relative path nor an https URL"},
		{"empty Swedish scope", func(c *Catalog) {
			editService(c, "cleaning_home_deep_per_sqm", func(s *Service) { s.Scope.QuoteTriggersSV = nil })
		}, "scope.quote_triggers_sv is empty"},
		{"unit missing", func(c *Catalog) {
			editService(c, "cleaning_move_out_per_sqm", func(s *Service) { s.Unit = "" })
		}, `unit is "", want "kvm"`},
		{"default outside range", func(c *Catalog) {
			editService(c, "cleaning_window_per_window", func(s *Service) { s.DefaultQuantity = 0 })
		}, "0 < min_quantity (1) <= default_quantity (0)"},
		{"flat with fixed duration missing", func(c *Catalog) {
			editService(c, "vvs_install_toilet_standard", func(s *Service) { s.Duration = DurationRule{} })
		}, "needs fixed_minutes only"},
		{"service disagrees with seed", func(c *Catalog) {
			editService(c, "moving_heavy_lift_2h", func(s *Service) { s.PricingModel = PricingFlat })
		}, `pricing_model is "flat", want "per_hour"`},
		{"unavailable vertical status", func(c *Catalog) { c.UnavailableVerticals[0].Reason = "soon" },
			`reason is "soon", want "not_bookable_yet"`},
		{"unavailable vertical is supported", func(c *Catalog) { c.UnavailableVerticals[0].ID = "vvs" },
			`vertical_id "vvs" is a supported vertical`},
		{"fallback claims a booking", func(c *Catalog) {
			c.Capability.Lifecycle = json.RawMessage(strings.Replace(string(c.Capability.Lifecycle), `"booking_created":false`, `"booking_created":true`, 1))
		}, "lifecycle: booking_created is true, want false"},
		{"misspelt capability member", func(c *Catalog) {
			c.Capability.GeographicScope = json.RawMessage(strings.Replace(string(c.Capability.GeographicScope), `"note"`, `"notes"`, 1))
		}, `capabilities.geographic_scope: json: unknown field "notes"`},
		{"consent not required", func(c *Catalog) {
			c.Capability.AgentContract = json.RawMessage(strings.Replace(string(c.Capability.AgentContract), `"consent_required_before_pii_submission":true`, `"consent_required_before_pii_submission":false`, 1))
		}, "consent_required_before_pii_submission is false, want true"},
		{"missing auth", func(c *Catalog) { c.Capability.Auth = nil }, "capabilities.auth is missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := load(t) // a fresh copy per case
			tt.mutate(c)
			err := c.Check()
			if err == nil {
				t.Fatalf("Check() = nil, want a problem containing %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Check() =\n%v\nwant a problem containing %q", err, tt.want)
			}
		})
	}
}

func TestCheckReportsEveryProblem(t *testing.T) {
	t.Parallel()
	c := load(t)
	c.Verticals[0].LabelSV = ""
	c.UnavailableVerticals[1].SafeNextStep = ""
	err := c.Check()
	for _, want := range []string{"verticals[0:vvs]: label_sv is empty", "unavailable_verticals[1:carpentry]: safe_next_step is empty"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Check() = %v, want it to contain %q", err, want)
		}
	}
}

func TestParseIsStrict(t *testing.T) {
	t.Parallel()
	good := []byte(catalogFile)
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"unknown field", []byte(strings.Replace(catalogFile, `"label_sv": "VVS"`, `"label_sv": "VVS", "colour": "blue"`, 1)),
			`unknown field "colour"`},
		{"duplicate key", []byte(strings.Replace(catalogFile, `"label_sv": "VVS"`, `"label_sv": "VVS", "label_sv": "Rör"`, 1)),
			`duplicate key "label_sv" in $.verticals[0]`},
		{"trailing data", append(slices.Clone(good), []byte(`{}`)...), "unexpected data after the top-level value"},
		{"service given twice", []byte(strings.Replace(catalogFile, `"services": [`, `"services": [{"service_id": "moving_piano_standard_local"},`, 1)),
			`service_id "moving_piano_standard_local" is given twice`},
		{"wrong type", []byte(strings.Replace(catalogFile, `"fixed_price_service_count": 9`, `"fixed_price_service_count": "9"`, 1)),
			"cannot unmarshal string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if string(tt.data) == catalogFile {
				t.Fatal("the test input did not change the catalog")
			}
			_, err := parse(tt.data)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("parse() error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
	if _, err := parse(good); err != nil {
		t.Errorf("parse(embedded catalog) = %v", err)
	}
}

func TestTermsVersion(t *testing.T) {
	t.Parallel()
	if got, want := TermsVersion("cleaning_window_per_window"), "fixed_price_terms_v1:cleaning_window_per_window"; got != want {
		t.Errorf("TermsVersion() = %q, want %q", got, want)
	}
}
