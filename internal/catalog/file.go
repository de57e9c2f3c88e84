package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"bokat/internal/taxdeduction"
)

// The types below describe the data file. They are converted to the
// exported types explicitly, so the file format and the Go API can change
// independently.

type fileCatalog struct {
	Verticals            []fileVertical    `json:"verticals"`
	UnavailableVerticals []fileUnavailable `json:"unavailable_verticals"`
	Services             []fileService     `json:"services"`
	CommonTermsSections  []fileSection     `json:"common_terms_sections"`
	Capabilities         fileCapabilities  `json:"capabilities"`
}

type fileVertical struct {
	ID                     string        `json:"vertical_id"`
	LabelSV                string        `json:"label_sv"`
	LabelEN                string        `json:"label_en"`
	AgentStatus            string        `json:"agent_status"`
	AgentSummary           string        `json:"agent_summary"`
	SafeNextStep           string        `json:"safe_next_step"`
	ProviderSupply         string        `json:"provider_supply"`
	DirectBookingSupply    string        `json:"direct_booking_supply"`
	FixedPriceServiceCount int           `json:"fixed_price_service_count"`
	JobTypes               []fileJobType `json:"job_types"`
}

type fileJobType struct {
	ID              string    `json:"job_type_id"`
	LabelSV         string    `json:"label_sv"`
	LabelEN         string    `json:"label_en"`
	RoutingMode     string    `json:"routing_mode"`
	FixedPriceFit   string    `json:"fixed_price_fit"`
	RequiredSignals []string  `json:"required_signals"`
	TaxDeduction    fileTax   `json:"tax_deduction"`
	Seed            *fileSeed `json:"fixed_price_seed"`
}

type fileTax struct {
	Kind    string `json:"kind"`
	BasisEN string `json:"basis_en"`
	Source  string `json:"source"`
}

type fileSeed struct {
	ServiceID                    string `json:"service_id"`
	PricingModel                 string `json:"pricing_model"`
	PriceType                    string `json:"price_type"`
	Currency                     string `json:"currency"`
	BookingModeWhenQualified     string `json:"booking_mode_when_qualified"`
	DirectBookingFit             string `json:"direct_booking_fit"`
	ProviderConfirmationRequired bool   `json:"provider_confirmation_required"`
}

type fileUnavailable struct {
	ID           string `json:"vertical_id"`
	LabelSV      string `json:"label_sv"`
	LabelEN      string `json:"label_en"`
	AgentStatus  string `json:"agent_status"`
	Reason       string `json:"reason"`
	SafeNextStep string `json:"safe_next_step"`
}

type fileService struct {
	ID              string       `json:"service_id"`
	LabelSV         string       `json:"label_sv"`
	LabelEN         string       `json:"label_en"`
	Unit            string       `json:"unit"`
	UnitEN          string       `json:"unit_en"`
	QuantityDetail  string       `json:"quantity_detail"`
	DefaultQuantity float64      `json:"default_quantity"`
	MinQuantity     float64      `json:"min_quantity"`
	MaxQuantity     float64      `json:"max_quantity"`
	Duration        fileDuration `json:"duration"`
	Scope           fileScope    `json:"scope"`
	Terms           fileTerms    `json:"terms"`
}

type fileDuration struct {
	FixedMinutes   int `json:"fixed_minutes"`
	MinutesPerUnit int `json:"minutes_per_unit"`
	MinimumMinutes int `json:"minimum_minutes"`
}

type fileScope struct {
	IncludedSV                []string `json:"included_sv"`
	ExcludedSV                []string `json:"excluded_sv"`
	CustomerRequirementsSV    []string `json:"customer_requirements_sv"`
	PriceAdjustmentTriggersSV []string `json:"price_adjustment_triggers_sv"`
	QuoteTriggersSV           []string `json:"quote_triggers_sv"`
}

type fileTerms struct {
	Version    string        `json:"version"`
	URL        string        `json:"url"`
	Sections   []fileSection `json:"sections"`
	SourceURLs []string      `json:"source_urls"`
}

type fileSection struct {
	ID      string `json:"id"`
	TitleSV string `json:"title_sv"`
	BodySV  string `json:"body_sv"`
}

