// Package catalog holds Bokat's service catalog: the supported verticals and
// their job types, the fixed-price seeds that make a job type directly
// bookable, the service entries (scope, terms, quantity and duration rules)
// behind every seed, the verticals that are not bookable yet, and the texts
// that capability discovery serves to assistants and partners.
//
// The catalog is one data file, catalog.json, embedded in the binary. Load
// parses it strictly (unknown fields, duplicate keys and trailing data are
// errors) and runs Check, so a broken catalog stops the program at start-up
// instead of surfacing in a response.
//
// # Data file
//
// The file has five top-level members:
//
//   - verticals: the supported verticals in the order capability discovery
//     lists them, each with its job types in table order. A job type carries
//     a fixed_price_seed only when a direct, fixed-price option can exist.
//   - unavailable_verticals: verticals reported as not_bookable_yet.
//   - services: one entry per seeded service_id. Pricing model, price type,
//     vertical and job type are not repeated there; Load takes them from the
//     seed that names the service.
//   - common_terms_sections: terms sections shared by every service
//     (cancellation, complaints, personal data). Load appends them to each
//     service's own sections, so Service.Terms.Sections is complete.
//   - capabilities: lifecycle, booking_lifecycle, auth, agent_contract,
//     required_fields and geographic_scope, served as they are written.
//
// Each job type says whether it gives the ROT or RUT tax reduction or none
// (tax_deduction: kind, basis_en, source); see TaxDeduction.
//
// # Quantities and durations
//
// Services priced per unit (per_item, per_hour, per_sqm, per_window) name the
// key of the request's details object that carries the quantity
// (Service.QuantityDetail, e.g. home_size_sqm, area_sqm, window_count,
// spot_count, hours), the quantity assumed when the details do not say
// (Service.DefaultQuantity) and the range a fixed price covers
// (Service.MinQuantity to Service.MaxQuantity); outside it the job needs a
// quote. Flat and starting-price services have no unit and a quantity of 1.
// The job duration is either a fixed number of minutes or minutes per unit
// with a minimum, rounded up to a quarter of an hour (DurationRule.Minutes).
//
// A Catalog is read-only once loaded: its methods never modify it and
// callers must not modify it or the values its methods return, which share
// memory with it.
package catalog

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"

	"bokat/internal/taxdeduction"
)

//go:embed catalog.json
var catalogFile string

// Supported vertical ids.
const (
	VerticalVVS         = "vvs"
	VerticalElectrician = "electrician"
	VerticalMoving      = "moving"
	VerticalCleaning    = "cleaning"
)

// Status and supply values of verticals.
const (
	// AgentStatusBookingAndRequestSupported is the agent_status of every
	// supported vertical.
	AgentStatusBookingAndRequestSupported = "booking_and_request_supported"
	// AgentStatusNotBookableYet is the agent_status and the reason of every
	// unavailable vertical.
	AgentStatusNotBookableYet = "not_bookable_yet"
	// ProviderSupplyIndexed says that providers of the vertical are indexed.
	ProviderSupplyIndexed = "indexed"
	// DirectBookingSupplySearchRequired says that only a search proves a
	// direct option.
	DirectBookingSupplySearchRequired = "search_required"
	// Currency is the currency of every seed and price.
	Currency = "SEK"
)

// TermsVersionPrefix starts every terms version; see TermsVersion.
const TermsVersionPrefix = "fixed_price_terms_v1:"

// TermsVersion returns the terms version of a service,
// "fixed_price_terms_v1:<service_id>". Confirmation and rescheduling must
// echo it exactly.
func TermsVersion(serviceID string) string { return TermsVersionPrefix + serviceID }

// PricingModel is how a seeded service is priced.
type PricingModel string

// Pricing models.
const (
	PricingFlat          PricingModel = "flat"
	PricingPerItem       PricingModel = "per_item"
	PricingPerHour       PricingModel = "per_hour"
	PricingPerSqm        PricingModel = "per_sqm"
	PricingPerWindow     PricingModel = "per_window"
	PricingStartingPrice PricingModel = "starting_price"
)

