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
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"bokat"
	"bokat/internal/catalog"
	"bokat/internal/schedule"
)

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
	// WaitReloadProviders is the largest supply (active providers) whose
	// change a search waits to see: a larger one is reloaded beside the
	// index in use, which searches keep using until the new one replaces
	// it (default DefaultWaitReloadProviders; negative: never wait).
	WaitReloadProviders int
	// Log receives the reloads beside the index in use: their start, end
	// and failure (default: discarded).
	Log *slog.Logger
	// Reloaded, when set, is told of every reload beside the index in use
	// once it ended: how long it took, and nil or why it failed.
	Reloaded func(took time.Duration, err error)
}

// DefaultWaitReloadProviders is the default of Config.WaitReloadProviders:
// reading a supply this size takes a fraction of a second.
const DefaultWaitReloadProviders = 5000

// Search finds booking options. It is safe for concurrent use.
type Search struct {
	cat *catalog.Catalog
	// services are the catalog's services, each in one place that every
	// option of it points to.
	services       map[string]*catalog.Service
	store          SupplyStore
	keys           *Keyring
	ttl            time.Duration
	now            func() time.Time
	maxPerProvider int
	maxOptions     int
	step           time.Duration
	// timing reads timing texts, remembering the phrases of recent ones.
	timing *schedule.TimingReader

	// idx is the availability index (supply and busy intervals) at some
	// revisions; it is replaced when the store's revisions move on, by one
	// refresh at a time (loadMu). See index.go.
	idx    atomic.Pointer[availIndex]
	loadMu sync.Mutex
	// waitReload is Config.WaitReloadProviders; reloading is set while a
	// reload beside the index in use runs, reloads counts them.
	waitReload int
	reloading  atomic.Bool
	reloads    sync.WaitGroup
	log        *slog.Logger
	reloaded   func(time.Duration, error)
	// templates memoises day templates (see dayTemplate).
	tmplMu    sync.Mutex
	templates map[templateKey]*dayTemplate
}

// NewSearch returns a Search for the configuration.
func NewSearch(cfg Config) (*Search, error) {
	if cfg.Catalog == nil || cfg.Store == nil {
		return nil, errors.New("booking: Catalog and Store are required")
	}
	s := &Search{
		cat: cfg.Catalog, store: cfg.Store, keys: cfg.Keys, ttl: cfg.OptionTTL, now: cfg.Now,
		maxPerProvider: cfg.MaxPerProvider, maxOptions: cfg.MaxOptions, step: cfg.SlotStep, waitReload: cfg.WaitReloadProviders,
		timing: schedule.NewTimingReader(0), templates: map[templateKey]*dayTemplate{}, log: cfg.Log, reloaded: cfg.Reloaded,
		services: make(map[string]*catalog.Service, len(cfg.Catalog.Services)),
	}
	for id, svc := range cfg.Catalog.Services {
		s.services[id] = &svc
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
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.waitReload == 0 {
		s.waitReload = DefaultWaitReloadProviders
	}
	return s, nil
}

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
	// Mode is the realm searched: only its providers are candidates
	// (empty: live; an anonymous search is live).
	Mode bokat.Mode
}

// Option is one bookable option.
type Option struct {
	// ID is the signed booking_option_id.
	ID        string
	ExpiresAt time.Time
	Provider  bokat.Provider
	// Service is the catalog service; the options of one search share it.
	Service   *catalog.Service
	Slot      schedule.Interval
	SlotLabel string
	Price     Price
	Claims    OptionClaims
	// TaxReduction is the option's preliminary ROT/RUT estimate, or nil.
	TaxReduction *bokat.TaxReductionEstimate
}

// Fallback reasons: why a search has no direct option.
const (
	ReasonNotDirectlyBookable = "job_type_not_directly_bookable"
	ReasonQuantityOutOfRange  = "quantity_outside_fixed_price_range"
	ReasonNoCoverage          = "no_provider_covers_postcode"
	ReasonNoFreeSlot          = "no_free_slot_in_requested_window"
	// ReasonBeyondHorizon: the window starts after the last time every
	// candidate takes bookings for; the providers are not busy, they do not
	// book that far ahead yet.
	ReasonBeyondHorizon = "requested_window_beyond_booking_horizon"
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
	// NextAvailable, when the window has no free slot, lists the earliest
	// free times after it (at most three, distinct starts): no provider, no
	// option, nothing held.
	NextAvailable []NextSlot
	// LastBookableDate, with ReasonBeyondHorizon, is the last Stockholm
	// date any candidate takes bookings for (the date its horizon ends).
	LastBookableDate schedule.Date
}

