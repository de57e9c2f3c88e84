package bokat

import (
	"slices"
	"strings"
)

// Scope is an OAuth-style permission of the public contract.
type Scope string

// The scopes of the contract.
const (
	ScopeCapabilitiesRead   Scope = "service.capabilities.read"
	ScopeBookingsSearch     Scope = "service.bookings.search"
	ScopeBookingsConfirm    Scope = "service.bookings.confirm"
	ScopeBookingsRead       Scope = "service.bookings.read"
	ScopeBookingsCancel     Scope = "service.bookings.cancel"
	ScopeBookingsReschedule Scope = "service.bookings.reschedule"
	ScopeRequestsCreate     Scope = "service.requests.create"
	ScopeWebhooksManage     Scope = "service.webhooks.manage"
)

// AllScopes lists every scope in the contract's order.
func AllScopes() []Scope {
	return []Scope{
		ScopeCapabilitiesRead, ScopeBookingsSearch, ScopeBookingsConfirm, ScopeBookingsRead,
		ScopeBookingsCancel, ScopeBookingsReschedule, ScopeRequestsCreate, ScopeWebhooksManage,
	}
}

// ParseScopes reads a comma- or space-separated scope list; "all" means every
// scope. Unknown names are an error naming them.
func ParseScopes(list string) ([]Scope, error) {
	fields := strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' })
	if len(fields) == 1 && fields[0] == "all" {
		return AllScopes(), nil
	}
	var out []Scope
	var unknown []string
	for _, f := range fields {
		s := Scope(f)
		if !slices.Contains(AllScopes(), s) {
			unknown = append(unknown, f)
			continue
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	if len(unknown) > 0 {
		return nil, Errorf(CodeValidationFailed, "unknown scope(s): %s", strings.Join(unknown, ", "))
	}
	if len(out) == 0 {
		return nil, Errorf(CodeValidationFailed, "no scopes given")
	}
	return out, nil
}

// The provider API's scopes: held only by provider tokens, never by a
// partner or an OAuth client (docs/providers.md, "Provider API").
const (
	ScopeProviderBookingsRead  Scope = "provider.bookings.read"
	ScopeProviderBookingsWrite Scope = "provider.bookings.write"
	ScopeProviderCalendarWrite Scope = "provider.calendar.write"
	ScopeProviderSupplyWrite   Scope = "provider.supply.write"
)

// ProviderScopes lists the provider API's scopes.
func ProviderScopes() []Scope {
	return []Scope{ScopeProviderBookingsRead, ScopeProviderBookingsWrite, ScopeProviderCalendarWrite, ScopeProviderSupplyWrite}
}

// ParseProviderScopes reads a comma- or space-separated list of provider
// scopes; "all" means every one.
func ParseProviderScopes(list string) ([]Scope, error) {
	fields := strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' })
	if len(fields) == 1 && fields[0] == "all" {
		return ProviderScopes(), nil
	}
	var out []Scope
	for _, f := range fields {
		if !slices.Contains(ProviderScopes(), Scope(f)) {
			return nil, Errorf(CodeValidationFailed, "unknown provider scope: %s", f)
		}
		if !slices.Contains(out, Scope(f)) {
			out = append(out, Scope(f))
		}
	}
	if len(out) == 0 {
		return nil, Errorf(CodeValidationFailed, "no scopes given")
	}
	return out, nil
}

// PrincipalKind says how a caller authenticated.
type PrincipalKind string

// The kinds of principal.
const (
	PrincipalAnonymous PrincipalKind = "anonymous"
	PrincipalPartner   PrincipalKind = "partner"
	PrincipalOAuth     PrincipalKind = "oauth"
	// PrincipalProvider is a provider's own system with a provider token:
	// it acts for ProviderID only, with the provider scopes.
	PrincipalProvider PrincipalKind = "provider"
	// PrincipalDevelopment is the caller admitted without a credential when
	// the server runs with --auth-optional (development only).
	PrincipalDevelopment PrincipalKind = "development"
)

// CredentialForm says which of the contract's credential forms carried the token.
type CredentialForm string

// The credential forms.
const (
	FormNone          CredentialForm = ""
	FormBearer        CredentialForm = "bearer"
	FormPartnerHeader CredentialForm = "partner_header"
)

// Principal is the authenticated caller. Ownership of bookings, requests and
// webhook endpoints is keyed by OwnerKey.
type Principal struct {
	Kind     PrincipalKind
	ClientID string
	// UserID is set for delegated OAuth tokens: the signed-in customer.
	UserID string
	Scopes []Scope
	Form   CredentialForm
	// ProviderID is the provider a provider token acts for.
	ProviderID string
	// Audience is the resource an OAuth access token was issued for (RFC
	// 8707); empty for partner and development principals, which are valid
	// on every surface.
	Audience Audience
	// Mode is the realm of the credential: a test principal sees, changes
	// and books only test objects and test providers, a live one only live
	// ones. The zero value is live.
	Mode Mode
}

// Audience is a resource of this service that OAuth access tokens are
// bound to.
type Audience string

// The audiences: the REST API and the MCP endpoint.
const (
	AudienceAPI Audience = "api"
	AudienceMCP Audience = "mcp"
)

// Has reports whether the principal holds the scope.
func (p Principal) Has(s Scope) bool { return slices.Contains(p.Scopes, s) }

// Authenticated reports whether the caller presented a valid credential.
func (p Principal) Authenticated() bool {
	return p.Kind == PrincipalPartner || p.Kind == PrincipalOAuth || p.Kind == PrincipalDevelopment || p.Kind == PrincipalProvider
}

// OwnerKey identifies the owner of resources the principal creates: the
// client, and for delegated tokens the client together with the user.
func (p Principal) OwnerKey() string {
	if p.UserID != "" {
		return p.ClientID + "/" + p.UserID
	}
	return p.ClientID
}

// Mode is a realm: every credential, every object it owns and every provider
// belongs to one. Test activity never reaches a real provider, real e-mail or
// live metrics (docs/testing.md).
type Mode string

// The modes. An empty Mode is live.
const (
	ModeLive Mode = "live"
	ModeTest Mode = "test"
)

// ParseMode reads a mode name; anything but "live" or "test" is an error.
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case ModeLive, ModeTest:
		return Mode(s), nil
	}
	return "", Errorf(CodeValidationFailed, "unknown mode %q: use live or test", s)
}

