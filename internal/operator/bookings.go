package operator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"bokat"
	"bokat/internal/booking"
	"bokat/internal/idem"
	"bokat/internal/supply"
	"bokat/internal/web"
)

// Booking is a booking as the console shows it.
type Booking struct {
	bokat.Booking
	// AcknowledgedAt is zero until a provider user acknowledged it.
	AcknowledgedAt time.Time
	AcknowledgedBy string
}

// BookingFilter selects bookings; every set field must match.
type BookingFilter struct {
	ID         string
	ProviderID string
	// Status is "confirmed", "cancelled" or "" for both.
	Status string
	// From and To bound the slot's start: From <= start < To (zero: open).
	From, To time.Time
	// Email is a customer's normalised address, matched by its blind index.
	Email string
	Limit int
}

// SearchLimit is the most bookings one search shows.
const SearchLimit = 100

// FindInput is a booking search as the console's form sends it.
type FindInput struct {
	ID, ProviderID, Status, From, To, Email string
}

// Empty reports whether the search names nothing.
func (in FindInput) Empty() bool { return in == FindInput{} }

// FindBookings finds bookings by id, provider, slot dates (Stockholm,
// inclusive), status and customer e-mail. A bad field fails with
// ErrInvalid naming it.
func (s *Service) FindBookings(ctx context.Context, in FindInput) ([]Booking, error) {
	f := BookingFilter{ID: strings.TrimSpace(in.ID), ProviderID: strings.TrimSpace(in.ProviderID), Limit: SearchLimit}
	switch in.Status {
	case "", bokat.BookingConfirmed, bokat.BookingCancelled:
		f.Status = in.Status
	default:
		return nil, fmt.Errorf("%w: status", ErrInvalid)
	}
	for _, d := range []struct {
		text string
		at   *time.Time
		next bool
	}{{in.From, &f.From, false}, {in.To, &f.To, true}} {
		if strings.TrimSpace(d.text) == "" {
			continue
		}
		day, err := supply.ParseDate(strings.TrimSpace(d.text))
		if err != nil {
			return nil, fmt.Errorf("%w: date", ErrInvalid)
		}
		if d.next {
			day = day.AddDays(1)
		}
		*d.at = day.At(0)
	}
	if !f.From.IsZero() && !f.To.IsZero() && !f.From.Before(f.To) {
		return nil, fmt.Errorf("%w: date", ErrInvalid)
	}
	if strings.TrimSpace(in.Email) != "" {
		addr, ok := web.NormalizeEmail(in.Email)
		if !ok {
			return nil, fmt.Errorf("%w: email", ErrInvalid)
		}
		f.Email = addr
	}
	return s.store.FindBookings(ctx, f)
}

// Event is a booking's outbox event.
type Event struct {
	ID, Type   string
	OccurredAt time.Time
	// Reason is the event data's reason, if any.
	Reason    string
	RelayedAt time.Time
}

// Message is a notification job of a booking: a message to the customer
// or the provider.
type Message struct {
	ID, EventType, Recipient, Status string
	Attempts                         int
	LastError                        string
	CreatedAt, UpdatedAt             time.Time
}

// Delivery is a webhook delivery of one of a booking's events.
type Delivery struct {
	ID, EndpointID, EventType, Status string
	Attempts                          int
	LastStatusCode                    int
	LastError                         string
	UpdatedAt                         time.Time
}

// Story is what happened to a booking.
type Story struct {
	Events     []Event
	Messages   []Message
	Deliveries []Delivery
}

// BookingStory is a booking with its story and the operator actions on it.
type BookingStory struct {
	Booking Booking
	Story   Story
	Audit   []AuditEntry
}

