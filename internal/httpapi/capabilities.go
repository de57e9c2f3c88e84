package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"

	"bokat/internal/booking"
	"bokat/internal/catalog"
	"bokat/internal/schedule"
	"bokat/internal/taxdeduction"
)

// Wire types of capability discovery. They are built from the catalog once
// per server, since the catalog is immutable.

type capabilitiesWire struct {
	OK                   bool              `json:"ok"`
	SpecVersion          string            `json:"spec_version"`
	Endpoints            map[string]string `json:"endpoints"`
	Lifecycle            json.RawMessage   `json:"lifecycle"`
	BookingLifecycle     json.RawMessage   `json:"booking_lifecycle"`
	SupportedVerticals   []verticalWire    `json:"supported_verticals"`
	UnavailableVerticals []unavailableWire `json:"unavailable_verticals"`
	Auth                 json.RawMessage   `json:"auth"`
	AgentContract        json.RawMessage   `json:"agent_contract"`
	RequiredFields       []string          `json:"required_fields"`
	GeographicScope      json.RawMessage   `json:"geographic_scope"`
	TaxReductionRules    taxRulesWire      `json:"tax_reduction_rules"`
}

// taxRulesWire describes the ROT and RUT rules: kinds, dated rules and how
// an estimate is computed.
type taxRulesWire struct {
	Preliminary   bool          `json:"preliminary"`
	LabelSV       string        `json:"label_sv"`
	LabelEN       string        `json:"label_en"`
	ComputationEN string        `json:"computation_en"`
	CapsApplied   bool          `json:"caps_applied"`
	Kinds         []taxKindWire `json:"kinds"`
	Rules         []taxRuleWire `json:"rules"`
}

type taxKindWire struct {
	Kind       string                     `json:"kind"`
	LabelSV    string                     `json:"label_sv"`
	LabelEN    string                     `json:"label_en"`
	CountsSV   string                     `json:"counts_sv"`
	CountsEN   string                     `json:"counts_en"`
	Conditions []booking.TaxConditionWire `json:"conditions"`
}

type taxRuleWire struct {
	Version          string   `json:"version"`
	Kind             string   `json:"kind"`
	RatePercent      int      `json:"rate_percent"`
	PaidFrom         string   `json:"paid_from"`
	PaidUntil        string   `json:"paid_until,omitempty"`
	YearlyCapSEK     int64    `json:"yearly_cap_sek"`
	KindYearlyCapSEK int64    `json:"kind_yearly_cap_sek"`
	Sources          []string `json:"sources"`
}

type taxDeductionWire struct {
	Kind    string `json:"kind"`
	BasisEN string `json:"basis_en"`
	Source  string `json:"source"`
}

// taxComputation says how an estimate is computed, for assistants.
const taxComputation = "An option or booking of a rot or rut job type carries tax_reduction_estimate when the provider " +
	"states the labour part of its price (labour_percent of the amount shown). labour_amount_sek is that share of the " +
	"price rounded to whole SEK; estimated_reduction_sek is the rule's rate_percent of it, rounded down; " +
	"price_after_reduction_sek is the price minus it. The rule is the one in force on the job's day (the day the work " +
	"is assumed paid). The yearly caps are stated, never applied: Bokat cannot know how much of the allowance the " +
	"customer has left. The booked price is always the full price."

func buildTaxRules(cat *catalog.Catalog) taxRulesWire {
	r := cat.TaxRules
	w := taxRulesWire{Preliminary: true, LabelSV: r.LabelSV, LabelEN: r.LabelEN, ComputationEN: taxComputation}
	for _, k := range []taxdeduction.Kind{taxdeduction.ROT, taxdeduction.RUT} {
		info, ok := r.Kind(k)
		if !ok {
			continue
		}
		kw := taxKindWire{Kind: string(k), LabelSV: info.LabelSV, LabelEN: info.LabelEN, CountsSV: info.CountsSV,
			CountsEN: info.CountsEN, Conditions: []booking.TaxConditionWire{}}
		for _, c := range info.Conditions {
			kw.Conditions = append(kw.Conditions, booking.TaxConditionWire{ID: c.ID, SV: c.SV, EN: c.EN})
		}
		w.Kinds = append(w.Kinds, kw)
	}
	for _, rule := range r.All() {
		rw := taxRuleWire{Version: rule.Version, Kind: string(rule.Kind), RatePercent: rule.RatePercent,
			PaidFrom: dateText(rule.PaidFrom), YearlyCapSEK: rule.YearlyCapSEK, KindYearlyCapSEK: rule.KindYearlyCapSEK,
			Sources: rule.Sources}
		if rule.PaidUntil != (schedule.Date{}) {
			rw.PaidUntil = dateText(rule.PaidUntil)
		}
		w.Rules = append(w.Rules, rw)
	}
	return w
}

func dateText(d schedule.Date) string {
	return fmt.Sprintf("%04d-%02d-%02d", d.Year, int(d.Month), d.Day)
}

type verticalWire struct {
	VerticalID             string        `json:"vertical_id"`
	LabelSV                string        `json:"label_sv"`
	LabelEN                string        `json:"label_en"`
	AgentStatus            string        `json:"agent_status"`
	AgentSummary           string        `json:"agent_summary"`
	SafeNextStep           string        `json:"safe_next_step"`
	ProviderSupply         string        `json:"provider_supply"`
	DirectBookingSupply    string        `json:"direct_booking_supply"`
	FixedPriceServiceCount int           `json:"fixed_price_service_count"`
	JobTypes               []jobTypeWire `json:"job_types"`
}

