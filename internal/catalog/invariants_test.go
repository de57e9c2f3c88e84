package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
)

// maxTermsVersionLen is the longest booking_terms_version a client may echo.
const maxTermsVersionLen = 240

// maxJobTypeIDLen is the longest job_type_id a request may carry.
const maxJobTypeIDLen = 120

// isID reports whether s is a lowercase id: a letter, then letters, digits
// and underscores.
func isID(s string) bool {
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z':
		case i > 0 && (r >= '0' && r <= '9' || r == '_'):
		default:
			return false
		}
	}
	return s != ""
}

// Check verifies every invariant of the catalog and returns all problems
// found, joined, or nil. The catalog is embedded and cannot change after the
// build, so these rules run in its tests (TestLoad) rather than at every
// start, which checks only the cross references (checkReferences). It
// checks that
//
//   - the four supported verticals appear once each with their constant
//     statuses and supplies, labels and agent texts, at least one job type,
//     and a fixed_price_service_count no smaller than their seeded job types;
//   - job type ids are well formed and unique across the catalog, routing
//     modes and fits are valid, and required signals are unique *_known ids;
//   - every seed has valid enums, currency SEK, a consistent pricing model,
//     price type and booking mode, provider confirmation required, and names
//     a service that no other seed names;
//   - every service is named by exactly one seed and agrees with it; has
//     labels; has a unit, details key and default within its min..max range
//     exactly when it is priced per unit; has the duration rule of its
//     pricing model; has Swedish scope lists; and has terms with version
//     TermsVersion(id), a relative URL, the required sections with Swedish
//     titles and bodies, and source URLs that are relative paths or https;
//   - unavailable verticals are unique, distinct from supported ones and
//     marked not_bookable_yet;
//   - the capability texts carry the values the interface fixes (fallback
//     flags false, confirmed contract true, consent before personal data,
//     country SE, the auth schemes and scopes).
func (c *Catalog) Check() error {
	var p problems
	c.checkVerticals(&p)
	c.checkServices(&p)
	c.checkUnavailable(&p)
	c.checkCapability(&p)
	return errors.Join(p...)
}

type problems []error

func (p *problems) addf(format string, args ...any) {
	*p = append(*p, fmt.Errorf("catalog: "+format, args...))
}

// text reports a blank string.
func (p *problems) text(path, field, s string) {
	if strings.TrimSpace(s) == "" {
		p.addf("%s: %s is empty", path, field)
	}
}

// texts reports an empty list, blank items and repeated items.
func (p *problems) texts(path, field string, list []string) {
	if len(list) == 0 {
		p.addf("%s: %s is empty", path, field)
	}
	seen := map[string]bool{}
	for i, s := range list {
		if strings.TrimSpace(s) == "" {
			p.addf("%s: %s[%d] is empty", path, field, i)
		} else if seen[s] {
			p.addf("%s: %s repeats %q", path, field, s)
		}
		seen[s] = true
	}
}

func (p *problems) equal(path, field, got, want string) {
	if got != want {
		p.addf("%s: %s is %q, want %q", path, field, got, want)
	}
}

func supportedVerticalIDs() []string {
	return []string{VerticalVVS, VerticalElectrician, VerticalMoving, VerticalCleaning}
}

func requiredSectionIDs() []string {
	return []string{SectionIncluded, SectionPrice, SectionCancellation, SectionComplaints, SectionPersonalData}
}

