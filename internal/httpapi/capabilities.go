package httpapi

import (
	"encoding/json"
	"net/http"

	"bokat/internal/catalog"
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
	JobTypeID       string    `json:"job_type_id"`
	LabelSV         string    `json:"label_sv"`
	LabelEN         string    `json:"label_en"`
	RoutingMode     string    `json:"routing_mode"`
	FixedPriceFit   string    `json:"fixed_price_fit"`
	RequiredSignals []string  `json:"required_signals"`
	FixedPriceSeed  *seedWire `json:"fixed_price_seed,omitempty"`

	// TaxDeduction is the job type's ROT/RUT decision.
	TaxDeduction taxDeductionWire `json:"tax_deduction"`
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
		"reschedule_options":     "POST /v1/bookings/{booking_id}/booking-options",
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
		OK:               true,
		SpecVersion:      "public_requests_api_v1",
		Endpoints:        v1Endpoints,
		Lifecycle:        cat.Capability.Lifecycle,
		BookingLifecycle: cat.Capability.BookingLifecycle,
		Auth:             cat.Capability.Auth,
		AgentContract:    cat.Capability.AgentContract,
		RequiredFields:   cat.Capability.RequiredFields,
		GeographicScope:  cat.Capability.GeographicScope,
	}
	c.TaxReductionRules = buildTaxRules(cat)
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