type jobTypeWire struct {
	JobTypeID       string           `json:"job_type_id"`
	LabelSV         string           `json:"label_sv"`
	LabelEN         string           `json:"label_en"`
	RoutingMode     string           `json:"routing_mode"`
	FixedPriceFit   string           `json:"fixed_price_fit"`
	RequiredSignals []string         `json:"required_signals"`
	FixedPriceSeed  *seedWire        `json:"fixed_price_seed,omitempty"`
	TaxDeduction    taxDeductionWire `json:"tax_deduction"`
}

type seedWire struct {
	ServiceID                    string `json:"service_id"`
	PricingModel                 string `json:"pricing_model"`
	PriceType                    string `json:"price_type"`
	Currency                     string `json:"currency"`
	BookingModeWhenQualified     string `json:"booking_mode_when_qualified"`
	DirectBookingFit             string `json:"direct_booking_fit"`
	ProviderConfirmationRequired bool   `json:"provider_confirmation_required"`
}

type unavailableWire struct {
	VerticalID   string `json:"vertical_id"`
	LabelSV      string `json:"label_sv"`
	LabelEN      string `json:"label_en"`
	AgentStatus  string `json:"agent_status"`
	Reason       string `json:"reason"`
	SafeNextStep string `json:"safe_next_step"`
}

// v1Endpoints and legacyEndpoints are the `endpoints` maps of capability
// discovery on each surface.
var (
	v1Endpoints = map[string]string{
		"capabilities":           "GET /v1/capabilities",
		"search_booking_options": "POST /v1/booking-options",
		"confirm_booking":        "POST /v1/bookings",
		"booking_status":         "GET /v1/bookings/{booking_id}",
		"cancel_booking":         "POST /v1/bookings/{booking_id}/cancel",
		"reschedule_booking":     "POST /v1/bookings/{booking_id}/reschedule",
		"create_request":         "POST /v1/requests",
		"webhook_endpoints":      "GET|POST /v1/webhook-endpoints",
		"openapi":                "GET /v1/openapi.json",
	}
	legacyEndpoints = map[string]string{
		"capabilities":           "GET /api/public/requests/capabilities",
		"search_booking_options": "POST /api/public/booking-options",
		"confirm_booking":        "POST /api/public/bookings",
		"booking_status":         "GET /api/public/bookings/{booking_id}",
		"create_request":         "POST /api/public/requests",
	}
)

func buildCapabilities(cat *catalog.Catalog, legacy bool) capabilitiesWire {
	c := capabilitiesWire{
		OK:                true,
		SpecVersion:       "public_requests_api_v1",
		Endpoints:         v1Endpoints,
		Lifecycle:         cat.Capability.Lifecycle,
		BookingLifecycle:  cat.Capability.BookingLifecycle,
		Auth:              cat.Capability.Auth,
		AgentContract:     cat.Capability.AgentContract,
		RequiredFields:    cat.Capability.RequiredFields,
		GeographicScope:   cat.Capability.GeographicScope,
		TaxReductionRules: buildTaxRules(cat),
	}
	if legacy {
		c.Endpoints = legacyEndpoints
	}
	for _, v := range cat.Verticals {
		vw := verticalWire{
			VerticalID: v.ID, LabelSV: v.LabelSV, LabelEN: v.LabelEN, AgentStatus: v.AgentStatus,
			AgentSummary: v.AgentSummary, SafeNextStep: v.SafeNextStep, ProviderSupply: v.ProviderSupply,
			DirectBookingSupply: v.DirectBookingSupply, FixedPriceServiceCount: v.FixedPriceServiceCount,
		}
		for _, jt := range v.JobTypes {
			jw := jobTypeWire{
				JobTypeID: jt.ID, LabelSV: jt.LabelSV, LabelEN: jt.LabelEN, RoutingMode: string(jt.RoutingMode),
				FixedPriceFit: string(jt.FixedPriceFit), RequiredSignals: jt.RequiredSignals,
				TaxDeduction: taxDeductionWire{Kind: string(jt.TaxDeduction.Kind), BasisEN: jt.TaxDeduction.BasisEN,
					Source: jt.TaxDeduction.Source},
			}
			if s := jt.Seed; s != nil {
				jw.FixedPriceSeed = &seedWire{
					ServiceID: s.ServiceID, PricingModel: string(s.PricingModel), PriceType: string(s.PriceType),
					Currency: s.Currency, BookingModeWhenQualified: string(s.BookingModeWhenQualified),
					DirectBookingFit: string(s.DirectBookingFit), ProviderConfirmationRequired: s.ProviderConfirmationRequired,
				}
			}
			vw.JobTypes = append(vw.JobTypes, jw)
		}
		c.SupportedVerticals = append(c.SupportedVerticals, vw)
	}
	for _, u := range cat.UnavailableVerticals {
		c.UnavailableVerticals = append(c.UnavailableVerticals, unavailableWire{
			VerticalID: u.ID, LabelSV: u.LabelSV, LabelEN: u.LabelEN, AgentStatus: u.AgentStatus,
			Reason: u.Reason, SafeNextStep: u.SafeNextStep,
		})
	}
	return c
}

func (s *Server) handleCapabilities(legacy bool) handlerFunc {
	body := buildCapabilities(s.catalog, legacy)
	return func(w http.ResponseWriter, r *http.Request) error {
		s.writeJSON(w, r, http.StatusOK, body)
		return nil
	}
}
