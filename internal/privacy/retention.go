package privacy

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Retention defaults (docs/privacy.md): booking contact data is kept for the
// consumer-services complaint period after the slot ended or the booking was
// cancelled; follow-up request contact data for the weeks in which
// providers answer.
const (
	DefaultRetainBookings = 3 * 365 * 24 * time.Hour
	DefaultRetainRequests = 30 * 24 * time.Hour
	// DefaultRetainOperatorAudit is how long the operators' audit trail
	// (who did what to which credential, by operator id or operating-system
	// user name) is kept: two years, longer than any credential's overlap
	// or expiry, for questions about past access.
	DefaultRetainOperatorAudit = 2 * 365 * 24 * time.Hour
)

// Retention is how long customer contact data is kept.
type Retention struct {
	// Bookings is counted from the end of a booking's slot, or from its
	// cancellation.
	Bookings time.Duration
	// Requests is counted from a follow-up request's creation.
	Requests time.Duration
	// OperatorAudit is how long an operator audit row is kept after it
	// was written; zero keeps them.
	OperatorAudit time.Duration
}

// ParseRetention reads a retention period: a Go duration ("720h") or whole
// days ("30d"), at least one hour.
func ParseRetention(s string) (time.Duration, error) {
	var d time.Duration
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 || n > 100*365 {
			return 0, fmt.Errorf("must be a whole number of days (like 30d) or a Go duration (like 720h)")
		}
		d = time.Duration(n) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, fmt.Errorf("must be a whole number of days (like 30d) or a Go duration (like 720h)")
		}
	}
	if d < time.Hour {
		return 0, fmt.Errorf("must be at least 1h")
	}
	return d, nil
}

// Erased is what an erasure of contact data touched: ids only.
type Erased struct {
	Bookings []string
	Requests []string
	// DroppedNotifications counts unsent notification jobs of the erased
	// bookings and requests, now skipped: nothing more goes to the person.
	DroppedNotifications int
}

// EraseExpiredContacts erases, at now, the contact data of up to limit
// bookings whose slot ended (confirmed) or that were cancelled before
// bookingsBefore, and of up to limit follow-up requests created before
// requestsBefore, and drops their unsent notification jobs, in one
// transaction. It keeps what is not personal (ids, provider, service,
// slot, price, status, times, terms version, consent source and time,
// postcodes). Call it until it erases nothing. Several processes may run
// it at once: a row is erased only if it still holds contact data when the
// transaction writes it.
//
// copies, when not nil, erases the copies of the erased rows' messages held
// outside the database (the development mail folder): it is called inside
// the transaction, after the rows are erased and before the commit, with
// the ids of exactly the bookings and requests this call erased; an error
// from it rolls the erasure back, so the rows stay to be erased (and their
// copies tried again) next time, and a crash after it leaves no copy behind.
func (s *Service) EraseExpiredContacts(ctx context.Context, now, bookingsBefore, requestsBefore time.Time, limit int,
	copies func(ids []string) error) (Erased, error) {
	bookings, requests, err := s.store.ExpiredContacts(ctx, bookingsBefore, requestsBefore, limit)
	if err != nil {
		return Erased{}, err
	}
	var out Erased
	if len(bookings) == 0 && len(requests) == 0 {
		return out, nil
	}
	err = s.store.InTx(ctx, func(tx Tx) error {
		out = Erased{}
		for _, id := range bookings {
			ok, dropped, err := tx.EraseBookingContact(ctx, id, now, bookingsBefore)
			if err != nil {
				return err
			}
			if ok {
				out.Bookings = append(out.Bookings, id)
				out.DroppedNotifications += dropped
			}
		}
		for _, id := range requests {
			ok, dropped, err := tx.EraseRequestContact(ctx, id, now, requestsBefore)
			if err != nil {
				return err
			}
			if ok {
				out.Requests = append(out.Requests, id)
				out.DroppedNotifications += dropped
			}
		}
		if ids := append(append([]string(nil), out.Bookings...), out.Requests...); copies != nil && len(ids) > 0 {
			if err := copies(ids); err != nil {
				return fmt.Errorf("copies outside the database: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return Erased{}, fmt.Errorf("erase expired contact data: %w", err)
	}
	return out, nil
}

// retentionBatch is how many rows of each table one erasure transaction takes.
const retentionBatch = 200

// Expired is what one run of the retention job erased.
type Expired struct {
	Erased
	// Copies counts the copies outside the database removed with the
	// erased rows, as the copies function reported them.
	Copies int
	// IdempotencyKeys counts the expired idempotency keys deleted.
	IdempotencyKeys int
	// InvitationAddresses counts the provider invitations that expired
	// unanswered whose address was erased.
	InvitationAddresses int
	// OperatorAudit counts the operator audit rows deleted.
	OperatorAudit int
}

// EraseExpired runs the retention job once: EraseExpiredContacts, at a
// fresh now() with the cutoffs r gives, batch after batch until none is
// left or ctx ends. copies, when not nil, is EraseExpiredContacts' copies
// that also says how many copies it removed. Then it deletes the expired
// idempotency keys (request keys are kept 30 days), and then the addresses
// of provider invitations that expired unanswered (an invitation's address
// is kept while it is open), and then the operator audit rows older than
// r.OperatorAudit (when set), each in transactions of at most
// retentionBatch rows. It returns what it erased, with the error that
// stopped it early, if any.
func (s *Service) EraseExpired(ctx context.Context, now func() time.Time, r Retention,
	copies func(ids []string) (int, error)) (Expired, error) {
	var total Expired
	for ctx.Err() == nil {
		var (
			batchCopies func([]string) error
			removed     int
		)
		if copies != nil {
			batchCopies = func(ids []string) error {
				var err error
				removed, err = copies(ids)
				return err
			}
		}
		at := now()
		e, err := s.EraseExpiredContacts(ctx, at, at.Add(-r.Bookings), at.Add(-r.Requests), retentionBatch, batchCopies)
		if err != nil {
			return total, err
		}
		total.Bookings, total.Requests = append(total.Bookings, e.Bookings...), append(total.Requests, e.Requests...)
		total.DroppedNotifications += e.DroppedNotifications
		total.Copies += removed
		if len(e.Bookings) == 0 && len(e.Requests) == 0 {
			break
		}
	}
	if err := inBatches(ctx, &total.IdempotencyKeys, func() (int, error) {
		return s.store.DeleteExpiredIdempotencyKeys(ctx, now(), retentionBatch)
	}); err != nil {
		return total, fmt.Errorf("delete expired idempotency keys: %w", err)
	}
	if err := inBatches(ctx, &total.InvitationAddresses, func() (int, error) {
		return s.store.EraseExpiredInvitationAddresses(ctx, now(), retentionBatch)
	}); err != nil {
		return total, fmt.Errorf("erase the addresses of expired invitations: %w", err)
	}
	if r.OperatorAudit > 0 {
		if err := inBatches(ctx, &total.OperatorAudit, func() (int, error) {
			return s.store.DeleteOperatorAuditBefore(ctx, now().Add(-r.OperatorAudit), retentionBatch)
		}); err != nil {
			return total, fmt.Errorf("delete old operator audit rows: %w", err)
		}
	}
	return total, nil
}

// inBatches runs batch, adding what each run did to *count, until a run does
// fewer than retentionBatch rows, fails, or ctx ends.
func inBatches(ctx context.Context, count *int, batch func() (int, error)) error {
	for ctx.Err() == nil {
		n, err := batch()
		if err != nil {
			return err
		}
		*count += n
		if n < retentionBatch {
			return nil
		}
	}
	return nil
}