type fileCapabilities struct {
	Lifecycle        json.RawMessage `json:"lifecycle"`
	BookingLifecycle json.RawMessage `json:"booking_lifecycle"`
	Auth             json.RawMessage `json:"auth"`
	AgentContract    json.RawMessage `json:"agent_contract"`
	RequiredFields   []string        `json:"required_fields"`
	GeographicScope  json.RawMessage `json:"geographic_scope"`
}

// parse decodes a catalog file strictly, converts it and checks its cross
// references.
func parse(data []byte) (*Catalog, error) {
	var f fileCatalog
	if err := decodeStrict(data, &f); err != nil {
		return nil, fmt.Errorf("catalog: decode catalog.json: %w", err)
	}
	c, err := f.convert()
	if err != nil {
		return nil, err
	}
	if c.TaxRules, err = taxdeduction.Load(); err != nil {
		return nil, err
	}
	if err := c.checkReferences(); err != nil {
		return nil, err
	}
	return c, nil
}

// decodeStrict decodes one JSON value into v and fails on unknown fields,
// duplicate object keys and anything after the value.
func decodeStrict(data []byte, v any) error {
	if err := checkDuplicateKeys(data); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("unexpected data after the top-level value")
	}
	return nil
}

// checkDuplicateKeys reports the first object that names a key twice, which
// encoding/json would otherwise resolve silently in favour of the last one.
func checkDuplicateKeys(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var walk func(path string) error
	walk = func(path string) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				key := kt.(string)
				if seen[key] {
					return fmt.Errorf("duplicate key %q in %s", key, path)
				}
				seen[key] = true
				if err := walk(path + "." + key); err != nil {
					return err
				}
			}
			_, err = dec.Token() // '}'
			return err
		case json.Delim('['):
			for i := 0; dec.More(); i++ {
				if err := walk(fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
			_, err = dec.Token() // ']'
			return err
		}
		return nil
	}
	return walk("$")
}

// convert builds a Catalog from the file. It fails only on what the
// Catalog cannot represent (a service id given twice); everything else is
// left to Check.
func (f *fileCatalog) convert() (*Catalog, error) {
	seeds := map[string]seedPlace{}
	c := &Catalog{
		Verticals:            f.verticals(seeds),
		UnavailableVerticals: f.unavailableVerticals(),
	}
	var err error
	if c.Services, err = f.services(seeds); err != nil {
		return nil, err
	}
	if c.Capability, err = f.capabilities(); err != nil {
		return nil, err
	}
	return c, nil
}

// seedPlace is where the first seed of a service stands.
type seedPlace struct {
	verticalID, jobTypeID string
	seed                  *fileSeed
}

// verticals converts the supported verticals and records in seeds where
// each service is first seeded.
func (f *fileCatalog) verticals(seeds map[string]seedPlace) []Vertical {
	var out []Vertical
	for _, fv := range f.Verticals {
		v := Vertical{
			ID:                     fv.ID,
			LabelSV:                fv.LabelSV,
			LabelEN:                fv.LabelEN,
			AgentStatus:            fv.AgentStatus,
			AgentSummary:           fv.AgentSummary,
			SafeNextStep:           fv.SafeNextStep,
			ProviderSupply:         fv.ProviderSupply,
			DirectBookingSupply:    fv.DirectBookingSupply,
			FixedPriceServiceCount: fv.FixedPriceServiceCount,
			JobTypes:               make([]JobType, 0, len(fv.JobTypes)),
		}
		for _, fj := range fv.JobTypes {
			jt := JobType{
				ID:              fj.ID,
				LabelSV:         fj.LabelSV,
				LabelEN:         fj.LabelEN,
				RoutingMode:     RoutingMode(fj.RoutingMode),
				FixedPriceFit:   Fit(fj.FixedPriceFit),
				RequiredSignals: slices.Clone(fj.RequiredSignals),
				TaxDeduction: TaxDeduction{Kind: taxdeduction.Kind(fj.TaxDeduction.Kind), BasisEN: fj.TaxDeduction.BasisEN,
					Source: fj.TaxDeduction.Source},
			}
			if fs := fj.Seed; fs != nil {
				jt.Seed = &Seed{
					ServiceID:                    fs.ServiceID,
					PricingModel:                 PricingModel(fs.PricingModel),
					PriceType:                    PriceType(fs.PriceType),
					Currency:                     fs.Currency,
					BookingModeWhenQualified:     BookingMode(fs.BookingModeWhenQualified),
					DirectBookingFit:             Fit(fs.DirectBookingFit),
					ProviderConfirmationRequired: fs.ProviderConfirmationRequired,
				}
				if _, dup := seeds[fs.ServiceID]; !dup {
					seeds[fs.ServiceID] = seedPlace{fv.ID, fj.ID, fs}
				}
			}
			v.JobTypes = append(v.JobTypes, jt)
		}
		out = append(out, v)
	}
	return out
}