// Valid reports whether m is one of the pricing models above.
func (m PricingModel) Valid() bool {
	switch m {
	case PricingFlat, PricingPerItem, PricingPerHour, PricingPerSqm, PricingPerWindow, PricingStartingPrice:
		return true
	}
	return false
}

// PerUnit reports whether the price is a unit price multiplied by a
// quantity (per_item, per_hour, per_sqm, per_window).
func (m PricingModel) PerUnit() bool {
	switch m {
	case PricingPerItem, PricingPerHour, PricingPerSqm, PricingPerWindow:
		return true
	}
	return false
}

// Countable reports whether the model's unit is counted in whole units
// (per_item, per_window) rather than measured (per_hour, per_sqm), so that
// a quantity of 2.5 is refused rather than priced.
func (m PricingModel) Countable() bool {
	return m == PricingPerItem || m == PricingPerWindow
}

// PriceType is the kind of price a provider owns for a seeded service.
type PriceType string

// Price types.
const (
	PriceAvgFixed      PriceType = "avg_fixed"
	PriceAvgUnit       PriceType = "avg_unit"
	PriceAvgRecurring  PriceType = "avg_recurring"
	PriceStartingPrice PriceType = "starting_price"
)

// Valid reports whether t is one of the price types above.
func (t PriceType) Valid() bool {
	switch t {
	case PriceAvgFixed, PriceAvgUnit, PriceAvgRecurring, PriceStartingPrice:
		return true
	}
	return false
}

// BookingMode is how a seeded job is booked once it qualifies.
type BookingMode string

// Booking modes.
const (
	BookingModeDirectJobCandidate    BookingMode = "direct_job_candidate"
	BookingModeQuoteOrVisit          BookingMode = "quote_or_visit"
	BookingModeRecurringServiceStart BookingMode = "recurring_service_start"
)

// Valid reports whether m is one of the booking modes above.
func (m BookingMode) Valid() bool {
	switch m {
	case BookingModeDirectJobCandidate, BookingModeQuoteOrVisit, BookingModeRecurringServiceStart:
		return true
	}
	return false
}

// RoutingMode says how much clarification a job type needs before a
// provider can take it.
type RoutingMode string

// Routing modes.
const (
	RoutingStandardized       RoutingMode = "standardized"
	RoutingNeedsClarification RoutingMode = "needs_clarification"
	RoutingSpecialist         RoutingMode = "specialist"
)

// Valid reports whether m is one of the routing modes above.
func (m RoutingMode) Valid() bool {
	switch m {
	case RoutingStandardized, RoutingNeedsClarification, RoutingSpecialist:
		return true
	}
	return false
}

// Fit grades how well a job type suits a fixed price (fixed_price_fit) or
// direct booking (direct_booking_fit).
type Fit string

// Fits.
const (
	FitHigh   Fit = "high"
	FitMedium Fit = "medium"
	FitLow    Fit = "low"
)

// Valid reports whether f is one of the fits above.
func (f Fit) Valid() bool {
	switch f {
	case FitHigh, FitMedium, FitLow:
		return true
	}
	return false
}

// Catalog is the loaded service catalog. Obtain it from Load; a Catalog
// built or changed by other means should be checked with Check.
type Catalog struct {
	// Verticals are the supported verticals in discovery order.
	Verticals []Vertical
	// UnavailableVerticals are reported as not bookable yet and must not be
	// submitted to request creation or search.
	UnavailableVerticals []UnavailableVertical
	// Services holds one entry per seeded service, keyed by service id.
	Services map[string]Service
	// Capability holds the texts capability discovery serves.
	Capability CapabilityTexts
	// TaxRules are the ROT and RUT rules the job types' tax deductions
	// refer to; Load loads them with the catalog.
	TaxRules *taxdeduction.Rules
}

