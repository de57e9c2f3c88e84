// Package privacy holds the rules for a customer's personal data after it is
// stored (docs/privacy.md): the extract, correction and erasure a person may
// ask for, the retention that erases contact data when its period is over,
// and the re-sealing that moves contact data to the current key. It declares
// the store it needs (store.go); the database adapter implements it, sealing
// and opening the contact data at its boundary.
package privacy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"bokat"
	"bokat/internal/booking"
	"bokat/internal/followup"
)

// Service runs the privacy use cases on one store.
type Service struct{ store Store }

// New returns the privacy use cases over store.
func New(store Store) *Service { return &Service{store: store} }

// PersonRecords returns what is held for the person with the e-mail address
// and/or phone number (either may be empty, not both): the extract the
// terms promise.
func (s *Service) PersonRecords(ctx context.Context, email, phone string) (Records, error) {
	return s.store.PersonRecords(ctx, email, phone)
}

// FutureBookingsError refuses an erasure: the person has confirmed bookings
// whose slot has not ended, and the caller did not ask to cancel them.
type FutureBookingsError struct{ IDs []string }

func (e *FutureBookingsError) Error() string {
	return fmt.Sprintf("the person has %d confirmed booking(s) still to come (%s): cancel them first or erase with --cancel-future",
		len(e.IDs), strings.Join(e.IDs, ", "))
}

// PersonErasure is what an erasure on request touched: ids and counts only.
type PersonErasure struct {
	Erased
	// Cancelled are the future bookings cancelled before the erasure.
	Cancelled []string
	// Accounts are the ids of the deleted sign-in accounts.
	Accounts []string
}

// EraseCancelReason is the cancellation reason of a future booking
// cancelled by an erasure: one of the contract's reasons, as the customer
// gave none.
const EraseCancelReason = "other"

// CancelAsLifecycle is the cancel of ErasePerson that cancels a booking as
// the lifecycle does at now, a test booking at its owner's test clock
// (reason EraseCancelReason, its event and notifications).
func CancelAsLifecycle(now time.Time) func(ctx context.Context, tx Tx, b bokat.Booking) error {
	return func(ctx context.Context, tx Tx, b bokat.Booking) error {
		// A test booking is cancelled at its owner's test clock, as its
		// owner's own cancel would be.
		ctx, ownerNow, err := booking.OwnerNow(ctx, tx, b, now)
		if err != nil {
			return err
		}
		return booking.CancelInTx(ctx, tx, b, EraseCancelReason, ownerNow)
	}
}

// ErasePerson erases, in one transaction at now, everything held for the
// person with the e-mail address and/or phone number (found as
// PersonRecords finds it): the contact data of their bookings and
// follow-up requests (as retention does, unsent notification jobs
// dropped) and their sign-in account (user, sessions, grants, tokens,
// sign-in codes). A confirmed booking whose slot has not ended (on its
// owner's clock: a test booking's owner's test clock) makes it fail with
// *FutureBookingsError unless cancel is given; then each such booking is
// erased and then handed to cancel inside the transaction (which
// must cancel it with its event and notifications, as CancelAsLifecycle
// does: the customer's message then finds no address and is skipped, the
// provider's goes out).
func (s *Service) ErasePerson(ctx context.Context, email, phone string, now time.Time,
	cancel func(ctx context.Context, tx Tx, b bokat.Booking) error) (PersonErasure, error) {
	var out PersonErasure
	err := s.store.InTx(ctx, func(tx Tx) error {
		out = PersonErasure{}
		bookings, err := tx.PersonBookings(ctx, email, phone, now)
		if err != nil {
			return err
		}
		// Still to come is judged on each booking's owner's clock: a test
		// booking whose slot ended on its owner's test clock is past. The
		// bookings read here are the ones cancelled below (the erasure
		// changes none of a booking's own fields).
		var future []bokat.Booking
		var futureIDs []string
		for _, r := range bookings {
			if !r.Upcoming {
				continue
			}
			b, err := tx.BookingByID(ctx, r.ID)
			if err != nil {
				return err
			}
			_, ownerNow, err := booking.OwnerNow(ctx, tx, b, now)
			if err != nil {
				return err
			}
			if b.SlotEnd.After(ownerNow) {
				future, futureIDs = append(future, b), append(futureIDs, b.ID)
			}
		}
		if len(future) > 0 && cancel == nil {
			return &FutureBookingsError{IDs: futureIDs}
		}
		for _, b := range bookings {
			ok, dropped, err := tx.EraseBookingContact(ctx, b.ID, now, time.Time{})
			if err != nil {
				return err
			}
			if ok {
				out.Bookings = append(out.Bookings, b.ID)
				out.DroppedNotifications += dropped
			}
		}
		for _, b := range future {
			if err := cancel(ctx, tx, b); err != nil {
				return fmt.Errorf("cancel booking %s: %w", b.ID, err)
			}
			out.Cancelled = append(out.Cancelled, b.ID)
		}
		requests, err := tx.PersonRequests(ctx, email, phone)
		if err != nil {
			return err
		}
		for _, r := range requests {
			ok, dropped, err := tx.EraseRequestContact(ctx, r.ID, now, time.Time{})
			if err != nil {
				return err
			}
			if ok {
				out.Requests = append(out.Requests, r.ID)
				out.DroppedNotifications += dropped
			}
		}
		out.Accounts, err = tx.DeleteAccount(ctx, email)
		return err
	})
	if err != nil {
		return PersonErasure{}, fmt.Errorf("erase: %w", err)
	}
	return out, nil
}