// unavailableVerticals converts the verticals not bookable yet.
func (f *fileCatalog) unavailableVerticals() []UnavailableVertical {
	var out []UnavailableVertical
	for _, fu := range f.UnavailableVerticals {
		out = append(out, UnavailableVertical{
			ID:           fu.ID,
			LabelSV:      fu.LabelSV,
			LabelEN:      fu.LabelEN,
			AgentStatus:  fu.AgentStatus,
			Reason:       fu.Reason,
			SafeNextStep: fu.SafeNextStep,
		})
	}
	return out
}

// services converts the services, each with the common terms sections and
// the place and pricing of its first seed. A service id given twice is an
// error.
func (f *fileCatalog) services(seeds map[string]seedPlace) (map[string]Service, error) {
	out := make(map[string]Service, len(f.Services))
	for _, fs := range f.Services {
		if _, dup := out[fs.ID]; dup {
			return nil, fmt.Errorf("catalog: services: service_id %q is given twice", fs.ID)
		}
		s := Service{
			ID:              fs.ID,
			LabelSV:         fs.LabelSV,
			LabelEN:         fs.LabelEN,
			Unit:            fs.Unit,
			UnitEN:          fs.UnitEN,
			QuantityDetail:  fs.QuantityDetail,
			DefaultQuantity: fs.DefaultQuantity,
			MinQuantity:     fs.MinQuantity,
			MaxQuantity:     fs.MaxQuantity,
			Duration: DurationRule{
				FixedMinutes:   fs.Duration.FixedMinutes,
				MinutesPerUnit: fs.Duration.MinutesPerUnit,
				MinimumMinutes: fs.Duration.MinimumMinutes,
			},
			Scope: Scope{
				IncludedSV:                slices.Clone(fs.Scope.IncludedSV),
				ExcludedSV:                slices.Clone(fs.Scope.ExcludedSV),
				CustomerRequirementsSV:    slices.Clone(fs.Scope.CustomerRequirementsSV),
				PriceAdjustmentTriggersSV: slices.Clone(fs.Scope.PriceAdjustmentTriggersSV),
				QuoteTriggersSV:           slices.Clone(fs.Scope.QuoteTriggersSV),
			},
			Terms: Terms{
				Version:    fs.Terms.Version,
				URL:        fs.Terms.URL,
				SourceURLs: slices.Clone(fs.Terms.SourceURLs),
			},
		}
		for _, sec := range slices.Concat(fs.Terms.Sections, f.CommonTermsSections) {
			s.Terms.Sections = append(s.Terms.Sections, TermsSection(sec))
		}
		if p, ok := seeds[fs.ID]; ok {
			s.VerticalID = p.verticalID
			s.JobTypeID = p.jobTypeID
			s.PricingModel = PricingModel(p.seed.PricingModel)
			s.PriceType = PriceType(p.seed.PriceType)
		}
		out[fs.ID] = s
	}
	return out, nil
}

// capabilities converts the capability texts, each object compacted; a
// missing object is left empty for Check to report.
func (f *fileCatalog) capabilities() (CapabilityTexts, error) {
	fc := f.Capabilities
	c := CapabilityTexts{RequiredFields: slices.Clone(fc.RequiredFields)}
	for _, m := range []struct {
		name string
		src  json.RawMessage
		dst  *json.RawMessage
	}{
		{"lifecycle", fc.Lifecycle, &c.Lifecycle},
		{"booking_lifecycle", fc.BookingLifecycle, &c.BookingLifecycle},
		{"auth", fc.Auth, &c.Auth},
		{"agent_contract", fc.AgentContract, &c.AgentContract},
		{"geographic_scope", fc.GeographicScope, &c.GeographicScope},
	} {
		if len(m.src) == 0 {
			continue // Check reports the missing object.
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, m.src); err != nil {
			return CapabilityTexts{}, fmt.Errorf("catalog: capabilities.%s: %w", m.name, err)
		}
		*m.dst = json.RawMessage(buf.Bytes())
	}
	return c, nil
}