// Vertical is a supported vertical (vvs, electrician, moving, cleaning).
type Vertical struct {
	ID                  string
	LabelSV, LabelEN    string
	AgentStatus         string // always AgentStatusBookingAndRequestSupported
	AgentSummary        string // what the vertical covers, for assistants
	SafeNextStep        string // search first, fall back to a follow-up request
	ProviderSupply      string // always ProviderSupplyIndexed
	DirectBookingSupply string // always DirectBookingSupplySearchRequired
	// FixedPriceServiceCount is the advertised number of fixed-price
	// services; it is at least the number of seeded job types and may be
	// larger. It is never proof of current inventory.
	FixedPriceServiceCount int
	// JobTypes are the accepted job types, in table order.
	JobTypes []JobType
}

// JobType is one accepted job type of a vertical.
type JobType struct {
	ID               string
	LabelSV, LabelEN string
	RoutingMode      RoutingMode
	FixedPriceFit    Fit
	// RequiredSignals are the facts an assistant should establish, in order.
	RequiredSignals []string
	// TaxDeduction says whether the job type gives ROT, RUT or neither.
	TaxDeduction TaxDeduction
	// Seed is nil when the job type has no fixed-price seed; such a job type
	// never gets a direct option.
	Seed *Seed
}

// Seed is the fixed_price_seed of a job type: it names the service a
// provider can own a fixed price for.
type Seed struct {
	ServiceID                    string
	PricingModel                 PricingModel
	PriceType                    PriceType
	Currency                     string // always Currency
	BookingModeWhenQualified     BookingMode
	DirectBookingFit             Fit
	ProviderConfirmationRequired bool // always true
}

// TaxDeduction is the household tax reduction a job type gives, decided
// per job type: ROT for work on the customer's home, RUT for household
// services, none for jobs that do not qualify (premises, inspections,
// chargers and other green technology, and jobs whose qualification
// depends on details Bokat does not know). Estimates are made only for ROT
// and RUT job types, from the rules of internal/taxdeduction.
type TaxDeduction struct {
	Kind taxdeduction.Kind
	// BasisEN says why, in English; Source cites where the rule is stated.
	BasisEN string
	Source  string
}

// UnavailableVertical is a vertical that cannot be booked or requested yet.
type UnavailableVertical struct {
	ID               string
	LabelSV, LabelEN string
	AgentStatus      string // always AgentStatusNotBookableYet
	Reason           string // always AgentStatusNotBookableYet
	SafeNextStep     string
}

// Service is the entry behind one seeded service id: what it covers, its
// terms, and how quantity and duration of a job are found.
type Service struct {
	ID               string
	VerticalID       string // vertical of the job type whose seed names the service
	JobTypeID        string // job type whose seed names the service
	LabelSV, LabelEN string
	PricingModel     PricingModel // as in the seed
	PriceType        PriceType    // as in the seed
	// Unit is the Swedish unit of a per-unit price ("st", "timme", "kvm",
	// "fönster") and UnitEN its English name; both are empty for flat and
	// starting-price services.
	Unit, UnitEN string
	// QuantityDetail is the key of the request's details object that
	// carries the quantity; empty for flat and starting-price services.
	QuantityDetail string
	// DefaultQuantity is used when the details do not carry the quantity.
	// MinQuantity and MaxQuantity bound the quantities the fixed unit price
	// covers. All three are zero for flat and starting-price services.
	DefaultQuantity, MinQuantity, MaxQuantity float64
	Duration                                  DurationRule
	Scope                                     Scope
	Terms                                     Terms
}

// DurationRule gives the length of a job: FixedMinutes for flat and
// starting-price services, otherwise MinutesPerUnit times the quantity with
// at least MinimumMinutes.
type DurationRule struct {
	FixedMinutes   int
	MinutesPerUnit int
	MinimumMinutes int
}

