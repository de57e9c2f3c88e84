// Package booking holds Bokat's booking use cases. This file and its
// neighbours implement search: finding the concrete, signed, short-lived
// options of a job — an active provider that covers the postcode(s), owns a
// price for the job type's seeded service, and has a free slot inside its
// working hours — and revalidating an option's facts when it is confirmed.
package booking

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"bokat"
	"bokat/internal/catalog"
	"bokat/internal/schedule"
	"bokat/internal/sqlstore"
)

// SupplyStore is what search reads from the store.
type SupplyStore interface {
	// SupplyRevision is the current revision of the supply tables.
	SupplyRevision(ctx context.Context) (int64, error)
	// LoadSupply reads every provider's supply and its revision.
	LoadSupply(ctx context.Context) (sqlstore.Supply, error)
	// BusyEntriesWithRevision returns the active calendar entries of the
	// providers overlapping [from, to), and the supply revision, read together.
	BusyEntriesWithRevision(ctx context.Context, providerIDs []string, from, to time.Time) ([]bokat.CalendarEntry, int64, error)
}

var _ SupplyStore = (*sqlstore.DB)(nil)

// Defaults of Config.
const (
	DefaultOptionTTL      = 15 * time.Minute
	DefaultMaxPerProvider = 3
	DefaultMaxOptions     = 10
	DefaultSlotStep       = time.Hour
)

// Config holds a Search's dependencies and limits.
type Config struct {
	Catalog *catalog.Catalog
	Store   SupplyStore
	// Keys signs options. Nil means signing is not configured: search then
	// answers option_signing_not_configured (503).
	Keys *Keyring
	// OptionTTL is the lifetime of an option (default 15 minutes).
	OptionTTL time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
	// MaxPerProvider and MaxOptions bound the options of one search
	// (defaults 3 and 10).
	MaxPerProvider, MaxOptions int
	// SlotStep is the distance between slot starts on the wall clock,
	// counted from the start of each working range (default one hour).
	SlotStep time.Duration
}

// Search finds booking options. It is safe for concurrent use.
type Search struct {
	cat            *catalog.Catalog
	store          SupplyStore
	keys           *Keyring
	ttl            time.Duration
	now            func() time.Time
	maxPerProvider int
	maxOptions     int
	step           time.Duration
	// timing reads timing texts, remembering the phrases of recent ones.
	timing *schedule.TimingReader

	// snap is the supply read at some revision; it is replaced when the
	// store's revision moves on. Calendar entries are never cached.
	snap   atomic.Pointer[snapshot]
	loadMu sync.Mutex
}