func (c *Catalog) checkVerticals(p *problems) {
	seenVertical := map[string]bool{}
	jobTypeVertical := map[string]string{}
	for i, v := range c.Verticals {
		path := fmt.Sprintf("verticals[%d:%s]", i, v.ID)
		if !slices.Contains(supportedVerticalIDs(), v.ID) {
			p.addf("%s: vertical_id %q is not a supported vertical", path, v.ID)
		}
		if seenVertical[v.ID] {
			p.addf("%s: vertical_id %q is given twice", path, v.ID)
		}
		seenVertical[v.ID] = true
		p.text(path, "label_sv", v.LabelSV)
		p.text(path, "label_en", v.LabelEN)
		p.equal(path, "agent_status", v.AgentStatus, AgentStatusBookingAndRequestSupported)
		p.text(path, "agent_summary", v.AgentSummary)
		p.text(path, "safe_next_step", v.SafeNextStep)
		p.equal(path, "provider_supply", v.ProviderSupply, ProviderSupplyIndexed)
		p.equal(path, "direct_booking_supply", v.DirectBookingSupply, DirectBookingSupplySearchRequired)
		if len(v.JobTypes) == 0 {
			p.addf("%s: job_types is empty", path)
		}
		seeded := 0
		for j, jt := range v.JobTypes {
			jpath := fmt.Sprintf("%s.job_types[%d:%s]", path, j, jt.ID)
			if !isID(jt.ID) || len(jt.ID) > maxJobTypeIDLen {
				p.addf("%s: job_type_id %q is not a lowercase id of at most %d characters", jpath, jt.ID, maxJobTypeIDLen)
			}
			if other, dup := jobTypeVertical[jt.ID]; dup {
				p.addf("%s: job_type_id %q is already used in vertical %q", jpath, jt.ID, other)
			} else {
				jobTypeVertical[jt.ID] = v.ID
			}
			p.text(jpath, "label_sv", jt.LabelSV)
			p.text(jpath, "label_en", jt.LabelEN)
			if !jt.RoutingMode.Valid() {
				p.addf("%s: routing_mode %q is not valid", jpath, jt.RoutingMode)
			}
			if !jt.FixedPriceFit.Valid() {
				p.addf("%s: fixed_price_fit %q is not valid", jpath, jt.FixedPriceFit)
			}
			p.texts(jpath, "required_signals", jt.RequiredSignals)
			for _, sig := range jt.RequiredSignals {
				if !isID(sig) || !strings.HasSuffix(sig, "_known") {
					p.addf("%s: required signal %q is not a lowercase id ending in _known", jpath, sig)
				}
			}
			if jt.Seed != nil {
				seeded++
				checkSeed(p, jpath+".fixed_price_seed", *jt.Seed)
			}
		}
		if v.FixedPriceServiceCount < seeded {
			p.addf("%s: fixed_price_service_count %d is less than its %d seeded job types", path, v.FixedPriceServiceCount, seeded)
		}
	}
	for _, id := range supportedVerticalIDs() {
		if !seenVertical[id] {
			p.addf("verticals: supported vertical %q is missing", id)
		}
	}
}

func checkSeed(p *problems, path string, s Seed) {
	if !isID(s.ServiceID) {
		p.addf("%s: service_id %q is not a lowercase id", path, s.ServiceID)
	}
	if !s.PricingModel.Valid() {
		p.addf("%s: pricing_model %q is not valid", path, s.PricingModel)
	}
	if !s.PriceType.Valid() {
		p.addf("%s: price_type %q is not valid", path, s.PriceType)
	}
	p.equal(path, "currency", s.Currency, Currency)
	if !s.BookingModeWhenQualified.Valid() {
		p.addf("%s: booking_mode_when_qualified %q is not valid", path, s.BookingModeWhenQualified)
	}
	if !s.DirectBookingFit.Valid() {
		p.addf("%s: direct_booking_fit %q is not valid", path, s.DirectBookingFit)
	}
	if !s.ProviderConfirmationRequired {
		p.addf("%s: provider_confirmation_required must be true", path)
	}
	// Pricing model, price type and booking mode must tell the same story.
	switch {
	case (s.PricingModel == PricingStartingPrice) != (s.PriceType == PriceStartingPrice):
		p.addf("%s: pricing_model %q does not fit price_type %q", path, s.PricingModel, s.PriceType)
	case (s.PricingModel == PricingFlat) != (s.PriceType == PriceAvgFixed):
		p.addf("%s: pricing_model %q does not fit price_type %q", path, s.PricingModel, s.PriceType)
	case s.PricingModel.PerUnit() && s.PriceType != PriceAvgUnit && s.PriceType != PriceAvgRecurring:
		p.addf("%s: pricing_model %q does not fit price_type %q", path, s.PricingModel, s.PriceType)
	}
	if (s.PriceType == PriceAvgRecurring) != (s.BookingModeWhenQualified == BookingModeRecurringServiceStart) {
		p.addf("%s: price_type %q does not fit booking_mode_when_qualified %q", path, s.PriceType, s.BookingModeWhenQualified)
	}
}