// Story returns a booking's whole story, or bokat.ErrNotFound.
func (s *Service) Story(ctx context.Context, id string) (BookingStory, error) {
	b, err := s.store.OperatorBooking(ctx, id)
	if err != nil {
		return BookingStory{}, err
	}
	st, err := s.store.BookingStory(ctx, id)
	if err != nil {
		return BookingStory{}, err
	}
	a, err := s.store.ConsoleAudit(ctx, "booking", id, 50)
	if err != nil {
		return BookingStory{}, err
	}
	return BookingStory{Booking: b, Story: st, Audit: a}, nil
}

// On whose behalf an operator changes a booking.
const (
	ForCustomer = "customer"
	ForProvider = "provider"
)

// CustomerCancelReasons are the contract's cancel reasons, offered when the
// operator cancels for the customer.
var CustomerCancelReasons = []string{"customer_changed_mind", "timing_no_longer_works", "booked_elsewhere",
	"service_no_longer_needed", "other"}

// CancelInput is an operator's cancellation of a booking.
type CancelInput struct {
	// For is ForCustomer or ForProvider.
	For string
	// Reason is one of CustomerCancelReasons for the customer; for the
	// provider the booking carries the contract's "other", as when the
	// provider cancels.
	Reason string
	// Note says why, for the audit log (2 to NoteMax characters, no
	// contact data).
	Note string
}

// Cancel cancels a confirmed booking on someone's behalf through the
// booking lifecycle, with its audit row, in one transaction: for the
// customer as the API's cancel does (booking.CancelInTx: the
// booking.cancelled event, the customer's and provider's messages), for
// the provider as the provider's own cancel does
// (booking.CancelByProviderInTx: the event says the provider cancelled).
// A bad input fails with ErrInvalid, a cancelled booking with
// ErrNotConfirmed, an unknown one with bokat.ErrNotFound.
func (s *Service) Cancel(ctx context.Context, op Operator, id string, in CancelInput) error {
	note, err := cleanNote(in.Note, 2, NoteMax)
	if err != nil {
		return err
	}
	switch {
	case in.For == ForCustomer && slices.Contains(CustomerCancelReasons, in.Reason):
	case in.For == ForProvider:
		in.Reason = ""
	default:
		return fmt.Errorf("%w: on whose behalf and why", ErrInvalid)
	}
	now := s.now()
	err = s.store.InTx(ctx, func(tx Tx) error {
		b, err := tx.OperatorBookingForUpdate(ctx, id)
		if err != nil {
			return err
		}
		if !b.Active() {
			return ErrNotConfirmed
		}
		// The booking's times are its owner's (a test booking's owner's
		// clock); the audit's the server's.
		bctx, bnow, err := booking.OwnerNow(ctx, tx, b, now)
		if err != nil {
			return err
		}
		if in.For == ForProvider {
			err = booking.CancelByProviderInTx(bctx, tx, b, "", bnow)
		} else {
			err = booking.CancelInTx(bctx, tx, b, in.Reason, bnow)
		}
		if err != nil {
			return err
		}
		return Audit(ctx, tx, op.ID, now, ActionBookingCancelled, "booking", b.ID,
			details("for", in.For, "reason", in.Reason, "note", note))
	})
	if err == nil && s.wake != nil {
		s.wake()
	}
	return err
}

// Mover finds the times a booking may move to and moves it: the booking
// lifecycle's reschedule options and reschedule.
type Mover struct {
	Search    *booking.Search
	Lifecycle *booking.Lifecycle
}

// MoveOptions returns the times a confirmed booking may move to: its own
// provider's free slots for the same job (booking.Search.OptionsFor), in
// the window the text asks for ("" for the nearest).
func (s *Service) MoveOptions(ctx context.Context, m *Mover, id, when, lang string) (Booking, booking.Result, error) {
	b, err := s.store.OperatorBooking(ctx, id)
	if err != nil {
		return Booking{}, booking.Result{}, err
	}
	if !b.Active() {
		return b, booking.Result{}, ErrNotConfirmed
	}
	locale := "sv-SE"
	if lang == web.EN {
		locale = "en-GB"
	}
	ctx, _, err = bokat.OwnerNow(ctx, s.store, b.Mode, b.OwnerClientID, b.OwnerUserID, s.now())
	if err != nil {
		return b, booking.Result{}, err
	}
	res, err := m.Search.OptionsFor(ctx, b.Booking, booking.TimingQuery{PreferredTimeText: when, Locale: locale})
	return b, res, err
}

