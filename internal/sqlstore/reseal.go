package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"bokat/internal/followup"
)

// ResealCursor is how far a re-sealing pass has got: the last row id it
// visited in each table. The zero value starts a pass at the first row.
type ResealCursor struct {
	after [2]string // last id visited in bookings, follow_up_requests
	done  [2]bool
}

// Done reports whether the pass has visited every row of both tables.
func (c *ResealCursor) Done() bool { return c.done[0] && c.done[1] }

var resealTables = [2]string{"bookings", "follow_up_requests"}

// ResealContacts seals, with the vault's sealing key, the next limit rows
// (in id order, after cur) of bookings and of follow-up requests whose
// contact data is in plain text (written before sealing) or sealed with
// another key (after a rotation), fills their blind index, and moves cur
// past them. It returns how many rows it re-sealed; call it until
// cur.Done(). A row that does not open (sealed with a key the vault lacks,
// or altered) is skipped and reported in the returned error, which wraps
// the Sealer's (webhook.ErrUnknownKey) and names key and row ids only; the
// cursor moves past it all the same, so any number of such rows never
// keeps the rows after them from being re-sealed. Several processes may
// run it at once: a row is written only if nobody re-sealed it in between.
// Rows whose contact data was erased are left alone.
func (db *DB) ResealContacts(ctx context.Context, cur *ResealCursor, limit int) (int, error) {
	v, err := db.contactVault()
	if err != nil {
		return 0, err
	}
	sealID := v.Keys.SealingKeyID()
	total := 0
	var skipped []error
	for t, table := range resealTables {
		if cur.done[t] {
			continue
		}
		var ids []string
		rows, err := db.read.QueryContext(ctx, `SELECT id FROM `+table+`
			WHERE (contact_key_id IS NULL OR contact_key_id <> $1) AND contact_erased_at IS NULL AND id > $3
			ORDER BY id LIMIT $2`, sealID, limit, cur.after[t])
		if err != nil {
			return total, translate(err)
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return total, translate(err)
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return total, translate(err)
		}
		if len(ids) == 0 {
			cur.done[t] = true
			continue
		}
		var (
			done     int
			unopened []error
		)
		err = db.InTx(ctx, func(tx *Tx) error {
			done, unopened = 0, nil
			for _, id := range ids {
				var (
					n   int64
					err error
				)
				if table == "bookings" {
					n, err = tx.resealBooking(ctx, v, id)
				} else {
					n, err = tx.resealRequest(ctx, v, id)
				}
				var bad *unopenable
				if errors.As(err, &bad) {
					unopened = append(unopened, bad.err)
					continue
				}
				if err != nil {
					return err
				}
				done += int(n)
			}
			return nil
		})
		if err != nil {
			return total, fmt.Errorf("re-seal %s: %w", table, err)
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

// ErrDoNotOpen is wrapped by ResealContacts' error when it passed over rows
// that do not open; the other rows were re-sealed and the cursor moved on.
var ErrDoNotOpen = errors.New("do not open")

// unopenable marks a row whose sealed values do not open.
type unopenable struct{ err error }

func (u *unopenable) Error() string { return u.err.Error() }
func (u *unopenable) Unwrap() error { return u.err }

func (tx *Tx) resealBooking(ctx context.Context, v *Vault, id string) (int64, error) {
	return tx.rewriteBooking(ctx, v, id, nil)
}

// rewriteBooking opens a booking's sealed columns, applies edit (nil: none,
// and a row already sealed with the sealing key is left as it is), and
// writes them back sealed with the sealing key, blind index recomputed,
// if nobody re-sealed the row in between. A row that does not open is
// *unopenable.
func (tx *Tx) rewriteBooking(ctx context.Context, v *Vault, id string, edit func(*bookingSecrets)) (int64, error) {
	var s sealedBooking
	err := tx.tx.QueryRowContext(ctx, `SELECT `+sealedBookingColumns+`, contact_key_id FROM bookings WHERE id = $1`,
		id).Scan(s.dest()...)
	if err != nil {
		return 0, translate(err)
	}
	if edit == nil && s.KeyID.Valid && s.KeyID.String == v.Keys.SealingKeyID() {
		return 0, nil
	}
	plain, err := v.openBooking(id, s)
	if err != nil {
		return 0, &unopenable{err}
	}
	if edit != nil {
		edit(&plain)
	}
	fresh, err := v.sealBooking(id, plain)
	if err != nil {
		return 0, err
	}
	sv := fresh.Values
	res, err := tx.tx.ExecContext(ctx, `UPDATE bookings SET customer_name = $2, customer_first_name = $3,
		customer_last_name = $4, customer_phone = $5, customer_email = $6, service_address = $7,
		destination_address = $8, consent_statement = $9, cancel_notes = $10, contact_key_id = $11,
		customer_email_index = $12, customer_phone_index = $13
		WHERE id = $1 AND contact_key_id IS NOT DISTINCT FROM $14`,
		id, sv[0], sv[1], sv[2], sv[3], sv[4], sv[5], sv[6], sv[7], sv[8], fresh.KeyID, fresh.EmailIndex, fresh.PhoneIndex, s.KeyID)
	if err != nil {
		return 0, translate(err)
	}
	return res.RowsAffected()
}

func (tx *Tx) resealRequest(ctx context.Context, v *Vault, id string) (int64, error) {
	return tx.rewriteRequest(ctx, v, id, nil)
}

// rewriteRequest is rewriteBooking for a follow-up request; edit gets the
// request with its sealed columns opened.
func (tx *Tx) rewriteRequest(ctx context.Context, v *Vault, id string, edit func(*followup.Record) error) (int64, error) {
	var (
		r                  followup.Record
		customer, location string
		keyID              sql.NullString
	)
	err := tx.tx.QueryRowContext(ctx, `SELECT customer_json, location_json, description, consent_statement, contact_key_id
		FROM follow_up_requests WHERE id = $1`, id).Scan(&customer, &location, &r.Description, &r.ConsentStatement, &keyID)
	if err != nil {
		return 0, translate(err)
	}
	if edit == nil && keyID.Valid && keyID.String == v.Keys.SealingKeyID() {
		return 0, nil
	}
	r.ID, r.CustomerJSON, r.LocationJSON = id, []byte(customer), []byte(location)
	if err := v.openRequest(&r, keyID.String); err != nil {
		return 0, &unopenable{err}
	}
	if edit != nil {
		if err := edit(&r); err != nil {
			return 0, err
		}
	}
	fresh, emailIndex, phoneIndex, err := v.sealRequest(&r)
	if err != nil {
		return 0, err
	}
	res, err := tx.tx.ExecContext(ctx, `UPDATE follow_up_requests SET customer_json = $2, location_json = $3,
		description = $4, consent_statement = $5, contact_key_id = $6, customer_email_index = $7, customer_phone_index = $8
		WHERE id = $1 AND contact_key_id IS NOT DISTINCT FROM $9`,
		id, string(r.CustomerJSON), string(r.LocationJSON), r.Description, r.ConsentStatement, fresh, emailIndex, phoneIndex, keyID)
	if err != nil {
		return 0, translate(err)
	}
	return res.RowsAffected()
}