// unitOf is the Swedish and English unit of each per-unit pricing model.
func unitOf(m PricingModel) (sv, en string) {
	switch m {
	case PricingPerItem:
		return "st", "item"
	case PricingPerHour:
		return "timme", "hour"
	case PricingPerSqm:
		return "kvm", "sqm"
	case PricingPerWindow:
		return "fönster", "window"
	}
	return "", ""
}

func (c *Catalog) checkServices(p *problems) {
	type place struct{ verticalID, jobTypeID string }
	seeds := map[string][]place{}
	seedOf := map[string]Seed{}
	for _, v := range c.Verticals {
		for _, jt := range v.JobTypes {
			if jt.Seed != nil {
				seeds[jt.Seed.ServiceID] = append(seeds[jt.Seed.ServiceID], place{v.ID, jt.ID})
				seedOf[jt.Seed.ServiceID] = *jt.Seed
			}
		}
	}
	for _, id := range slices.Sorted(maps.Keys(seeds)) {
		places := seeds[id]
		if len(places) > 1 {
			p.addf("fixed_price_seed: service_id %q is named by %d job types: %v", id, len(places), places)
		}
		if _, ok := c.Services[id]; !ok {
			p.addf("services: seeded service_id %q (%s/%s) has no service entry", id, places[0].verticalID, places[0].jobTypeID)
		}
	}

	for _, id := range slices.Sorted(maps.Keys(c.Services)) {
		s := c.Services[id]
		path := "services[" + id + "]"
		if s.ID != id {
			p.addf("%s: service_id is %q", path, s.ID)
		}
		places, seeded := seeds[id]
		if !seeded {
			p.addf("%s: no job type has a fixed_price_seed with this service_id", path)
		} else {
			seed := seedOf[id]
			p.equal(path, "vertical_id", s.VerticalID, places[0].verticalID)
			p.equal(path, "job_type_id", s.JobTypeID, places[0].jobTypeID)
			p.equal(path, "pricing_model", string(s.PricingModel), string(seed.PricingModel))
			p.equal(path, "price_type", string(s.PriceType), string(seed.PriceType))
		}
		p.text(path, "label_sv", s.LabelSV)
		p.text(path, "label_en", s.LabelEN)
		checkUnitAndDuration(p, path, s)
		p.texts(path, "scope.included_sv", s.Scope.IncludedSV)
		p.texts(path, "scope.excluded_sv", s.Scope.ExcludedSV)
		p.texts(path, "scope.customer_requirements_sv", s.Scope.CustomerRequirementsSV)
		p.texts(path, "scope.price_adjustment_triggers_sv", s.Scope.PriceAdjustmentTriggersSV)
		p.texts(path, "scope.quote_triggers_sv", s.Scope.QuoteTriggersSV)
		checkTerms(p, path+".terms", id, s.Terms)
	}
}

func checkUnitAndDuration(p *problems, path string, s Service) {
	d := s.Duration
	if s.PricingModel.PerUnit() {
		sv, en := unitOf(s.PricingModel)
		p.equal(path, "unit", s.Unit, sv)
		p.equal(path, "unit_en", s.UnitEN, en)
		if !isID(s.QuantityDetail) {
			p.addf("%s: quantity_detail %q is not a lowercase details key", path, s.QuantityDetail)
		}
		if !(0 < s.MinQuantity && s.MinQuantity <= s.DefaultQuantity && s.DefaultQuantity <= s.MaxQuantity) {
			p.addf("%s: quantities must satisfy 0 < min_quantity (%v) <= default_quantity (%v) <= max_quantity (%v)",
				path, s.MinQuantity, s.DefaultQuantity, s.MaxQuantity)
		}
		if d.FixedMinutes != 0 || d.MinutesPerUnit <= 0 || d.MinimumMinutes <= 0 {
			p.addf("%s: duration of a per-unit service needs minutes_per_unit and minimum_minutes and no fixed_minutes", path)
		}
		if s.PricingModel == PricingPerHour && d.MinutesPerUnit != 60 {
			p.addf("%s: duration minutes_per_unit is %d, want 60 for per_hour", path, d.MinutesPerUnit)
		}
		return
	}
	if s.Unit != "" || s.UnitEN != "" || s.QuantityDetail != "" || s.DefaultQuantity != 0 || s.MinQuantity != 0 || s.MaxQuantity != 0 {
		p.addf("%s: pricing_model %q takes no unit, quantity_detail or quantities", path, s.PricingModel)
	}
	if d.FixedMinutes <= 0 || d.MinutesPerUnit != 0 || d.MinimumMinutes != 0 {
		p.addf("%s: duration of a %q service needs fixed_minutes only", path, s.PricingModel)
	}
}

