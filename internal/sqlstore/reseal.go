package sqlstore

import (
	"context"
	"database/sql"

	"bokat/internal/followup"
	"bokat/internal/privacy"
)

// ContactsToReseal implements privacy.Store.
func (db *DB) ContactsToReseal(ctx context.Context, t privacy.Table, after string, limit int) ([]string, error) {
	v, err := db.contactVault()
	if err != nil {
		return nil, err
	}
	table := "bookings"
	if t == privacy.Requests {
		table = "follow_up_requests"
	}
	return db.ids(ctx, `SELECT id FROM `+table+`
		WHERE (contact_key_id IS NULL OR contact_key_id <> $1) AND contact_erased_at IS NULL AND id > $3
		ORDER BY id LIMIT $2`, v.Keys.SealingKeyID(), limit, after)
}

// ResealBooking implements privacy.Tx.
func (tx *Tx) ResealBooking(ctx context.Context, id string) (bool, error) {
	v, err := tx.db.contactVault()
	if err != nil {
		return false, err
	}
	n, err := tx.rewriteBooking(ctx, v, id, nil)
	return n == 1, err
}

// ResealRequest implements privacy.Tx.
func (tx *Tx) ResealRequest(ctx context.Context, id string) (bool, error) {
	v, err := tx.db.contactVault()
	if err != nil {
		return false, err
	}
	n, err := tx.rewriteRequest(ctx, v, id, nil)
	return n == 1, err
}

// rewriteBooking opens a booking's sealed columns, applies edit (nil: none,
// and a row already sealed with the sealing key is left as it is), and
// writes them back sealed with the sealing key, blind index recomputed,
// if nobody re-sealed the row in between. A row that does not open is
// *privacy.UnopenableError.
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
		return 0, &privacy.UnopenableError{Err: err}
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
		return 0, &privacy.UnopenableError{Err: err}
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