// NextSlot is a free time after an empty window.
type NextSlot struct {
	Slot  schedule.Interval
	Label string
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
	if err := s.checkQuery(q); err != nil {
		return Result{}, err
	}
	locale := q.Locale
	if locale == "" {
		locale = "sv-SE"
	}
	now := bokat.RealmNow(ctx, q.Mode, s.now())
	res := Result{Window: s.timing.Parse(q.PreferredTimeText, q.Urgency, locale, now)}
	job, fb, err := s.jobOf(q, now)
	if err != nil {
		return Result{}, err
	}
	if fb.reason != "" {
		return fb.of(res), nil
	}

	res, err = s.walkJob(ctx, res, job, q, locale, "")
	if err != nil || len(res.Options) == 0 {
		return res, err
	}
	res.SafeNextStep = "Present these options to the user as returned (provider, time, price, scope and terms) and let the " +
		"user choose one explicitly. Nothing is booked yet: only a confirmation (POST /v1/bookings) of the chosen " +
		"booking_option_id before its expires_at, with the user's consent, customer details and acceptance of that " +
		"option's terms.version, creates a booking. Do not claim a booking, a selected provider or a booked price before that."
	res.SafeNextStep += TaxEstimateNextStep(optionsHaveEstimate(res.Options))
	return res, nil
}

// TimingQuery is the timing of a search for an existing booking's job.
type TimingQuery struct {
	PreferredTimeText, Urgency string
	// Locale decides the language of labels (the booking's when empty).
	Locale string
}

// ReasonBookedProviderUnavailable: the booked provider no longer offers the
// booking's job at its postcode(s), so it cannot be moved.
const ReasonBookedProviderUnavailable = "booked_provider_not_bookable"

var bookedProviderUnavailable = fallback{ReasonBookedProviderUnavailable, "The booked provider no longer offers this " +
	"job here, so the booking cannot be moved to another time; it is unchanged. Tell the user so. To change provider, " +
	"the user may cancel it (after confirming) and book a new option from a fresh search."}

// OptionsFor finds the options of moving booking b to another time: the
// same job (service, quantity, postcodes) with b's own provider only, up
// to MaxOptions of them, in the window of t; what reschedule accepts. It
// looks the booking up by nothing: the caller has checked its owner and
// that it is active. It searches b's realm at the clock ctx carries for it
// (bokat.RealmNow: a test booking's owner's). Slots that overlap b's own
// time are not offered. The errors are Search's.
func (s *Search) OptionsFor(ctx context.Context, b bokat.Booking, t TimingQuery) (Result, error) {
	if s.keys == nil {
		return Result{}, SigningNotConfigured()
	}
	locale := cmp.Or(t.Locale, b.Locale, "sv-SE")
	now := bokat.RealmNow(ctx, b.Mode, s.now())
	res := Result{Window: s.timing.Parse(t.PreferredTimeText, t.Urgency, locale, now)}
	svc, ok := s.services[b.ServiceID]
	if !ok {
		return bookedProviderUnavailable.of(res), nil
	}
	job := jobSpec{svc: svc, quantity: b.Quantity, now: now}
	if !svc.PricingModel.PerUnit() || job.quantity <= 0 {
		job.quantity = 1
	}
	q := Query{VerticalID: b.VerticalID, JobTypeID: b.JobTypeID, Postcode: b.Postcode,
		DestinationPostcode: b.DestinationPostcode, Locale: locale, Mode: b.Mode}
	res, err := s.walkJob(ctx, res, job, q, locale, b.ProviderID)
	if err != nil {
		return Result{}, err
	}
	if len(res.Options) == 0 {
		res.SafeNextStep = "The booking " + b.ID + " is unchanged. " + res.SafeNextStep
		return res, nil
	}
	res.SafeNextStep = "These are times of the booked provider for the same job; nothing is changed or held yet. Present " +
		"them as returned (time, price, terms) and let the user choose one explicitly. Then move the booking with " +
		"POST /v1/bookings/" + b.ID + "/reschedule (reschedule_booking) with that booking_option_id before its expires_at, " +
		"the user's confirmation and acceptance of that option's terms.version. Until then the booking keeps its time."
	res.SafeNextStep += TaxEstimateNextStep(optionsHaveEstimate(res.Options))
	return res, nil
}