func checkTerms(p *problems, path, serviceID string, t Terms) {
	p.equal(path, "version", t.Version, TermsVersion(serviceID))
	if len(t.Version) > maxTermsVersionLen {
		p.addf("%s: version is longer than %d characters", path, maxTermsVersionLen)
	}
	if !isRelativePath(t.URL) {
		p.addf("%s: url %q is not a path relative to the base URL", path, t.URL)
	}
	seen := map[string]bool{}
	for i, sec := range t.Sections {
		spath := fmt.Sprintf("%s.sections[%d:%s]", path, i, sec.ID)
		if !isID(sec.ID) {
			p.addf("%s: id %q is not a lowercase id", spath, sec.ID)
		}
		if seen[sec.ID] {
			p.addf("%s: id %q is given twice", spath, sec.ID)
		}
		seen[sec.ID] = true
		p.text(spath, "title_sv", sec.TitleSV)
		p.text(spath, "body_sv", sec.BodySV)
	}
	for _, id := range requiredSectionIDs() {
		if !seen[id] {
			p.addf("%s: section %q is missing", path, id)
		}
	}
	p.texts(path, "source_urls", t.SourceURLs)
	for _, u := range t.SourceURLs {
		if !isRelativePath(u) && !isHTTPS(u) {
			p.addf("%s: source url %q is neither a relative path nor an https URL", path, u)
		}
	}
}