// Or returns m, or live when m is empty: the mode to store and to filter by.
func (m Mode) Or() Mode {
	if m == "" {
		return ModeLive
	}
	return m
}

// Test reports whether m is the test realm.
func (m Mode) Test() bool { return m == ModeTest }

// Realm returns the mode the principal's objects belong to (live when unset).
func (p Principal) Realm() Mode { return p.Mode.Or() }

// The magic test providers (docs/testing.md): the test realm's supply, in
// every seeded service, each with one predictable behaviour. Their ids start
// with TestProviderIDPrefix, which no supply file may use.
const (
	TestProviderIDPrefix = "test_"
	// TestProviderFree is always bookable: every day, all day, everywhere.
	TestProviderFree = "test_free"
	// TestProviderTaken is offered by search, but its slot is taken before
	// any confirm: 409 booking_option_unavailable.
	TestProviderTaken = "test_taken"
	// TestProviderUnreachable is bookable, but its message fails for good:
	// booking.provider_action_required follows.
	TestProviderUnreachable = "test_unreachable"
	// TestProviderFollowUpOnly is never offered by search: only a
	// follow-up request reaches it.
	TestProviderFollowUpOnly = "test_followup_only"
	// TestProviderCancels is bookable, and cancels each booking an hour
	// after it was confirmed, as a provider who cannot come would.
	TestProviderCancels = "test_cancels"
	// TestUnreachableEmail is the address of TestProviderUnreachable: a
	// test-mode message to it fails permanently.
	TestUnreachableEmail = "unreachable@test.bokat.invalid"
)
