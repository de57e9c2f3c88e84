package httpapi

import (
	"encoding/json"
	"html/template"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"bokat"
	"bokat/internal/auth"
	"bokat/internal/booking"
	"bokat/internal/catalog"
	"bokat/internal/taxdeduction"
)

// Wire types of booking option search (SearchRequest, SearchResponse).

type searchRequestWire struct {
	SpecVersion         string              `json:"spec_version"`
	VerticalID          string              `json:"vertical_id"`
	JobTypeID           string              `json:"job_type_id"`
	Description         string              `json:"description"`
	Location            searchLocationWire  `json:"location"`
	DestinationLocation *searchLocationWire `json:"destination_location"`
	Timing              timingWire          `json:"timing"`
	Details             map[string]any      `json:"details"`
	Locale              string              `json:"locale"`
	Timezone            string              `json:"timezone"`
}

type searchLocationWire struct {
	CountryCode string `json:"country_code"`
	Postcode    string `json:"postcode"`
	City        string `json:"city"`
}

type timingWire struct {
	PreferredTimeText string `json:"preferred_time_text"`
	Urgency           string `json:"urgency"`
}

type searchResponseWire struct {
	OK                     bool   `json:"ok"`
	SpecVersion            string `json:"spec_version"`
	AvailabilityChecked    bool   `json:"availability_checked"`
	ProviderSelected       bool   `json:"provider_selected"`
	BookingCreated         bool   `json:"booking_created"`
	DirectBookingAvailable bool   `json:"direct_booking_available"`
	OptionCount            int    `json:"option_count"`
	// The options are written by encodeSearch (member "options").
	RequestedTimeWindow *readWindowWire `json:"requested_time_window,omitempty"`
	// NextAvailable lists, for an empty window, the earliest free times
	// after it: times only, no option, provider or price.
	NextAvailable []timeWindowWire `json:"next_available,omitempty"`
	// LastBookableDate is, for a window past every provider's booking
	// horizon, the last date they take bookings for ("2026-12-07").
	LastBookableDate string        `json:"last_bookable_date,omitempty"`
	Fallback         *fallbackWire `json:"fallback,omitempty"`
	SafeNextStep     string        `json:"safe_next_step"`
}

type timeWindowWire struct {
	StartAt string `json:"start_at"`
	EndAt   string `json:"end_at"`
	Label   string `json:"label"`
}

// readWindowWire is how the timing texts were read: the window, and the
// words of the texts that did not decide it, for the assistant to ask about
// (absent when every word was used).
type readWindowWire struct {
	timeWindowWire
	NotUnderstood []string `json:"not_understood,omitempty"`
}

type fallbackWire struct {
	Type     string `json:"type"`
	Endpoint string `json:"endpoint"`
	Reason   string `json:"reason"`
}

type optionWire struct {
	BookingOptionID string             `json:"booking_option_id"`
	ExpiresAt       string             `json:"expires_at"`
	Provider        optionProviderWire `json:"provider"`
	Service         optionServiceWire  `json:"service"`
	Slot            timeWindowWire     `json:"slot"`
	Price           optionPriceWire    `json:"price"`
	// TaxReductionEstimate is the preliminary ROT/RUT estimate, or nil.
	TaxReductionEstimate *booking.TaxEstimateWire `json:"tax_reduction_estimate,omitempty"`
	// taxConditions, when set, are the estimate's conditions encoded once
	// per rules (taxConditionsFor), written in place of its Conditions.
	taxConditions []byte
	// texts are the scope and terms of the service, encoded once per
	// server and spliced in by encodeSearch (members "scope" and "terms").
	texts serviceTexts
}

type optionProviderWire struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	City        string `json:"city,omitempty"`
	RatingLabel string `json:"rating_label,omitempty"`
}

type optionServiceWire struct {
	ServiceID  string `json:"service_id"`
	VerticalID string `json:"vertical_id"`
	JobTypeID  string `json:"job_type_id"`
	LabelSV    string `json:"label_sv"`
	LabelEN    string `json:"label_en,omitempty"`
}

type optionPriceWire struct {
	AmountSEK        int64    `json:"amount_sek"`
	Currency         string   `json:"currency"`
	PricingModel     string   `json:"pricing_model"`
	PriceType        string   `json:"price_type"`
	UnitPriceSEK     *int64   `json:"unit_price_sek,omitempty"`
	Unit             string   `json:"unit,omitempty"`
	Quantity         *float64 `json:"quantity,omitempty"`
	MinimumChargeSEK *int64   `json:"minimum_charge_sek,omitempty"`
}