// MoveInput is an operator's move of a booking.
type MoveInput struct {
	// OptionID is a booking option MoveOptions returned.
	OptionID string
	// For is ForCustomer or ForProvider: who asked for the move.
	For string
	// Agreed: the customer agreed to the new time and its terms (the
	// operator confirms it on their behalf).
	Agreed bool
	Note   string
}

// Move moves a confirmed booking to an option of MoveOptions through the
// API's reschedule (booking.Lifecycle.Reschedule, as the booking's owner
// with a fresh idempotency key of the operator's): the option revalidated,
// the booking.rescheduled event and the messages queued, and the audit row
// written in the same transaction. A bad input fails with ErrInvalid, the
// lifecycle's refusals (an expired or taken option) as *bokat.Error.
func (s *Service) Move(ctx context.Context, m *Mover, op Operator, id string, in MoveInput) error {
	note, err := cleanNote(in.Note, 2, NoteMax)
	if err != nil {
		return err
	}
	if !in.Agreed || (in.For != ForCustomer && in.For != ForProvider) || strings.TrimSpace(in.OptionID) == "" {
		return fmt.Errorf("%w: the option, on whose behalf and the customer's agreement", ErrInvalid)
	}
	b, err := s.store.OperatorBooking(ctx, id)
	if err != nil {
		return err
	}
	if !b.Active() {
		return ErrNotConfirmed
	}
	contact, err := s.store.BookingAddresses(ctx, b.ID)
	if err != nil {
		return err
	}
	owner := bokat.Principal{Kind: bokat.PrincipalPartner, ClientID: b.OwnerClientID, UserID: b.OwnerUserID, Mode: b.Mode}
	key := idem.Key{Owner: "operator:" + op.ID, Operation: booking.OpReschedule, Key: newKey(), Mode: b.Mode.Or()}
	// The move happens at the owner's now (a test booking's owner's
	// clock), as the owner's own reschedule does; the audit keeps the
	// server's.
	now := s.now()
	ctx, ownerNow, err := bokat.OwnerNow(ctx, s.store, b.Mode, b.OwnerClientID, b.OwnerUserID, now)
	if err != nil {
		return err
	}
	in2 := booking.RescheduleInput{
		OptionID:        in.OptionID,
		ServiceLocation: booking.Location{Address: contact.ServiceAddress, Postcode: b.Postcode},
		UserConfirmed:   true, TermsAccepted: true, TermsVersion: b.TermsVersion, TermsAcceptedAt: ownerNow,
		Also: func(ctx context.Context, tx booking.Tx, moved bokat.Booking, _ time.Time) error {
			a, ok := tx.(AuditTx)
			if !ok {
				return errors.New("operator: the lifecycle's transaction cannot write the audit log")
			}
			return Audit(ctx, a, op.ID, now, ActionBookingMoved, "booking", moved.ID,
				details("for", in.For, "from", b.SlotStart.UTC().Format(time.RFC3339),
					"to", moved.SlotStart.UTC().Format(time.RFC3339), "note", note))
		},
	}
	if b.DestinationPostcode != "" {
		in2.DestinationLocation = &booking.Location{Address: contact.DestinationAddress, Postcode: b.DestinationPostcode}
	}
	_, _, err = m.Lifecycle.Reschedule(ctx, owner, b.ID, in2, key, "operator-move:"+b.ID,
		func(moved bokat.Booking) (idem.Outcome, error) {
			return idem.Outcome{Body: []byte(`{"booking_id":"` + moved.ID + `"}`), ResourceID: moved.ID}, nil
		})
	return err
}

// newKey is a fresh idempotency key.
func newKey() string {
	id, _ := newID("opmove_")
	return id
}