// NewSearch returns a Search for the configuration.
func NewSearch(cfg Config) (*Search, error) {
	if cfg.Catalog == nil || cfg.Store == nil {
		return nil, errors.New("booking: Catalog and Store are required")
	}
	s := &Search{
		cat: cfg.Catalog, store: cfg.Store, keys: cfg.Keys, ttl: cfg.OptionTTL, now: cfg.Now,
		maxPerProvider: cfg.MaxPerProvider, maxOptions: cfg.MaxOptions, step: cfg.SlotStep,
		timing: schedule.NewTimingReader(0),
	}
	if s.ttl <= 0 {
		s.ttl = DefaultOptionTTL
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.maxPerProvider <= 0 {
		s.maxPerProvider = DefaultMaxPerProvider
	}
	if s.maxOptions <= 0 {
		s.maxOptions = DefaultMaxOptions
	}
	if s.step <= 0 {
		s.step = DefaultSlotStep
	}
	return s, nil
}

// Keys returns the keyring options are signed and verified with; nil when
// signing is not configured.
func (s *Search) Keys() *Keyring { return s.keys }

// Query is one search, already checked against the contract's schema.
type Query struct {
	VerticalID, JobTypeID string
	// Postcode and DestinationPostcode are as sent ("113 45" or "11345");
	// DestinationPostcode is empty when the job has no destination.
	Postcode, DestinationPostcode string
	PreferredTimeText, Urgency    string
	// Details is the request's open details object (may be nil).
	Details map[string]any
	// Locale decides the language of labels ("sv-SE" when empty).
	Locale string
}

// Option is one bookable option.
type Option struct {
	// ID is the signed booking_option_id.
	ID        string
	ExpiresAt time.Time
	Provider  bokat.Provider
	Service   catalog.Service
	Slot      schedule.Interval
	SlotLabel string
	Price     Price
	Claims    OptionClaims
}

// Fallback reasons: why a search has no direct option.
const (
	ReasonNotDirectlyBookable = "job_type_not_directly_bookable"
	ReasonQuantityOutOfRange  = "quantity_outside_fixed_price_range"
	ReasonNoCoverage          = "no_provider_covers_postcode"
	ReasonNoFreeSlot          = "no_free_slot_in_requested_window"
)

// Result is the outcome of a search: options, or none with the reason.
type Result struct {
	Options []Option
	// Window is the requested time window read from the timing texts.
	Window schedule.Window
	// FallbackReason is set when Options is empty.
	FallbackReason string
	// SafeNextStep tells the assistant what it may say and do next.
	SafeNextStep string
}

// CheckJobType answers unsupported_vertical (422) for a vertical that is not
// bookable, with supported_vertical_ids and, for the verticals that are not
// bookable yet, their safe next step; and unsupported_job_type (422) for a
// job type the vertical does not have, with accepted_job_type_ids.
func (s *Search) CheckJobType(verticalID, jobTypeID string) error {
	supported := s.cat.VerticalIDs()
	if _, ok := s.cat.Vertical(verticalID); !ok {
		e := &bokat.Error{
			Code:   bokat.CodeUnsupportedVertical,
			Detail: fmt.Sprintf("The vertical is not supported. Supported verticals: %s.", strings.Join(supported, ", ")),
			Extra:  map[string]any{"supported_vertical_ids": supported},
			SafeNextStep: "Use one of supported_vertical_ids. If the user's need fits none of them, tell the user this service " +
				"cannot book it; do not submit it to search or request creation.",
		}
		if u, ok := s.cat.Unavailable(verticalID); ok {
			e.Detail = fmt.Sprintf("%s (%s) cannot be booked through this service yet (%s).", u.LabelEN, u.ID, u.Reason)
			e.SafeNextStep = u.SafeNextStep
			e.Extra["vertical_status"] = u.AgentStatus
		}
		return e
	}
	if _, ok := s.cat.JobType(verticalID, jobTypeID); !ok {
		accepted := s.cat.JobTypeIDs(verticalID)
		return &bokat.Error{
			Code:   bokat.CodeUnsupportedJobType,
			Detail: fmt.Sprintf("The job type is not one of the %s job types; accepted_job_type_ids lists them.", verticalID),
			Extra:  map[string]any{"accepted_job_type_ids": accepted, "supported_vertical_ids": supported},
			SafeNextStep: "Pick the one job_type_id of accepted_job_type_ids that matches the user's need " +
				"(GET /v1/capabilities describes each) and search again.",
		}
	}
	return nil
}

// Search finds the options of q. Every error is a *bokat.Error: 422 for an
// unsupported vertical or job type, 400 validation_failed for details that
// carry contact data or an unusable quantity, 503 when option signing is not
// configured, or a store failure.
func (s *Search) Search(ctx context.Context, q Query) (Result, error) {
	if err := s.CheckJobType(q.VerticalID, q.JobTypeID); err != nil {
		return Result{}, err
	}
	if err := checkDetails(q.Details); err != nil {
		return Result{}, err
	}
	if s.keys == nil {
		return Result{}, SigningNotConfigured()
	}
	locale := q.Locale
	if locale == "" {
		locale = "sv-SE"
	}
	now := s.now()
	res := Result{Window: s.timing.Parse(q.PreferredTimeText, q.Urgency, locale, now)}
	fallback := func(reason, step string) (Result, error) {
		res.FallbackReason, res.SafeNextStep = reason, step
		return res, nil
	}

	jt, _ := s.cat.JobType(q.VerticalID, q.JobTypeID)
	if jt.Seed == nil {
		return fallback(ReasonNotDirectlyBookable, "This job type has no fixed-price direct booking, so no provider, time or price "+
			"can be offered. Tell the user so, and offer a provider follow-up request (POST /v1/requests) once they consent "+
			"to sharing their details; it is not a booking and confirms no provider, time or price.")
	}
	svc, ok := s.cat.Service(jt.Seed.ServiceID)
	if !ok {
		return Result{}, fmt.Errorf("booking: catalog has no service %s for job type %s", jt.Seed.ServiceID, jt.ID)
	}
	quantity, err := svc.Quantity(q.Details)
	switch {
	case errors.Is(err, catalog.ErrQuantityOutOfRange):
		return fallback(ReasonQuantityOutOfRange, fmt.Sprintf("The job's size (details.%s) is outside what a fixed price covers "+
			"(%g to %g %s), so it needs a quote. Tell the user so, and offer a provider follow-up request (POST /v1/requests) "+
			"once they consent; it is not a booking.", svc.QuantityDetail, svc.MinQuantity, svc.MaxQuantity, svc.UnitEN))
	case err != nil:
		return Result{}, &bokat.Error{Code: bokat.CodeValidationFailed, Detail: "The job's quantity cannot be read from details.",
			Issues: []string{fmt.Sprintf("details.%s: must be a positive number", svc.QuantityDetail)}}
	}

	postcode, okPC := bokat.ParsePostcode(q.Postcode)
	destination, okDest := 0, true
	if q.DestinationPostcode != "" {
		destination, okDest = bokat.ParsePostcode(q.DestinationPostcode)
	}

	type plan struct {
		p        *providerEntry
		offer    bokat.ProviderService
		duration time.Duration
		from, to time.Time
		earliest time.Time
	}
	var (
		candidates int
		plans      []plan
		busy       []bokat.CalendarEntry
	)
	// Plan on the cached supply, and read the calendar together with the
	// supply revision; when the revision has moved on, plan again on the
	// fresh supply. A search thus always answers from committed supply.
	snap, err := s.cachedSupply(ctx)
	if err != nil {
		return Result{}, err
	}
	for attempt := 0; ; attempt++ {
		candidates, plans = 0, plans[:0]
		ids := make([]string, 0, 4)
		var busyFrom, busyTo time.Time
		if okPC && okDest {
			for _, p := range snap.byService[svc.ID] {
				if !p.supply.Covers(postcode) || (q.DestinationPostcode != "" && !p.supply.Covers(destination)) {
					continue
				}
				candidates++
				offer, _ := p.supply.Service(svc.ID)
				pl := plan{p: p, offer: offer, duration: JobDuration(svc, offer, quantity),
					earliest: now.Add(time.Duration(p.supply.MinNoticeMinutes) * time.Minute)}
				pl.from = res.Window.Start
				pl.to = minTime(res.Window.End, now.In(schedule.Stockholm()).AddDate(0, 0, p.supply.HorizonDays))
				if !pl.from.Before(pl.to) {
					continue
				}
				plans = append(plans, pl)
				ids = append(ids, p.supply.ID)
				if busyFrom.IsZero() || pl.from.Before(busyFrom) {
					busyFrom = pl.from
				}
				if pl.to.After(busyTo) {
					busyTo = pl.to
				}
			}
		}
		var rev int64
		if len(ids) > 0 {
			busy, rev, err = s.store.BusyEntriesWithRevision(ctx, ids, busyFrom, busyTo)
		} else {
			busy = nil
			rev, err = s.store.SupplyRevision(ctx)
		}
		if err != nil {
			return Result{}, err
		}
		if rev <= snap.revision || attempt == 2 {
			break
		}
		if snap, err = s.reloadSupply(ctx, rev); err != nil {
			return Result{}, err
		}
	}
	if candidates == 0 {
		return fallback(ReasonNoCoverage, "No provider offers this job at a fixed price for the postcode(s) given, so no direct "+
			"booking is possible. Do not name a provider, time or price. Offer a provider follow-up request (POST /v1/requests) "+
			"once the user consents; it is not a booking.")
	}
	busyOf := map[string][]schedule.Interval{}
	for _, e := range busy {
		busyOf[e.ProviderID] = append(busyOf[e.ProviderID], schedule.Interval{Start: e.Start, End: e.End})
	}

	type found struct {
		pl   *plan
		slot schedule.Interval
	}
	var slots []found
	for i := range plans {
		pl := &plans[i]
		for _, iv := range schedule.Slots(schedule.SlotParams{
			Hours: pl.p.hours, From: pl.from, To: pl.to, Duration: pl.duration, Step: s.step,
			Busy: busyOf[pl.p.supply.ID], Earliest: pl.earliest, Daily: res.Window.Daily, Limit: s.maxPerProvider,
		}) {
			slots = append(slots, found{pl, iv})
		}
	}
	if len(slots) == 0 {
		return fallback(ReasonNoFreeSlot, "No provider has a free slot in the requested time window, so no direct booking is "+
			"possible there. You may ask the user for another time and search again, or offer a provider follow-up request "+
			"(POST /v1/requests) once they consent; it is not a booking.")
	}
	slices.SortFunc(slots, func(a, b found) int {
		return cmp.Or(a.slot.Start.Compare(b.slot.Start), strings.Compare(a.pl.p.supply.ID, b.pl.p.supply.ID))
	})
	if len(slots) > s.maxOptions {
		slots = slots[:s.maxOptions]
	}

	expires := now.Add(s.ttl)
	postcodeKey, destKey := bokat.PostcodeKey(postcode), ""
	if q.DestinationPostcode != "" {
		destKey = bokat.PostcodeKey(destination)
	}
	res.Options = make([]Option, 0, len(slots))
	for _, f := range slots {
		price := PriceOf(svc, f.pl.offer, quantity)
		c := OptionClaims{
			IssuedAt: now, ExpiresAt: expires,
			ProviderID: f.pl.p.supply.ID, ServiceID: svc.ID, VerticalID: q.VerticalID, JobTypeID: q.JobTypeID,
			SlotStart: f.slot.Start, SlotEnd: f.slot.End,
			AmountSEK: price.AmountSEK, PricingModel: string(price.PricingModel), PriceType: string(price.PriceType),
			UnitPriceSEK: price.UnitPriceSEK, Quantity: price.Quantity, Unit: price.Unit, MinimumChargeSEK: price.MinimumChargeSEK,
			TermsVersion: svc.Terms.Version, Postcode: postcodeKey, DestinationPostcode: destKey, Locale: locale,
		}
		id, err := s.keys.Sign(c)
		if err != nil {
			return Result{}, err
		}
		res.Options = append(res.Options, Option{
			ID: id, ExpiresAt: expires, Provider: f.pl.p.supply.Provider, Service: svc, Slot: f.slot,
			SlotLabel: schedule.SlotLabel(f.slot, locale), Price: price, Claims: c,
		})
	}
	res.SafeNextStep = "Present these options to the user as returned (provider, time, price, scope and terms) and let the " +
		"user choose one explicitly. Nothing is booked yet: only a confirmation (POST /v1/bookings) of the chosen " +
		"booking_option_id before its expires_at, with the user's consent, customer details and acceptance of that " +
		"option's terms.version, creates a booking. Do not claim a booking, a selected provider or a booked price before that."
	return res, nil
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