type scopeWire struct {
	IncludedSV                []string `json:"included_sv,omitempty"`
	ExcludedSV                []string `json:"excluded_sv,omitempty"`
	CustomerRequirementsSV    []string `json:"customer_requirements_sv,omitempty"`
	PriceAdjustmentTriggersSV []string `json:"price_adjustment_triggers_sv,omitempty"`
	QuoteTriggersSV           []string `json:"quote_triggers_sv,omitempty"`
}

type termsWire struct {
	Version    string             `json:"version"`
	URL        string             `json:"url"`
	Sections   []termsSectionWire `json:"sections"`
	SourceURLs []string           `json:"source_urls"`
}

type termsSectionWire struct {
	ID      string `json:"id"`
	TitleSV string `json:"title_sv"`
	BodySV  string `json:"body_sv"`
}

// serviceTexts are the scope and terms of a service as options carry them,
// with addresses resolved against the base URL.
type serviceTexts struct {
	scope, terms json.RawMessage
}

// renderedTexts are the service texts rendered so far, by catalog and base
// URL: the servers of one process share the catalog and, but in tests, the
// base URL, so they are rendered once per process instead of per server.
var renderedTexts struct {
	sync.Mutex
	texts map[textsKey]map[string]serviceTexts
}

type textsKey struct {
	cat     *catalog.Catalog
	baseURL string
}

// serviceTextsFor returns the service texts of the catalog under the base
// URL, rendered by buildServiceTexts on the first call for the pair. The
// map and its texts are shared and read only.
func serviceTextsFor(cat *catalog.Catalog, baseURL string) (map[string]serviceTexts, error) {
	r := &renderedTexts
	r.Lock()
	defer r.Unlock()
	key := textsKey{cat, baseURL}
	if texts, ok := r.texts[key]; ok {
		return texts, nil
	}
	texts, err := buildServiceTexts(cat, baseURL)
	if err != nil {
		return nil, err
	}
	if r.texts == nil {
		r.texts = map[textsKey]map[string]serviceTexts{}
	}
	r.texts[key] = texts
	return texts, nil
}

// buildServiceTexts renders every service's scope and terms; the catalog
// and the base URL never change while a server runs.
func buildServiceTexts(cat *catalog.Catalog, baseURL string) (map[string]serviceTexts, error) {
	out := make(map[string]serviceTexts, len(cat.Services))
	for id, svc := range cat.Services {
		scope, err := json.Marshal(scopeWire{
			IncludedSV: svc.Scope.IncludedSV, ExcludedSV: svc.Scope.ExcludedSV,
			CustomerRequirementsSV: svc.Scope.CustomerRequirementsSV, PriceAdjustmentTriggersSV: svc.Scope.PriceAdjustmentTriggersSV,
			QuoteTriggersSV: svc.Scope.QuoteTriggersSV,
		})
		if err != nil {
			return nil, err
		}
		t := termsWire{Version: svc.Terms.Version, URL: absoluteURL(baseURL, svc.Terms.URL),
			Sections: make([]termsSectionWire, 0, len(svc.Terms.Sections)), SourceURLs: make([]string, 0, len(svc.Terms.SourceURLs))}
		for _, sec := range svc.Terms.Sections {
			t.Sections = append(t.Sections, termsSectionWire{ID: sec.ID, TitleSV: sec.TitleSV, BodySV: sec.BodySV})
		}
		for _, u := range svc.Terms.SourceURLs {
			t.SourceURLs = append(t.SourceURLs, absoluteURL(baseURL, u))
		}
		terms, err := json.Marshal(t)
		if err != nil {
			return nil, err
		}
		out[id] = serviceTexts{scope: scope, terms: terms}
	}
	return out, nil
}

// absoluteURL resolves a path of the catalog ("/terms/x") against the base URL.
func absoluteURL(baseURL, u string) string {
	if strings.HasPrefix(u, "/") {
		return baseURL + u
	}
	return u
}