// Minutes returns the job length for a quantity, rounded up to a whole
// quarter of an hour. The quantity is ignored by a fixed rule.
func (d DurationRule) Minutes(quantity float64) int {
	m := d.FixedMinutes
	if m == 0 {
		m = int(math.Ceil(quantity * float64(d.MinutesPerUnit)))
		m = max(m, d.MinimumMinutes)
	}
	return (m + 14) / 15 * 15
}

// Scope is what a service covers, in Swedish, as shown with every option.
type Scope struct {
	IncludedSV                []string
	ExcludedSV                []string
	CustomerRequirementsSV    []string
	PriceAdjustmentTriggersSV []string
	QuoteTriggersSV           []string
}

// Terms are the versioned terms of a service.
type Terms struct {
	// Version is TermsVersion(service id).
	Version string
	// URL is the path of the human-readable terms, relative to the
	// service's base URL.
	URL string
	// Sections are the service's own sections followed by the common ones.
	Sections []TermsSection
	// SourceURLs are relative paths (to be resolved against the base URL)
	// or absolute https URLs of consumer-law references.
	SourceURLs []string
}

// TermsSection is one section of a service's terms.
type TermsSection struct {
	ID      string
	TitleSV string
	BodySV  string
}

// Terms section ids every service has.
const (
	SectionIncluded     = "vad_som_ingar"
	SectionPrice        = "pris_och_betalning"
	SectionCancellation = "avbokning_och_ombokning"
	SectionComplaints   = "reklamation_och_garanti"
	SectionPersonalData = "personuppgifter"
)

// CapabilityTexts are the capability discovery members that the catalog
// owns. The open objects are JSON objects with the members, member order and
// texts of the data file (compacted), for the HTTP layer to serve unchanged.
type CapabilityTexts struct {
	// Lifecycle is the request-only fallback lifecycle (`lifecycle`).
	Lifecycle json.RawMessage
	// BookingLifecycle is the direct booking lifecycle (`booking_lifecycle`).
	BookingLifecycle json.RawMessage
	// Auth describes the credential forms and scopes (`auth`).
	Auth json.RawMessage
	// AgentContract is the assistant contract (`agent_contract`).
	AgentContract json.RawMessage
	// GeographicScope is `geographic_scope`.
	GeographicScope json.RawMessage
	// RequiredFields are the request-creation requirements
	// (`required_fields`), one readable entry per requirement.
	RequiredFields []string
}

// Errors of Service.Quantity.
var (
	ErrQuantityInvalid    = errors.New("catalog: quantity is not a positive number")
	ErrQuantityOutOfRange = errors.New("catalog: quantity is outside the fixed-price range")
	// ErrQuantityNotWhole is a fraction of a countable unit (2.5 windows);
	// it wraps ErrQuantityInvalid.
	ErrQuantityNotWhole = fmt.Errorf("%w: a countable quantity must be a whole number", ErrQuantityInvalid)
)

// Load returns the embedded catalog, parsed strictly and checked once per
// process: every caller shares the one *Catalog, which nobody may modify.
// An error means the binary was built with a broken catalog; it lists every
// problem found.
func Load() (*Catalog, error) { return loadOnce() }

var loadOnce = sync.OnceValues(func() (*Catalog, error) { return parse([]byte(catalogFile)) })

// Vertical returns the supported vertical with the id.
func (c *Catalog) Vertical(id string) (Vertical, bool) {
	for _, v := range c.Verticals {
		if v.ID == id {
			return v, true
		}
	}
	return Vertical{}, false
}

// VerticalIDs returns the supported vertical ids in discovery order.
func (c *Catalog) VerticalIDs() []string {
	ids := make([]string, 0, len(c.Verticals))
	for _, v := range c.Verticals {
		ids = append(ids, v.ID)
	}
	return ids
}

// JobType returns a job type of a supported vertical.
func (c *Catalog) JobType(verticalID, jobTypeID string) (JobType, bool) {
	v, ok := c.Vertical(verticalID)
	if !ok {
		return JobType{}, false
	}
	for _, jt := range v.JobTypes {
		if jt.ID == jobTypeID {
			return jt, true
		}
	}
	return JobType{}, false
}