// walkJob finds the options of job in res's window, with only the provider
// of that id when only is set (then up to MaxOptions of it), or the
// fallback when there are none; it leaves the safe next step of options to
// the caller.
func (s *Search) walkJob(ctx context.Context, res Result, job jobSpec, q Query, locale, only string) (Result, error) {
	now := job.now
	// One index at the store's current revisions: one supply revision, one
	// calendar revision, for the whole search. The index is kept on the
	// server's clock: a test clock ahead of it (which only moves forward)
	// finds every entry it needs in it, and never makes the live realm's
	// index drop entries.
	ix, err := s.currentIndex(ctx, s.now())
	if err != nil {
		return Result{}, err
	}
	where := parseWhere(q)
	var cands *candidateList
	if where.ok {
		cands = ix.snap.candidates(candidateKey{service: job.svc.ID, postcode: where.postcode, destination: where.destination,
			period: rotationPeriod(now), mode: q.Mode.Or()})
	}
	maxPer := s.maxPerProvider
	if only != "" {
		cands, maxPer = cands.only(only), s.maxOptions
		if cands == nil {
			return bookedProviderUnavailable.of(res), nil
		}
	}
	if cands == nil || len(cands.providers) == 0 {
		return noCoverage.of(res), nil
	}
	walk := newSearchWalk()
	defer walk.release()
	walk.begin(cands)
	walk.s, walk.ix, walk.job, walk.svcNum = s, ix, job, ix.snap.number(job.svc.ID)
	walk.window, walk.days = res.Window, appendWindowDays(walk.days[:0], res.Window, now)
	picks := rankOptions(walk, len(walk.days), s.maxOptions, maxPer, s.maxOptions)
	if len(picks) == 0 {
		if last, beyond := walk.beyondHorizons(); beyond {
			return beyondHorizon(res, last), nil
		}
		return noFreeSlot(res, walk.nextAvailable(), locale), nil
	}
	if res.Options, err = s.issue(walk, picks, q, where, locale); err != nil {
		return Result{}, err
	}
	return res, nil
}

// checkQuery refuses a search that cannot run: an unsupported vertical or
// job type (CheckJobType), details that carry contact data, or no option
// signing.
func (s *Search) checkQuery(q Query) error {
	if err := s.CheckJobType(q.VerticalID, q.JobTypeID); err != nil {
		return err
	}
	if err := checkDetails(q.Details); err != nil {
		return err
	}
	if s.keys == nil {
		return SigningNotConfigured()
	}
	return nil
}

// fallback is why a search offers no option, and what the caller should
// do instead.
type fallback struct{ reason, step string }

// of returns res with the fallback's reason and safe next step.
func (f fallback) of(res Result) Result {
	res.FallbackReason, res.SafeNextStep = f.reason, f.step
	return res
}

var (
	notDirectlyBookable = fallback{ReasonNotDirectlyBookable, "This job type has no fixed-price direct booking, so no " +
		"provider, time or price can be offered. Tell the user so, and offer a provider follow-up request (POST /v1/requests) " +
		"once they consent to sharing their details; it is not a booking and confirms no provider, time or price."}
	noCoverage = fallback{ReasonNoCoverage, "No provider offers this job at a fixed price for the postcode(s) given, so no " +
		"direct booking is possible. Do not name a provider, time or price. Offer a provider follow-up request " +
		"(POST /v1/requests) once the user consents; it is not a booking."}
)

// jobOf returns the job of q as search prices it: the job type's seeded
// service and the quantity read from the details. A job that cannot be
// booked directly (no seeded service, a quantity outside the fixed price)
// is a fallback; unreadable details are 400 validation_failed.
func (s *Search) jobOf(q Query, now time.Time) (jobSpec, fallback, error) {
	jt, _ := s.cat.JobType(q.VerticalID, q.JobTypeID)
	if jt.Seed == nil {
		return jobSpec{}, notDirectlyBookable, nil
	}
	svc, ok := s.services[jt.Seed.ServiceID]
	if !ok {
		return jobSpec{}, fallback{}, fmt.Errorf("booking: catalog has no service %s for job type %s", jt.Seed.ServiceID, jt.ID)
	}
	quantity, err := svc.Quantity(q.Details)
	switch {
	case errors.Is(err, catalog.ErrQuantityOutOfRange):
		return jobSpec{}, fallback{ReasonQuantityOutOfRange, fmt.Sprintf("The job's size (details.%s) is outside what a "+
			"fixed price covers (%g to %g %s), so it needs a quote. Tell the user so, and offer a provider follow-up request "+
			"(POST /v1/requests) once they consent; it is not a booking.", svc.QuantityDetail, svc.MinQuantity, svc.MaxQuantity,
			svc.UnitEN)}, nil
	case err != nil:
		return jobSpec{}, fallback{}, &bokat.Error{Code: bokat.CodeValidationFailed, Detail: "The job's quantity cannot be read from details.",
			Issues: []string{fmt.Sprintf("details.%s: must be a positive number", svc.QuantityDetail)}}
	}
	return jobSpec{svc: svc, quantity: quantity, now: now}, fallback{}, nil
}