// handleSearch serves POST /v1/booking-options and its deprecated twin.
// The vertical and job type are checked before the schema, so that an
// unknown or not-yet-bookable vertical answers 422 unsupported_vertical (the
// contract's status) rather than a 400 for failing the vertical_id enum.
// A body the schema accepts has both as strings, so the job type is read
// again only when the schema refused the body.
func (s *Server) handleSearch(w http.ResponseWriter, r *http.Request) error {
	body, err := readJSONBody(r)
	if err != nil {
		return err
	}
	var req searchRequestWire
	if err := s.decodeBody(r, body, &req); err != nil {
		var peek struct {
			VerticalID any `json:"vertical_id"`
			JobTypeID  any `json:"job_type_id"`
		}
		if json.Unmarshal(body, &peek) == nil {
			if jobErr := s.checkSearchJob(peek.VerticalID, peek.JobTypeID); jobErr != nil {
				return jobErr
			}
		}
		return err
	}
	if err := s.checkSearchJob(req.VerticalID, req.JobTypeID); err != nil {
		return err
	}
	q := booking.Query{
		VerticalID: req.VerticalID, JobTypeID: req.JobTypeID, Postcode: req.Location.Postcode,
		PreferredTimeText: req.Timing.PreferredTimeText, Urgency: req.Timing.Urgency,
		Details: req.Details, Locale: req.Locale, Mode: auth.PrincipalFrom(r.Context()).Realm(),
	}
	if req.DestinationLocation != nil {
		q.DestinationPostcode = req.DestinationLocation.Postcode
	}
	res, err := s.search.Search(r.Context(), q)
	if err != nil {
		return err
	}
	return s.writeSearch(w, r, res)
}

// checkSearchJob answers unsupported_vertical or unsupported_job_type for
// a vertical, and then a job type, that are strings the catalog does not
// offer; values of another JSON type are left to the schema.
func (s *Server) checkSearchJob(vertical, jobType any) error {
	v, ok := vertical.(string)
	if !ok {
		return nil
	}
	if _, known := s.catalog.Vertical(v); !known {
		return s.search.CheckJobType(v, "")
	}
	if j, ok := jobType.(string); ok {
		return s.search.CheckJobType(v, j)
	}
	return nil
}

// bookingOptionsRequestWire is the body of POST
// /v1/bookings/{booking_id}/booking-options: only the timing, the job is the
// booking's.
type bookingOptionsRequestWire struct {
	SpecVersion string     `json:"spec_version"`
	Timing      timingWire `json:"timing"`
	Locale      string     `json:"locale"`
}

// handleBookingOptions serves POST /v1/bookings/{booking_id}/booking-options: the
// options of moving the caller's active booking to another time, its own
// provider's only (what reschedule accepts), as a search answers them.
// Another client's booking is 404 booking_not_found, a cancelled one 409
// booking_not_active.
func (s *Server) handleBookingOptions(w http.ResponseWriter, r *http.Request) error {
	body, err := readJSONBody(r)
	if err != nil {
		return err
	}
	var req bookingOptionsRequestWire
	if err := s.decodeBody(r, body, &req); err != nil {
		return err
	}
	b, err := s.bookings.ActiveBooking(r.Context(), auth.PrincipalFrom(r.Context()), r.PathValue("booking_id"))
	if err != nil {
		return err
	}
	res, err := s.search.OptionsFor(r.Context(), b, booking.TimingQuery{
		PreferredTimeText: req.Timing.PreferredTimeText, Urgency: req.Timing.Urgency, Locale: req.Locale})
	if err != nil {
		return err
	}
	return s.writeSearch(w, r, res)
}

// writeSearch writes a search result as the 200 SearchResponse.
func (s *Server) writeSearch(w http.ResponseWriter, r *http.Request, res booking.Result) error {
	buf := s.getBuf()
	defer s.putBuf(buf)
	// The metadata opens the object and the search body follows in the
	// same buffer, its opening brace turned into the separator.
	*buf = s.appendMeta((*buf)[:0], r)
	open := len(*buf)
	*buf = s.encodeSearch(*buf, res)
	(*buf)[open] = ','
	s.writeResponse(w, http.StatusOK, append(*buf, '\n'))
	return nil
}