// ContactCorrection is a correction of a person's contact data; a nil field
// is left as it is. A name correction replaces the whole name: when any of
// Name, FirstName and LastName is set, those not set are emptied, so no
// part of the old name survives beside the new one.
type ContactCorrection struct {
	Name, FirstName, LastName *string
	Phone, Email              *string
}

// Fields names the fields the correction sets (customer field names, no
// values), in a fixed order.
func (c ContactCorrection) Fields() []string {
	var out []string
	for _, f := range []struct {
		name string
		v    *string
	}{{"name", c.Name}, {"first_name", c.FirstName}, {"last_name", c.LastName}, {"phone", c.Phone}, {"email", c.Email}} {
		if f.v != nil {
			out = append(out, f.name)
		}
	}
	return out
}

func (c ContactCorrection) renames() bool {
	return c.Name != nil || c.FirstName != nil || c.LastName != nil
}

func valueOf(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// apply corrects a booking's contact data.
func (c ContactCorrection) apply(b *bokat.BookingContact) {
	if c.renames() {
		b.Name, b.FirstName, b.LastName = valueOf(c.Name), valueOf(c.FirstName), valueOf(c.LastName)
	}
	if c.Phone != nil {
		b.Phone = *c.Phone
	}
	if c.Email != nil {
		b.Email = *c.Email
	}
}

// applyJSON corrects a follow-up request's customer JSON object, keeping
// any other member.
func (c ContactCorrection) applyJSON(customer []byte) ([]byte, error) {
	m := map[string]any{}
	if len(customer) > 0 {
		if err := json.Unmarshal(customer, &m); err != nil {
			return nil, errors.New("the customer is not a JSON object")
		}
	}
	set := func(key string, p *string) {
		if p != nil && *p != "" {
			m[key] = *p
		} else {
			delete(m, key)
		}
	}
	if c.renames() {
		set("name", c.Name)
		set("first_name", c.FirstName)
		set("last_name", c.LastName)
	}
	if c.Phone != nil {
		m["phone"] = *c.Phone
	}
	if c.Email != nil {
		m["email"] = *c.Email
	}
	return json.Marshal(m)
}

// PersonCorrection is what a correction touched: ids only.
type PersonCorrection struct {
	Bookings []string
	Requests []string
}

// CorrectPerson corrects, in one transaction, the customer contact data of
// every booking and follow-up request of the person with the e-mail address
// and/or phone number (found as PersonRecords finds them; rows whose
// contact data was erased hold none to correct). Each row is re-sealed with
// the sealing key and its blind index recomputed, so the person is found by
// the corrected address and number afterwards, and no longer by the old
// ones. Pending notification jobs read the booking or request when they
// send, so unsent messages go to the corrected address. A row that does not
// open (sealed with a key no longer given) fails the whole correction,
// naming the row. A correction that sets nothing is an error.
func (s *Service) CorrectPerson(ctx context.Context, email, phone string, c ContactCorrection) (PersonCorrection, error) {
	if len(c.Fields()) == 0 {
		return PersonCorrection{}, errors.New("correct: nothing to correct")
	}
	var out PersonCorrection
	err := s.store.InTx(ctx, func(tx Tx) error {
		out = PersonCorrection{}
		bookings, err := tx.PersonBookings(ctx, email, phone, time.Time{})
		if err != nil {
			return err
		}
		requests, err := tx.PersonRequests(ctx, email, phone)
		if err != nil {
			return err
		}
		for _, b := range held(bookings) {
			ok, err := tx.RewriteBookingContact(ctx, b, c.apply)
			if err != nil {
				return fmt.Errorf("booking %s: %w", b, err)
			}
			if !ok {
				return fmt.Errorf("booking %s changed during the correction", b)
			}
			out.Bookings = append(out.Bookings, b)
		}
		for _, r := range held(requests) {
			ok, err := tx.RewriteRequestContact(ctx, r, func(rec *followup.Record) error {
				customer, err := c.applyJSON(rec.CustomerJSON)
				rec.CustomerJSON = customer
				return err
			})
			if err != nil {
				return fmt.Errorf("follow-up request %s: %w", r, err)
			}
			if !ok {
				return fmt.Errorf("follow-up request %s changed during the correction", r)
			}
			out.Requests = append(out.Requests, r)
		}
		return nil
	})
	if err != nil {
		return PersonCorrection{}, fmt.Errorf("correct: %w", err)
	}
	return out, nil
}

// held returns the ids of the rows whose contact data is held.
func held(rows []Row) []string {
	var out []string
	for _, r := range rows {
		if !r.Erased {
			out = append(out, r.ID)
		}
	}
	return out
}