// searchWhere is where a search's job is: its postcode and its
// destination's (-1 without one), and whether both could be read.
type searchWhere struct {
	postcode, destination int
	ok                    bool
}

func parseWhere(q Query) searchWhere {
	postcode, okPC := bokat.ParsePostcode(q.Postcode)
	destination, okDest := -1, true
	if q.DestinationPostcode != "" {
		destination, okDest = bokat.ParsePostcode(q.DestinationPostcode)
	}
	return searchWhere{postcode: postcode, destination: destination, ok: okPC && okDest}
}

// noFreeSlot is the fallback of a window without a free slot, listing the
// free times next after it.
func noFreeSlot(res Result, next []schedule.Interval, locale string) Result {
	for _, iv := range next {
		res.NextAvailable = append(res.NextAvailable, NextSlot{Slot: iv, Label: schedule.SlotLabel(iv, locale)})
	}
	if len(res.NextAvailable) > 0 {
		return fallback{ReasonNoFreeSlot, "No provider has a free slot in the requested time window, so no direct booking " +
			"is possible there. next_available lists the earliest free times after it: ask the user whether one of them " +
			"suits, and if so search again with that time as timing.preferred_time_text; nothing is held or booked, and no " +
			"provider or price is chosen. Otherwise offer a provider follow-up request (POST /v1/requests) once they " +
			"consent; it is not a booking."}.of(res)
	}
	return fallback{ReasonNoFreeSlot, "No provider has a free slot in the requested time window, so no direct booking is " +
		"possible there. You may ask the user for another time and search again, or offer a provider follow-up request " +
		"(POST /v1/requests) once they consent; it is not a booking."}.of(res)
}

// beyondHorizon is the fallback of a window that starts after every
// candidate's booking horizon, whose last day is last.
func beyondHorizon(res Result, last schedule.Date) Result {
	res.LastBookableDate = last
	return fallback{ReasonBeyondHorizon, "The requested time is further ahead than the providers take bookings for yet " +
		"(last_bookable_date is the last day they book), so no direct booking is possible for it today; they are not " +
		"fully booked. Tell the user so: they may choose a time up to last_bookable_date and search again with it, or " +
		"search again closer to the date. Otherwise offer a provider follow-up request (POST /v1/requests) once they " +
		"consent; it is not a booking."}.of(res)
}

// issue returns the signed options of the ranked picks of walk.
func (s *Search) issue(walk *searchWalk, picks []rankPick, q Query, where searchWhere, locale string) ([]Option, error) {
	svc, quantity, now := walk.job.svc, walk.job.quantity, walk.job.now
	expires := now.Add(s.ttl)
	postcodeKey, destKey := bokat.PostcodeKey(where.postcode), ""
	if where.destination >= 0 {
		destKey = bokat.PostcodeKey(where.destination)
	}
	options := make([]Option, 0, len(picks))
	for _, pk := range picks {
		pl, slot := &walk.at(pk.cand).plan, pk.slot.interval()
		price := PriceOf(*svc, pl.offer, quantity)
		c := OptionClaims{
			IssuedAt: now, ExpiresAt: expires,
			ProviderID: pl.p.provider.ID, ServiceID: svc.ID, VerticalID: q.VerticalID, JobTypeID: q.JobTypeID,
			SlotStart: slot.Start, SlotEnd: slot.End,
			AmountSEK: price.AmountSEK, PricingModel: string(price.PricingModel), PriceType: string(price.PriceType),
			UnitPriceSEK: price.UnitPriceSEK, Quantity: price.Quantity, Unit: price.Unit, MinimumChargeSEK: price.MinimumChargeSEK,
			TermsVersion: svc.Terms.Version, Postcode: postcodeKey, DestinationPostcode: destKey, Locale: locale,
			Labour: price.Labour,
		}
		estimate := s.stampTaxEstimate(&c)
		id, err := s.keys.Sign(c)
		if err != nil {
			return nil, err
		}
		options = append(options, Option{
			ID: id, ExpiresAt: expires, Provider: pl.p.provider, Service: svc, Slot: slot,
			SlotLabel: schedule.SlotLabel(slot, locale), Price: price, Claims: c, TaxReduction: estimate,
		})
	}
	return options, nil
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