// encodeSearch encodes a search response. The scope and terms of each
// option (several kilobytes of catalog text) were encoded once per server
// and are copied in as they are: encoding them again would be most of the
// cost of a search. Options are converted to their wire form one at a
// time, in place, and written at once.
// The body is appended to buf, which may be reused from an earlier search.
func (s *Server) encodeSearch(buf []byte, res booking.Result) []byte {
	size := 1024
	for _, o := range res.Options {
		texts := s.serviceTexts[o.Service.ID]
		size += 512 + len(o.ID) + len(texts.scope) + len(texts.terms)
	}
	buf = slices.Grow(buf, size)
	buf = appendSearchHead(buf, s.searchWire(res))
	buf = append(buf, `,"options":[`...)
	var (
		ow       optionWire
		estimate booking.TaxEstimateWire
		// The options of a search expire together: their expiry is
		// formatted once.
		expires     time.Time
		expiresWire string
	)
	for i, o := range res.Options {
		if i > 0 {
			buf = append(buf, ',')
		}
		if i == 0 || !o.ExpiresAt.Equal(expires) {
			expires, expiresWire = o.ExpiresAt, booking.WireTime(o.ExpiresAt)
		}
		s.optionWireOf(&ow, &estimate, o, expiresWire)
		buf = appendOption(buf, ow)
	}
	return append(buf, "]}"...)
}