func isRelativePath(s string) bool {
	if !strings.HasPrefix(s, "/") || strings.HasPrefix(s, "//") {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && u.Scheme == "" && u.Host == ""
}

func isHTTPS(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.Scheme == "https" && u.Host != ""
}

func (c *Catalog) checkUnavailable(p *problems) {
	seen := map[string]bool{}
	for i, u := range c.UnavailableVerticals {
		path := fmt.Sprintf("unavailable_verticals[%d:%s]", i, u.ID)
		if !isID(u.ID) {
			p.addf("%s: vertical_id %q is not a lowercase id", path, u.ID)
		}
		if slices.Contains(supportedVerticalIDs(), u.ID) {
			p.addf("%s: vertical_id %q is a supported vertical", path, u.ID)
		}
		if seen[u.ID] {
			p.addf("%s: vertical_id %q is given twice", path, u.ID)
		}
		seen[u.ID] = true
		p.text(path, "label_sv", u.LabelSV)
		p.text(path, "label_en", u.LabelEN)
		p.equal(path, "agent_status", u.AgentStatus, AgentStatusNotBookableYet)
		p.equal(path, "reason", u.Reason, AgentStatusNotBookableYet)
		p.text(path, "safe_next_step", u.SafeNextStep)
	}
}

// The views below are what Check reads from the open capability objects.
// They are decoded strictly, so a misspelt member in the data file fails.

type lifecycleView struct {
	Creates             string `json:"creates"`
	RequestStatus       string `json:"request_status"`
	BookingCreated      *bool  `json:"booking_created"`
	AvailabilityChecked *bool  `json:"availability_checked"`
	ProviderSelected    *bool  `json:"provider_selected"`
	Note                string `json:"note"`
}

type bookingLifecycleView struct {
	Search            string `json:"search"`
	Confirm           string `json:"confirm"`
	Fallback          string `json:"fallback"`
	AvailabilityTruth string `json:"availability_truth"`
	ConfirmedContract *struct {
		BookingCreated      *bool  `json:"booking_created"`
		AvailabilityChecked *bool  `json:"availability_checked"`
		ProviderSelected    *bool  `json:"provider_selected"`
		BookingStatus       string `json:"booking_status"`
	} `json:"confirmed_contract"`
}

type authView struct {
	Summary string `json:"summary"`
	Schemes []struct {
		ID                string `json:"id"`
		Type              string `json:"type"`
		Flow              string `json:"flow"`
		PKCERequired      *bool  `json:"pkce_required"`
		PKCEMethod        string `json:"pkce_method"`
		RefreshTokens     string `json:"refresh_tokens"`
		Status            string `json:"status"`
		Header            string `json:"header"`
		HeaderName        string `json:"header_name"`
		AuthorizationPath string `json:"authorization_path"`
		TokenPath         string `json:"token_path"`
		Use               string `json:"use"`
	} `json:"schemes"`
	Scopes     map[string]string `json:"scopes"`
	Operations []struct {
		Operation          string `json:"operation"`
		CredentialRequired *bool  `json:"credential_required"`
		Scope              string `json:"scope"`
	} `json:"operations"`
	Errors           string `json:"errors"`
	Ownership        string `json:"ownership"`
	LocalDevelopment string `json:"local_development"`
}

type agentContractView struct {
	ConsentRequiredBeforePIISubmission *bool    `json:"consent_required_before_pii_submission"`
	RequiredFields                     []string `json:"required_fields"`
	ForbiddenClaims                    []string `json:"forbidden_claims"`
	SafeNextStep                       string   `json:"safe_next_step"`
}

type geographicScopeView struct {
	CountryCode           string `json:"country_code"`
	CountryName           string `json:"country_name"`
	CountryNameEN         string `json:"country_name_en"`
	BookableOnlyInCountry *bool  `json:"bookable_only_in_country"`
	Note                  string `json:"note"`
}

// authScopes are the OAuth scopes the interface defines.
func authScopes() []string {
	return []string{
		"service.capabilities.read",
		"service.bookings.search",
		"service.bookings.confirm",
		"service.bookings.read",
		"service.bookings.cancel",
		"service.bookings.reschedule",
		"service.requests.create",
		"service.webhooks.manage",
	}
}

// partnerTokenHeader is the header of the partner machine-to-machine token.
const partnerTokenHeader = "X-Service-Requests-Token"

func decodeView(p *problems, name string, raw json.RawMessage, v any) bool {
	if len(bytes.TrimSpace(raw)) == 0 {
		p.addf("capabilities.%s is missing", name)
		return false
	}
	if err := decodeStrict(raw, v); err != nil {
		p.addf("capabilities.%s: %v", name, err)
		return false
	}
	return true
}

func flag(p *problems, path, field string, b *bool, want bool) {
	if b == nil {
		p.addf("%s: %s is missing", path, field)
	} else if *b != want {
		p.addf("%s: %s is %t, want %t", path, field, *b, want)
	}
}

func (c *Catalog) checkCapability(p *problems) {
	ct := c.Capability

	var lc lifecycleView
	if decodeView(p, "lifecycle", ct.Lifecycle, &lc) {
		path := "capabilities.lifecycle"
		p.equal(path, "creates", lc.Creates, "network_visit_request")
		p.equal(path, "request_status", lc.RequestStatus, "ready_to_send")
		flag(p, path, "booking_created", lc.BookingCreated, false)
		flag(p, path, "availability_checked", lc.AvailabilityChecked, false)
		flag(p, path, "provider_selected", lc.ProviderSelected, false)
		p.text(path, "note", lc.Note)
	}

	var bl bookingLifecycleView
	if decodeView(p, "booking_lifecycle", ct.BookingLifecycle, &bl) {
		path := "capabilities.booking_lifecycle"
		p.text(path, "search", bl.Search)
		p.text(path, "confirm", bl.Confirm)
		p.text(path, "fallback", bl.Fallback)
		p.text(path, "availability_truth", bl.AvailabilityTruth)
		if cc := bl.ConfirmedContract; cc == nil {
			p.addf("%s: confirmed_contract is missing", path)
		} else {
			cpath := path + ".confirmed_contract"
			flag(p, cpath, "booking_created", cc.BookingCreated, true)
			flag(p, cpath, "availability_checked", cc.AvailabilityChecked, true)
			flag(p, cpath, "provider_selected", cc.ProviderSelected, true)
			p.equal(cpath, "booking_status", cc.BookingStatus, "confirmed")
		}
	}

	var au authView
	if decodeView(p, "auth", ct.Auth, &au) {
		checkAuth(p, au)
	}

	p.texts("capabilities", "required_fields", ct.RequiredFields)

	var ac agentContractView
	if decodeView(p, "agent_contract", ct.AgentContract, &ac) {
		path := "capabilities.agent_contract"
		flag(p, path, "consent_required_before_pii_submission", ac.ConsentRequiredBeforePIISubmission, true)
		if !slices.Equal(ac.RequiredFields, ct.RequiredFields) {
			p.addf("%s: required_fields differ from capabilities.required_fields", path)
		}
		p.texts(path, "forbidden_claims", ac.ForbiddenClaims)
		p.text(path, "safe_next_step", ac.SafeNextStep)
	}

	var gs geographicScopeView
	if decodeView(p, "geographic_scope", ct.GeographicScope, &gs) {
		path := "capabilities.geographic_scope"
		p.equal(path, "country_code", gs.CountryCode, "SE")
		p.text(path, "country_name", gs.CountryName)
		p.text(path, "country_name_en", gs.CountryNameEN)
		flag(p, path, "bookable_only_in_country", gs.BookableOnlyInCountry, true)
		p.text(path, "note", gs.Note)
	}
}

func checkAuth(p *problems, au authView) {
	path := "capabilities.auth"
	p.text(path, "summary", au.Summary)
	p.text(path, "local_development", au.LocalDevelopment)
	schemes := map[string]int{}
	for i, s := range au.Schemes {
		if _, dup := schemes[s.ID]; dup {
			p.addf("%s: scheme %q is given twice", path, s.ID)
		}
		schemes[s.ID] = i
		p.text(path+".schemes["+s.ID+"]", "use", s.Use)
	}
	if i, ok := schemes["oauth2_user"]; !ok {
		p.addf("%s: scheme oauth2_user is missing", path)
	} else {
		s := au.Schemes[i]
		spath := path + ".schemes[oauth2_user]"
		p.equal(spath, "flow", s.Flow, "authorization_code")
		flag(p, spath, "pkce_required", s.PKCERequired, true)
		p.equal(spath, "pkce_method", s.PKCEMethod, "S256")
		p.equal(spath, "header", s.Header, "Authorization: Bearer <ACCESS_TOKEN>")
		if !isRelativePath(s.AuthorizationPath) || !isRelativePath(s.TokenPath) {
			p.addf("%s: authorization_path and token_path must be relative paths", spath)
		}
	}
	if i, ok := schemes["partner_bearer"]; !ok {
		p.addf("%s: scheme partner_bearer is missing", path)
	} else {
		p.equal(path+".schemes[partner_bearer]", "header", au.Schemes[i].Header, "Authorization: Bearer <PARTNER_TOKEN>")
	}
	if i, ok := schemes["partner_header"]; !ok {
		p.addf("%s: scheme partner_header is missing", path)
	} else {
		p.equal(path+".schemes[partner_header]", "header_name", au.Schemes[i].HeaderName, partnerTokenHeader)
	}
	for _, sc := range authScopes() {
		p.text(path+".scopes", sc, au.Scopes[sc])
	}
	for sc := range au.Scopes {
		if !slices.Contains(authScopes(), sc) {
			p.addf("%s.scopes: %q is not a defined scope", path, sc)
		}
	}
	seen := map[string]bool{}
	for _, op := range au.Operations {
		opath := path + ".operations[" + op.Operation + "]"
		p.text(opath, "operation", op.Operation)
		if seen[op.Operation] {
			p.addf("%s: operation is given twice", opath)
		}
		seen[op.Operation] = true
		switch {
		case op.CredentialRequired == nil:
			p.addf("%s: credential_required is missing", opath)
		case *op.CredentialRequired && !slices.Contains(authScopes(), op.Scope):
			p.addf("%s: scope %q is not a defined scope", opath, op.Scope)
		case !*op.CredentialRequired && op.Scope != "":
			p.addf("%s: an operation without credential has no scope", opath)
		}
	}
	if len(au.Operations) == 0 {
		p.addf("%s: operations is empty", path)
	}
}
