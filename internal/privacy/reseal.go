package privacy

import (
	"context"
	"errors"
	"fmt"
)

// ResealCursor is how far a re-sealing pass has got: the last row id it
// visited in each table. The zero value starts a pass at the first row.
type ResealCursor struct {
	after [2]string // last id visited in Bookings, Requests
	done  [2]bool
}

// Done reports whether the pass has visited every row of both tables.
func (c *ResealCursor) Done() bool { return c.done[Bookings] && c.done[Requests] }

// ErrDoNotOpen is wrapped by ResealContacts' error when it passed over rows
// that do not open; the other rows were re-sealed and the cursor moved on.
var ErrDoNotOpen = errors.New("do not open")

// ResealContacts seals, with the sealing key, the next limit rows (in id
// order, after cur) of bookings and of follow-up requests whose contact
// data is in plain text (written before sealing) or sealed with another key
// (after a rotation), fills their blind index, and moves cur past them. It
// returns how many rows it re-sealed; call it until cur.Done(). A row that
// does not open (sealed with a key the store lacks, or altered) is skipped
// and reported in the returned error, which wraps ErrDoNotOpen and the
// sealer's error (webhook.ErrUnknownKey) and names key and row ids only;
// the cursor moves past it all the same, so any number of such rows never
// keeps the rows after them from being re-sealed. Several processes may run
// it at once: a row is written only if nobody re-sealed it in between. Rows
// whose contact data was erased are left alone.
func (s *Service) ResealContacts(ctx context.Context, cur *ResealCursor, limit int) (int, error) {
	total := 0
	var skipped []error
	for _, t := range []Table{Bookings, Requests} {
		if cur.done[t] {
			continue
		}
		ids, err := s.store.ContactsToReseal(ctx, t, cur.after[t], limit)
		if err != nil {
			return total, err
		}
		if len(ids) == 0 {
			cur.done[t] = true
			continue
		}
		var (
			done     int
			unopened []error
		)
		err = s.store.InTx(ctx, func(tx Tx) error {
			done, unopened = 0, nil
			for _, id := range ids {
				reseal := tx.ResealBooking
				if t == Requests {
					reseal = tx.ResealRequest
				}
				ok, err := reseal(ctx, id)
				var bad *UnopenableError
				if errors.As(err, &bad) {
					unopened = append(unopened, bad.Err)
					continue
				}
				if err != nil {
					return err
				}
				if ok {
					done++
				}
			}
			return nil
		})
		if err != nil {
			return total, fmt.Errorf("re-seal %s: %w", t, err)
		}
		cur.after[t], cur.done[t] = ids[len(ids)-1], len(ids) < limit
		total += done
		skipped = append(skipped, unopened...)
	}
	if len(skipped) > 0 {
		return total, fmt.Errorf("re-seal: %d row(s) %w: %w", len(skipped), ErrDoNotOpen, errors.Join(skipped...))
	}
	return total, nil
}

// resealBatch is how many rows of each table one re-seal transaction takes.
const resealBatch = 200

// ResealPass re-seals, batch after batch, every row that needs it
// (ResealContacts from a fresh cursor until it is done or ctx ends): one
// pass visits every row once, in id order, and rows that do not open are
// passed over, never retried within the pass. Each failed batch is handed
// to report (unless ctx ended) with the number of rows re-sealed so far;
// rows that do not open (ErrDoNotOpen) do not stop the pass, any other
// failure does, to be tried again at the next. It returns how many rows it
// re-sealed.
func (s *Service) ResealPass(ctx context.Context, report func(err error, resealed int)) int {
	total := 0
	var cur ResealCursor
	for ctx.Err() == nil && !cur.Done() {
		n, err := s.ResealContacts(ctx, &cur, resealBatch)
		total += n
		if err != nil && ctx.Err() == nil {
			report(err, total)
		}
		if err != nil && !errors.Is(err, ErrDoNotOpen) {
			break
		}
	}
	return total
}