// appendSearchHead writes what json.Marshal writes for out (tests compare
// the two), without its closing brace: every member but the options.
func appendSearchHead(b []byte, out searchResponseWire) []byte {
	appendBool := func(name string, v bool) {
		b = append(b, name...)
		b = strconv.AppendBool(b, v)
	}
	window := func(name string, w timeWindowWire) {
		b = append(b, name...)
		b = append(b, `{"start_at":`...)
		b = appendJSONString(b, w.StartAt)
		b = append(b, `,"end_at":`...)
		b = appendJSONString(b, w.EndAt)
		b = append(b, `,"label":`...)
		b = appendJSONString(b, w.Label)
	}
	appendBool(`{"ok":`, out.OK)
	b = append(b, `,"spec_version":`...)
	b = appendJSONString(b, out.SpecVersion)
	appendBool(`,"availability_checked":`, out.AvailabilityChecked)
	appendBool(`,"provider_selected":`, out.ProviderSelected)
	appendBool(`,"booking_created":`, out.BookingCreated)
	appendBool(`,"direct_booking_available":`, out.DirectBookingAvailable)
	b = append(b, `,"option_count":`...)
	b = strconv.AppendInt(b, int64(out.OptionCount), 10)
	if w := out.RequestedTimeWindow; w != nil {
		window(`,"requested_time_window":`, w.timeWindowWire)
		if len(w.NotUnderstood) > 0 {
			b = append(b, `,"not_understood":[`...)
			for i, word := range w.NotUnderstood {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendJSONString(b, word)
			}
			b = append(b, ']')
		}
		b = append(b, '}')
	}
	if len(out.NextAvailable) > 0 {
		b = append(b, `,"next_available":[`...)
		for i, n := range out.NextAvailable {
			if i > 0 {
				b = append(b, ',')
			}
			window("", n)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if out.LastBookableDate != "" {
		b = append(b, `,"last_bookable_date":`...)
		b = appendJSONString(b, out.LastBookableDate)
	}
	if f := out.Fallback; f != nil {
		b = append(b, `,"fallback":{"type":`...)
		b = appendJSONString(b, f.Type)
		b = append(b, `,"endpoint":`...)
		b = appendJSONString(b, f.Endpoint)
		b = append(b, `,"reason":`...)
		b = appendJSONString(b, f.Reason)
		b = append(b, '}')
	}
	b = append(b, `,"safe_next_step":`...)
	return appendJSONString(b, out.SafeNextStep)
}

// appendOption writes one option as JSON; it writes what json.Marshal would
// write for optionWire (tests compare the two), plus the pre-encoded scope
// and terms, without reflection.
func appendOption(b []byte, o optionWire) []byte {
	str := func(sep, name, v string) {
		b = append(b, sep...)
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, `":`...)
		b = appendJSONString(b, v)
	}
	optStr := func(name, v string) {
		if v != "" {
			str(",", name, v)
		}
	}
	str("{", "booking_option_id", o.BookingOptionID)
	str(",", "expires_at", o.ExpiresAt)
	str(`,"provider":{`, "id", o.Provider.ID)
	str(",", "name", o.Provider.Name)
	optStr("city", o.Provider.City)
	optStr("rating_label", o.Provider.RatingLabel)
	str(`},"service":{`, "service_id", o.Service.ServiceID)
	str(",", "vertical_id", o.Service.VerticalID)
	str(",", "job_type_id", o.Service.JobTypeID)
	str(",", "label_sv", o.Service.LabelSV)
	optStr("label_en", o.Service.LabelEN)
	str(`},"slot":{`, "start_at", o.Slot.StartAt)
	str(",", "end_at", o.Slot.EndAt)
	str(",", "label", o.Slot.Label)
	b = append(b, `},"price":{"amount_sek":`...)
	b = strconv.AppendInt(b, o.Price.AmountSEK, 10)
	str(",", "currency", o.Price.Currency)
	str(",", "pricing_model", o.Price.PricingModel)
	str(",", "price_type", o.Price.PriceType)
	if o.Price.UnitPriceSEK != nil {
		b = append(b, `,"unit_price_sek":`...)
		b = strconv.AppendInt(b, *o.Price.UnitPriceSEK, 10)
	}
	optStr("unit", o.Price.Unit)
	if o.Price.Quantity != nil {
		b = append(b, `,"quantity":`...)
		b = strconv.AppendFloat(b, *o.Price.Quantity, 'f', -1, 64)
	}
	if o.Price.MinimumChargeSEK != nil {
		b = append(b, `,"minimum_charge_sek":`...)
		b = strconv.AppendInt(b, *o.Price.MinimumChargeSEK, 10)
	}
	b = append(b, '}')
	if o.TaxReductionEstimate != nil {
		b = append(b, `,"tax_reduction_estimate":`...)
		b = appendTaxEstimate(b, o.TaxReductionEstimate, o.taxConditions)
	}
	b = append(b, `,"scope":`...)
	b = append(b, o.texts.scope...)
	b = append(b, `,"terms":`...)
	b = append(b, o.texts.terms...)
	return append(b, '}')
}

// appendTaxEstimate writes a tax reduction estimate as json.Marshal would
// (tests compare the two), without reflection: most options of the demo
// supply carry one, and encoding/json cost a tenth of a search. conditions,
// when not nil, are the estimate's conditions already encoded (the texts of
// the kind, the same in every estimate), written instead of e.Conditions.
func appendTaxEstimate(b []byte, e *booking.TaxEstimateWire, conditions []byte) []byte {
	appendBool := func(name string, v bool) {
		b = append(b, name...)
		b = strconv.AppendBool(b, v)
	}
	appendInt := func(name string, v int64) {
		b = append(b, name...)
		b = strconv.AppendInt(b, v, 10)
	}
	appendStr := func(name, v string) {
		b = append(b, name...)
		b = appendJSONString(b, v)
	}
	appendBool(`{"preliminary":`, e.Preliminary)
	appendStr(`,"label_sv":`, e.LabelSV)
	appendStr(`,"label_en":`, e.LabelEN)
	appendStr(`,"kind":`, e.Kind)
	appendInt(`,"rate_percent":`, int64(e.RatePercent))
	appendInt(`,"labour_percent":`, int64(e.LabourPercent))
	appendInt(`,"labour_amount_sek":`, e.LabourAmountSEK)
	appendInt(`,"estimated_reduction_sek":`, e.EstimatedReductionSEK)
	appendInt(`,"price_after_reduction_sek":`, e.PriceAfterReductionSEK)
	appendStr(`,"currency":`, e.Currency)
	appendStr(`,"rules_version":`, e.RulesVersion)
	appendInt(`,"yearly_cap_sek":`, e.YearlyCapSEK)
	appendInt(`,"kind_yearly_cap_sek":`, e.KindYearlyCapSEK)
	appendBool(`,"caps_applied":`, e.CapsApplied)
	b = append(b, `,"conditions":`...)
	if conditions != nil {
		b = append(b, conditions...)
	} else {
		b = appendTaxConditions(b, e.Conditions)
	}
	return append(b, '}')
}

// appendTaxConditions writes the conditions of an estimate as json.Marshal
// would.
func appendTaxConditions(b []byte, conditions []booking.TaxConditionWire) []byte {
	if conditions == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, c := range conditions {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = appendJSONString(b, c.ID)
		b = append(b, `,"sv":`...)
		b = appendJSONString(b, c.SV)
		b = append(b, `,"en":`...)
		b = appendJSONString(b, c.EN)
		b = append(b, '}')
	}
	return append(b, ']')
}

// encodedConditions holds the conditions of each kind of estimate, encoded,
// by rules: the rules are loaded once per process and never change, so
// every server of a process shares one encoding.
var encodedConditions struct {
	sync.Mutex
	byRules map[*taxdeduction.Rules]map[string][]byte
}

// taxConditionsFor returns the encoded conditions of ROT and RUT estimates
// under rules (nil for no rules); the map is shared and read only.
func taxConditionsFor(rules *taxdeduction.Rules) map[string][]byte {
	if rules == nil {
		return nil
	}
	e := &encodedConditions
	e.Lock()
	defer e.Unlock()
	if m, ok := e.byRules[rules]; ok {
		return m
	}
	m := map[string][]byte{}
	for _, kind := range []taxdeduction.Kind{taxdeduction.ROT, taxdeduction.RUT} {
		m[string(kind)] = appendTaxConditions(nil, booking.TaxConditionsWireOf(rules, string(kind)))
	}
	if e.byRules == nil {
		e.byRules = map[*taxdeduction.Rules]map[string][]byte{}
	}
	e.byRules[rules] = m
	return m
}

// appendJSONString writes s as a JSON string, escaping as json.Marshal
// does (HTML characters included), so both encoders write the same bytes.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	// In valid UTF-8 the only multi-byte runes escaped are U+2028 and
	// U+2029 (E2 80 A8, E2 80 A9), so the bytes of other runes need no
	// decoding: a continuation byte is never E2. Invalid text takes the
	// rune-by-rune path from its first byte that needs a look.
	valid := utf8.ValidString(s)
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch jsonByte[c] {
		case plainByte:
			i++
			continue
		case leadByte:
			if valid && (c != 0xe2 || i+2 >= len(s) || s[i+1] != 0x80 || s[i+2]&^1 != 0xa8) {
				i++
				continue
			}
		case escapedByte:
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			if r == utf8.RuneError {
				b = append(b, `\ufffd`...)
			} else {
				b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			}
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// The classes of bytes in appendJSONString: written as they are, escaped
// (control characters, quote, backslash and the HTML characters), or the
// first byte of a multi-byte rune (or not UTF-8 at all).
const (
	plainByte = iota
	escapedByte
	leadByte
)

// jsonByte is the class of every byte value.
var jsonByte = func() (t [256]uint8) {
	for c := range 256 {
		switch {
		case c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&':
			t[c] = escapedByte
		case c >= utf8.RuneSelf:
			t[c] = leadByte
		}
	}
	return t
}()

// searchWire returns the members of a search answer but its options.
func (s *Server) searchWire(res booking.Result) searchResponseWire {
	out := searchResponseWire{
		OK: true, SpecVersion: bokat.BookingsContractVersion, AvailabilityChecked: true,
		DirectBookingAvailable: len(res.Options) > 0, OptionCount: len(res.Options),
		SafeNextStep: res.SafeNextStep,
		RequestedTimeWindow: &readWindowWire{timeWindowWire: timeWindowWire{
			StartAt: booking.WireTime(res.Window.Start), EndAt: booking.WireTime(res.Window.End), Label: res.Window.Label,
		}, NotUnderstood: res.Window.Unused},
	}
	if len(res.Options) == 0 {
		out.Fallback = &fallbackWire{Type: "provider_follow_up_request", Endpoint: s.baseURL + "/v1/requests", Reason: res.FallbackReason}
		for _, n := range res.NextAvailable {
			out.NextAvailable = append(out.NextAvailable, timeWindowWire{StartAt: booking.WireTime(n.Slot.Start), EndAt: booking.WireTime(n.Slot.End), Label: n.Label})
		}
		if res.FallbackReason == booking.ReasonBeyondHorizon {
			out.LastBookableDate = res.LastBookableDate.String()
		}
	}
	return out
}

// optionWireOf sets *ow to the wire form of o, whose expiry is expiresAt
// (booking.WireTime of o.ExpiresAt); an estimate, when o has one, is
// written to *estimate, which ow then points to.
func (s *Server) optionWireOf(ow *optionWire, estimate *booking.TaxEstimateWire, o booking.Option, expiresAt string) {
	*ow = optionWire{
		BookingOptionID: o.ID,
		ExpiresAt:       expiresAt,
		Provider:        optionProviderWire{ID: o.Provider.ID, Name: o.Provider.Name, City: o.Provider.City, RatingLabel: o.Provider.RatingLabel},
		Service: optionServiceWire{ServiceID: o.Service.ID, VerticalID: o.Service.VerticalID, JobTypeID: o.Service.JobTypeID,
			LabelSV: o.Service.LabelSV, LabelEN: o.Service.LabelEN},
		Slot: timeWindowWire{StartAt: booking.WireTime(o.Slot.Start), EndAt: booking.WireTime(o.Slot.End), Label: o.SlotLabel},
		Price: optionPriceWire{AmountSEK: o.Price.AmountSEK, Currency: catalog.Currency,
			PricingModel: string(o.Price.PricingModel), PriceType: string(o.Price.PriceType)},
		texts: s.serviceTexts[o.Service.ID],
	}
	if e, ok := booking.TaxEstimateFiguresOf(s.catalog.TaxRules, o.TaxReduction, o.Price.AmountSEK); ok {
		*estimate = e
		ow.TaxReductionEstimate = estimate
		if ow.taxConditions = s.taxConditions[e.Kind]; ow.taxConditions == nil {
			estimate.Conditions = booking.TaxConditionsWireOf(s.catalog.TaxRules, e.Kind)
		}
	}
	if o.Price.PricingModel.PerUnit() {
		unitPrice, quantity := o.Price.UnitPriceSEK, o.Price.Quantity
		ow.Price.UnitPriceSEK, ow.Price.Quantity, ow.Price.Unit = &unitPrice, &quantity, o.Price.Unit
		if o.Price.MinimumChargeSEK > 0 {
			minimum := o.Price.MinimumChargeSEK
			ow.Price.MinimumChargeSEK = &minimum
		}
	}
}

var termsPage = template.Must(template.New("terms").Parse(`<!doctype html>
<html lang="sv"><head><meta charset="utf-8"><title>Villkor: {{.Service.LabelSV}} — Bokat</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font-family:system-ui,sans-serif;max-width:44rem;margin:2rem auto;padding:0 1rem;line-height:1.5}code{background:#f2f2f2;padding:0 .2em}</style>
</head><body>
<h1>Villkor för fast pris: {{.Service.LabelSV}}</h1>
<p>Villkorsversion <code>{{.Service.Terms.Version}}</code>. Den här versionen är den som godkänns vid bokning.</p>
{{range .Sections}}<section id="{{.ID}}"><h2>{{.Title}}</h2>
{{range .Blocks}}{{if .Items}}<ul>{{range .Items}}<li>{{.}}</li>{{end}}</ul>{{else}}<p>{{.Text}}</p>{{end}}
{{end}}</section>
{{end}}{{if .Sources}}<h2>Källor</h2><ul>{{range .Sources}}<li><a href="{{.}}">{{.}}</a></li>{{end}}</ul>{{end}}
</body></html>
`))

type termsBlock struct {
	Text  string
	Items []string
}

type termsSection struct {
	ID, Title string
	Blocks    []termsBlock
}

// termsBlocks splits a section body into paragraphs and "- " lists.
func termsBlocks(body string) []termsBlock {
	var out []termsBlock
	for _, para := range strings.Split(body, "\n\n") {
		lines := strings.Split(strings.TrimSpace(para), "\n")
		var text []string
		var items []string
		for _, l := range lines {
			if item, ok := strings.CutPrefix(strings.TrimSpace(l), "- "); ok {
				items = append(items, item)
			} else if l = strings.TrimSpace(l); l != "" {
				text = append(text, l)
			}
		}
		if len(text) > 0 {
			out = append(out, termsBlock{Text: strings.Join(text, " ")})
		}
		if len(items) > 0 {
			out = append(out, termsBlock{Items: items})
		}
	}
	return out
}

// handleTerms serves GET /terms/{service_id}: the catalog's Swedish terms of
// a service as HTML, the page an option's terms.url names.
func (s *Server) handleTerms(w http.ResponseWriter, r *http.Request) error {
	svc, ok := s.catalog.Service(r.PathValue("service_id"))
	if !ok {
		return bokat.Errorf(bokat.CodeNotFound, "no terms are published for this service id")
	}
	sections := make([]termsSection, 0, len(svc.Terms.Sections))
	for _, sec := range svc.Terms.Sections {
		sections = append(sections, termsSection{ID: sec.ID, Title: sec.TitleSV, Blocks: termsBlocks(sec.BodySV)})
	}
	var sources []string
	for _, u := range svc.Terms.SourceURLs {
		if !strings.HasPrefix(u, "/terms/") {
			sources = append(sources, absoluteURL(s.baseURL, u))
		}
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Language", "sv")
	w.Header().Set("Cache-Control", "public, max-age=300")
	return termsPage.Execute(w, map[string]any{"Service": svc, "Sections": sections, "Sources": sources})
}
