package provider

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"bokat"
	"bokat/internal/catalog"
	"bokat/internal/idem"
)

// The provider API's entrance to the use cases: a provider token acts as a
// user of its provider (its id is the actor of the audit rows), and each
// write runs as a keyed write: the one transaction its use case opens is
// guarded by the idempotency key, so a replay runs nothing and returns the
// stored outcome.

// IdempotencyTTL is how long the provider API keeps a write's key.
const IdempotencyTTL = 24 * time.Hour

// KeyedStore is the database as the provider API uses it.
type KeyedStore interface {
	SupplyStore
	// InIdempotentTx runs fn in one write transaction guarded by the key
	// (see package idem).
	InIdempotentTx(ctx context.Context, k idem.Key, fingerprint string, now, expiresAt time.Time,
		fn func(SupplyTx) (idem.Outcome, error)) (idem.Outcome, bool, error)
}

// API runs the provider use cases for provider tokens.
type API struct {
	store    Store
	supply   KeyedStore
	cat      *catalog.Catalog
	now      func() time.Time
	log      *slog.Logger
	Service  *Service
	Supplies *Supply
	// Calendars, when set, keeps the provider's calendar subscriptions;
	// nil serves none.
	Calendars *Calendars
}

// NewAPI returns the provider API's use cases: store for the bookings and
// accounts, supply for the supply and keyed writes.
func NewAPI(store Store, supply KeyedStore, cat *catalog.Catalog, now func() time.Time, log *slog.Logger) *API {
	return &API{store: store, supply: supply, cat: cat, now: now, log: log,
		Service: NewService(store, now, log), Supplies: NewSupply(supply, cat, now, log)}
}

// TokenUser is the user a provider token acts as: its provider, with the
// token's id as the actor of every audit row.
func TokenUser(p bokat.Principal) User {
	return User{ID: p.ClientID, ProviderID: p.ProviderID, Role: Staff}
}

// Render builds the outcome of a keyed write inside its transaction, after
// the use case wrote.
type Render func(ctx context.Context, tx SupplyTx) (idem.Outcome, error)

// Keyed is one keyed write: the use cases bound to it, and its outcome
// once the write ran.
type Keyed struct {
	Service *Service
	Supply  *Supply
	// Calendars is nil when the API keeps no calendar subscriptions.
	Calendars *Calendars
	Outcome   idem.Outcome
	Replay    bool
	ran       bool
}

// Keyed returns the use cases of one keyed write: the transaction the one
// use case called opens is guarded by k and stores render's outcome with
// its effect. A replay skips the use case and returns the stored outcome.
func (a *API) Keyed(k idem.Key, fingerprint string, render Render) *Keyed {
	kw := &Keyed{}
	run := &keyedRun{store: a.supply, key: k, fingerprint: fingerprint, now: a.now, render: render, kw: kw}
	kw.Service = NewService(keyedBookingStore{Store: a.store, run: run}, a.now, a.log)
	kw.Supply = NewSupply(keyedSupplyStore{SupplyStore: a.supply, run: run}, a.cat, a.now, a.log)
	if a.Calendars != nil {
		kw.Calendars = a.Calendars.keyed(func(ctx context.Context, fn func(CalendarTx) error) error {
			return run.inTx(ctx, func(tx SupplyTx) error { return fn(tx) })
		})
	}
	return kw
}

// Result returns the write's outcome and whether it is a replay; a use
// case that failed before its transaction leaves an error.
func (k *Keyed) Result(err error) (idem.Outcome, bool, error) {
	if err != nil {
		return idem.Outcome{}, false, err
	}
	if !k.ran {
		return idem.Outcome{}, false, errors.New("provider: the keyed write opened no transaction")
	}
	return k.Outcome, k.Replay, nil
}

type keyedRun struct {
	store       KeyedStore
	key         idem.Key
	fingerprint string
	now         func() time.Time
	render      Render
	kw          *Keyed
}

func (r *keyedRun) inTx(ctx context.Context, fn func(SupplyTx) error) error {
	now := r.now()
	out, replay, err := r.store.InIdempotentTx(ctx, r.key, r.fingerprint, now, now.Add(IdempotencyTTL),
		func(tx SupplyTx) (idem.Outcome, error) {
			if err := fn(tx); err != nil {
				return idem.Outcome{}, err
			}
			return r.render(ctx, tx)
		})
	if err != nil {
		return err
	}
	r.kw.Outcome, r.kw.Replay, r.kw.ran = out, replay, true
	return nil
}

type keyedSupplyStore struct {
	SupplyStore
	run *keyedRun
}

func (s keyedSupplyStore) InTx(ctx context.Context, fn func(SupplyTx) error) error {
	return s.run.inTx(ctx, fn)
}

type keyedBookingStore struct {
	Store
	run *keyedRun
}

func (s keyedBookingStore) InTx(ctx context.Context, fn func(Tx) error) error {
	return s.run.inTx(ctx, func(tx SupplyTx) error { return fn(tx) })
}