// JobTypeIDs returns the accepted job type ids of a supported vertical in
// table order, or nil when the vertical is not supported.
func (c *Catalog) JobTypeIDs(verticalID string) []string {
	v, ok := c.Vertical(verticalID)
	if !ok {
		return nil
	}
	ids := make([]string, 0, len(v.JobTypes))
	for _, jt := range v.JobTypes {
		ids = append(ids, jt.ID)
	}
	return ids
}

// Unavailable returns the unavailable vertical with the id.
func (c *Catalog) Unavailable(id string) (UnavailableVertical, bool) {
	for _, u := range c.UnavailableVerticals {
		if u.ID == id {
			return u, true
		}
	}
	return UnavailableVertical{}, false
}

// UnavailableIDs returns the ids of the unavailable verticals in order.
func (c *Catalog) UnavailableIDs() []string {
	ids := make([]string, 0, len(c.UnavailableVerticals))
	for _, u := range c.UnavailableVerticals {
		ids = append(ids, u.ID)
	}
	return ids
}

// Service returns the service entry of a seeded service id.
func (c *Catalog) Service(serviceID string) (Service, bool) {
	s, ok := c.Services[serviceID]
	return s, ok
}

// ServiceIDs returns the seeded service ids in catalog order: by vertical,
// then by job type.
func (c *Catalog) ServiceIDs() []string {
	var ids []string
	for _, v := range c.Verticals {
		for _, jt := range v.JobTypes {
			if jt.Seed != nil {
				ids = append(ids, jt.Seed.ServiceID)
			}
		}
	}
	return ids
}

// Quantity returns the quantity of a job of the service described by a
// request's details object. Flat and starting-price services always have a
// quantity of 1. For per-unit services it is details[s.QuantityDetail] when
// present (a JSON number) and s.DefaultQuantity
// when the key is absent or null. It returns ErrQuantityInvalid when the
// value is not a positive finite number, ErrQuantityNotWhole (wrapping
// ErrQuantityInvalid) when it is a fraction of a countable unit, and
// ErrQuantityOutOfRange when it
// is outside s.MinQuantity to s.MaxQuantity, where the fixed price does not
// apply.
func (s Service) Quantity(details map[string]any) (float64, error) {
	if !s.PricingModel.PerUnit() {
		return 1, nil
	}
	raw, ok := details[s.QuantityDetail]
	if !ok || raw == nil {
		return s.DefaultQuantity, nil
	}
	var q float64
	switch v := raw.(type) {
	case float64:
		q = v
	case float32:
		q = float64(v)
	case int:
		q = float64(v)
	case int64:
		q = float64(v)
	case json.Number:
		f, err := v.Float64()
		if err != nil {
			return 0, fmt.Errorf("%w: details.%s = %q", ErrQuantityInvalid, s.QuantityDetail, v)
		}
		q = f
	default:
		return 0, fmt.Errorf("%w: details.%s has type %T", ErrQuantityInvalid, s.QuantityDetail, raw)
	}
	if math.IsNaN(q) || math.IsInf(q, 0) || q <= 0 {
		return 0, fmt.Errorf("%w: details.%s = %v", ErrQuantityInvalid, s.QuantityDetail, q)
	}
	if s.PricingModel.Countable() && q != math.Trunc(q) {
		return 0, fmt.Errorf("%w: details.%s = %v %s", ErrQuantityNotWhole, s.QuantityDetail, q, s.Unit)
	}
	if q < s.MinQuantity || q > s.MaxQuantity {
		return 0, fmt.Errorf("%w: details.%s = %v, covered %v to %v %s",
			ErrQuantityOutOfRange, s.QuantityDetail, q, s.MinQuantity, s.MaxQuantity, s.Unit)
	}
	return q, nil
}
