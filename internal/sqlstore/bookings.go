package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"bokat"
	"bokat/internal/booking"
	"bokat/internal/idem"
)

// The booking lifecycle's store and transaction, and what search reads.
var (
	_ booking.Store       = Bound[booking.Tx]{}
	_ booking.Tx          = (*Tx)(nil)
	_ booking.SupplyStore = (*DB)(nil)
)

// bookingColumns are the columns scanBooking reads, in its order.
const bookingColumns = `id, request_id, owner_client_id, owner_user_id, status, provider_id, provider_name,
	service_id, vertical_id, job_type_id, service_label_sv, service_label_en,
	slot_start_at, slot_end_at, slot_label, price_sek, pricing_model, price_type, unit_price_sek, quantity, unit,
	minimum_charge_sek, terms_version, terms_accepted_at, postcode, destination_postcode, locale, source,
	external_reference, confirmed_at, rescheduled_at, cancelled_at, cancel_reason, sequence,
	customer_confirmation_status, provider_confirmation_status, mode,
	tax_reduction_kind, tax_reduction_rate_percent, labour_percent, labour_sek, tax_reduction_sek, tax_rules_version`

type rowScanner interface{ Scan(dest ...any) error }

func scanBooking(row rowScanner, extra ...any) (bokat.Booking, error) {
	var (
		b                                         bokat.Booking
		start, end, accepted, confirmed           int64
		rescheduled, cancelled                    sql.NullInt64
		customerStatus, providerStatus, reasonCol string
		tax                                       bokat.TaxReductionEstimate
	)
	dest := []any{&b.ID, &b.RequestID, &b.OwnerClientID, &b.OwnerUserID, &b.Status, &b.ProviderID, &b.ProviderName,
		&b.ServiceID, &b.VerticalID, &b.JobTypeID, &b.ServiceLabelSV, &b.ServiceLabelEN,
		&start, &end, &b.SlotLabel, &b.PriceSEK, &b.PricingModel, &b.PriceType, &b.UnitPriceSEK, &b.Quantity, &b.Unit,
		&b.MinimumChargeSEK, &b.TermsVersion, &accepted, &b.Postcode, &b.DestinationPostcode, &b.Locale, &b.Source,
		&b.ExternalReference, &confirmed, &rescheduled, &cancelled, &reasonCol, &b.Sequence,
		&customerStatus, &providerStatus, &b.Mode,
		&tax.Kind, &tax.RatePercent, &tax.LabourPercent, &tax.LabourSEK, &tax.ReductionSEK, &tax.RulesVersion}
	if err := row.Scan(append(dest, extra...)...); err != nil {
		return bokat.Booking{}, translate(err)
	}
	if tax.Kind != "" {
		b.TaxReduction = &tax
	}
	b.SlotStart, b.SlotEnd = FromMillis(start), FromMillis(end)
	b.TermsAcceptedAt, b.ConfirmedAt = FromMillis(accepted), FromMillis(confirmed)
	b.RescheduledAt, b.CancelledAt = FromNullMillis(rescheduled), FromNullMillis(cancelled)
	b.CancelReason = reasonCol
	b.CustomerConfirmationStatus, b.ProviderConfirmationStatus = customerStatus, providerStatus
	return b, nil
}

// InsertBooking writes a new confirmed booking — with the customer's
// contact data and consent — and its calendar entry entryID (kind
// 'booking', active) over the booking's slot, in the transaction. When the
// entry overlaps another active booking entry of the provider it fails with
// an error wrapping booking.ErrSlotTaken and bokat.ErrConflict; on PostgreSQL the
// transaction is then aborted and must be rolled back.
func (tx *Tx) InsertBooking(ctx context.Context, b bokat.Booking, c bokat.BookingContact, consent bokat.BookingConsent,
	entryID string, now time.Time) error {
	v, err := tx.db.contactVault()
	if err != nil {
		return fmt.Errorf("insert booking: %w", err)
	}
	sealed, err := v.sealBooking(b.ID, bookingSecrets{Contact: c, Statement: consent.Statement})
	if err != nil {
		return fmt.Errorf("insert booking: %w", err)
	}
	sv := sealed.Values
	tax := taxColumns(b)
	_, err = tx.tx.ExecContext(ctx, `INSERT INTO bookings (`+bookingColumns+`, `+sealedBookingColumns+`,
		contact_key_id, customer_email_index, customer_phone_index,
		consent_source, consent_collected_at, consent_method, currency, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22,
		        $23, $24, $25, $26, $27, $28, $29, $30, $31, $32, $33, $34, $35, $36, $37, $54, $55, $56, $57, $58, $59,
		        $38, $39, $40, $41, $42, $43, $44, $45, $46, $47, $48, $49, $50, $51, $53, 'SEK', $52)`,
		b.ID, b.RequestID, b.OwnerClientID, b.OwnerUserID, b.Status, b.ProviderID, b.ProviderName,
		b.ServiceID, b.VerticalID, b.JobTypeID, b.ServiceLabelSV, b.ServiceLabelEN,
		Millis(b.SlotStart), Millis(b.SlotEnd), b.SlotLabel, b.PriceSEK, b.PricingModel, b.PriceType, b.UnitPriceSEK,
		b.Quantity, b.Unit, b.MinimumChargeSEK, b.TermsVersion, Millis(b.TermsAcceptedAt), b.Postcode,
		b.DestinationPostcode, b.Locale, b.Source, b.ExternalReference, Millis(b.ConfirmedAt), NullMillis(b.RescheduledAt),
		NullMillis(b.CancelledAt), b.CancelReason, b.Sequence, b.CustomerConfirmationStatus, b.ProviderConfirmationStatus,
		string(b.Mode.Or()), sv[0], sv[1], sv[2], sv[3], sv[4], sv[5], sv[6], sv[7], sv[8],
		sealed.KeyID, sealed.EmailIndex, sealed.PhoneIndex,
		consent.Source, NullMillis(consent.CollectedAt), Millis(now), consent.MethodOrDefault(),
		tax.Kind, tax.RatePercent, tax.LabourPercent, tax.LabourSEK, tax.ReductionSEK, tax.RulesVersion)
	if err != nil {
		return fmt.Errorf("insert booking: %w", translate(err))
	}
	_, err = tx.tx.ExecContext(ctx, `INSERT INTO calendar_entries (id, provider_id, booking_id, kind, start_at, end_at,
		active, note, created_at) VALUES ($1, $2, $3, 'booking', $4, $5, TRUE, '', $6)`,
		entryID, b.ProviderID, b.ID, Millis(b.SlotStart), Millis(b.SlotEnd), Millis(now))
	return entryError(err)
}

// taxColumns is the stored form of b's ROT/RUT estimate: the zero value
// (an empty kind) when it has none.
func taxColumns(b bokat.Booking) bokat.TaxReductionEstimate {
	if b.TaxReduction == nil {
		return bokat.TaxReductionEstimate{}
	}
	return *b.TaxReduction
}

// entryError translates the error of a booking entry write; a conflict
// there is always an overlap (the entry id and booking id are fresh).
func entryError(err error) error {
	err = translate(err)
	if errors.Is(err, bokat.ErrConflict) {
		return fmt.Errorf("%w: %w", booking.ErrSlotTaken, err)
	}
	if err != nil {
		return fmt.Errorf("write calendar entry: %w", err)
	}
	return nil
}

// ownerFilter restricts a booking query to its owner.
const ownerFilter = ` AND owner_client_id = $2 AND owner_user_id = $3`

// OwnedBooking returns the booking whose id or request id is idOrRequestID
// and that belongs to the owner (client, and user for delegated tokens), or
// bokat.ErrNotFound: an unknown id and another owner's booking look alike.
func (db *DB) OwnedBooking(ctx context.Context, idOrRequestID, ownerClientID, ownerUserID string) (bokat.Booking, error) {
	return scanBooking(db.read.QueryRowContext(ctx, `SELECT `+bookingColumns+` FROM bookings
		WHERE (id = $1 OR request_id = $1)`+ownerFilter, idOrRequestID, ownerClientID, ownerUserID))
}

// OwnedBookingForUpdate is OwnedBooking by canonical id inside the
// transaction; on PostgreSQL it locks the booking's row until the
// transaction ends, so concurrent cancels and reschedules of one booking run
// one after the other (SQLite's single writer does that by itself).
func (tx *Tx) OwnedBookingForUpdate(ctx context.Context, id, ownerClientID, ownerUserID string) (bokat.Booking, error) {
	lock := ""
	if tx.engine == Postgres {
		lock = " FOR UPDATE"
	}
	return scanBooking(tx.tx.QueryRowContext(ctx, `SELECT `+bookingColumns+` FROM bookings
		WHERE id = $1`+ownerFilter+lock, id, ownerClientID, ownerUserID))
}

// CancelBooking stores the cancellation of b — b.CancelledAt,
// b.CancelReason and b.Sequence as the caller set them, notes — clears the
// delivery statuses (new messages are queued) and frees the slot: the
// booking's calendar entry becomes inactive. It returns
// bokat.ErrNotFound unless b is a confirmed booking.
func (tx *Tx) CancelBooking(ctx context.Context, b bokat.Booking, notes string, now time.Time) error {
	v, plain, err := tx.bookingSecrets(ctx, b.ID)
	if err != nil {
		return err
	}
	plain.Notes = notes
	sealed, err := v.sealBooking(b.ID, plain)
	if err != nil {
		return err
	}
	sv := sealed.Values
	res, err := tx.tx.ExecContext(ctx, `UPDATE bookings SET status = 'cancelled', cancelled_at = $2, cancel_reason = $3,
		sequence = $4, customer_confirmation_status = '', provider_confirmation_status = '', updated_at = $5,
		customer_name = $6, customer_first_name = $7, customer_last_name = $8, customer_phone = $9,
		customer_email = $10, service_address = $11, destination_address = $12, consent_statement = $13,
		cancel_notes = $14, contact_key_id = $15, customer_email_index = $16, customer_phone_index = $17
		WHERE id = $1 AND status = 'confirmed'`,
		b.ID, Millis(b.CancelledAt), b.CancelReason, b.Sequence, Millis(now),
		sv[0], sv[1], sv[2], sv[3], sv[4], sv[5], sv[6], sv[7], sv[8], sealed.KeyID, sealed.EmailIndex, sealed.PhoneIndex)
	if err := changedOne(res, err, "booking "+b.ID); err != nil {
		return err
	}
	_, err = tx.tx.ExecContext(ctx, `UPDATE calendar_entries SET active = FALSE WHERE booking_id = $1`, b.ID)
	return translate(err)
}

// MoveBooking stores the reschedule of b: its new slot, price, ROT/RUT estimate, terms
// acceptance, postcodes, locations (c's addresses), RescheduledAt and
// Sequence as the caller set them; it clears the delivery statuses and
// moves the booking's calendar entry to the new slot. The new slot is held
// to the same rule as a new booking: an overlap with another active booking
// entry of the provider fails with booking.ErrSlotTaken. It returns
// bokat.ErrNotFound unless b is a confirmed booking.
func (tx *Tx) MoveBooking(ctx context.Context, b bokat.Booking, c bokat.BookingContact, now time.Time) error {
	v, plain, err := tx.bookingSecrets(ctx, b.ID)
	if err != nil {
		return err
	}
	plain.Contact.ServiceAddress, plain.Contact.DestinationAddress = c.ServiceAddress, c.DestinationAddress
	sealed, err := v.sealBooking(b.ID, plain)
	if err != nil {
		return err
	}
	sv := sealed.Values
	tax := taxColumns(b)
	res, err := tx.tx.ExecContext(ctx, `UPDATE bookings SET slot_start_at = $2, slot_end_at = $3, slot_label = $4,
		price_sek = $5, pricing_model = $6, price_type = $7, unit_price_sek = $8, quantity = $9, unit = $10,
		minimum_charge_sek = $11, terms_version = $12, terms_accepted_at = $13, postcode = $14, destination_postcode = $15,
		rescheduled_at = $16, sequence = $17,
		customer_confirmation_status = '', provider_confirmation_status = '', updated_at = $18,
		customer_name = $19, customer_first_name = $20, customer_last_name = $21, customer_phone = $22,
		customer_email = $23, service_address = $24, destination_address = $25, consent_statement = $26,
		cancel_notes = $27, contact_key_id = $28, customer_email_index = $29, customer_phone_index = $30,
		tax_reduction_kind = $31, tax_reduction_rate_percent = $32, labour_percent = $33, labour_sek = $34,
		tax_reduction_sek = $35, tax_rules_version = $36
		WHERE id = $1 AND status = 'confirmed'`,
		b.ID, Millis(b.SlotStart), Millis(b.SlotEnd), b.SlotLabel, b.PriceSEK, b.PricingModel, b.PriceType,
		b.UnitPriceSEK, b.Quantity, b.Unit, b.MinimumChargeSEK, b.TermsVersion, Millis(b.TermsAcceptedAt), b.Postcode,
		b.DestinationPostcode, Millis(b.RescheduledAt), b.Sequence, Millis(now),
		sv[0], sv[1], sv[2], sv[3], sv[4], sv[5], sv[6], sv[7], sv[8], sealed.KeyID, sealed.EmailIndex, sealed.PhoneIndex,
		tax.Kind, tax.RatePercent, tax.LabourPercent, tax.LabourSEK, tax.ReductionSEK, tax.RulesVersion)
	if err := changedOne(res, err, "booking "+b.ID); err != nil {
		return err
	}
	res, err = tx.tx.ExecContext(ctx, `UPDATE calendar_entries SET start_at = $2, end_at = $3
		WHERE booking_id = $1 AND active`, b.ID, Millis(b.SlotStart), Millis(b.SlotEnd))
	if err != nil {
		return entryError(err)
	}
	return changedOne(res, nil, "calendar entry of booking "+b.ID)
}

// changedOne returns nil when exactly one row changed, and an error
// wrapping bokat.ErrNotFound naming what otherwise.
func changedOne(res sql.Result, err error, what string) error {
	if err != nil {
		return translate(err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return translate(err)
	}
	if n != 1 {
		return fmt.Errorf("%s: %w", what, bokat.ErrNotFound)
	}
	return nil
}

// BookingByID reads a booking by canonical id inside the transaction,
// whoever owns it, or returns bokat.ErrNotFound. It is for service code
// acting on a booking it was given (notifications, events), not for callers.
func (tx *Tx) BookingByID(ctx context.Context, id string) (bokat.Booking, error) {
	return scanBooking(tx.tx.QueryRowContext(ctx, `SELECT `+bookingColumns+` FROM bookings WHERE id = $1`, id))
}

// BookingAddresses returns the stored service and destination addresses of
// a booking (the only fields of the contact it sets), or bokat.ErrNotFound.
func (tx *Tx) BookingAddresses(ctx context.Context, bookingID string) (bokat.BookingContact, error) {
	_, plain, err := tx.bookingSecrets(ctx, bookingID)
	if err != nil {
		return bokat.BookingContact{}, err
	}
	return bokat.BookingContact{ServiceAddress: plain.Contact.ServiceAddress,
		DestinationAddress: plain.Contact.DestinationAddress}, nil
}

// bookingSecrets reads and opens a booking's sealed columns inside the
// transaction, or returns bokat.ErrNotFound.
func (tx *Tx) bookingSecrets(ctx context.Context, bookingID string) (*Vault, bookingSecrets, error) {
	v, err := tx.db.contactVault()
	if err != nil {
		return nil, bookingSecrets{}, err
	}
	var s sealedBooking
	err = tx.tx.QueryRowContext(ctx, `SELECT `+sealedBookingColumns+`, contact_key_id FROM bookings WHERE id = $1`,
		bookingID).Scan(s.dest()...)
	if err != nil {
		return nil, bookingSecrets{}, translate(err)
	}
	plain, err := v.openBooking(bookingID, s)
	return v, plain, err
}

// ProviderName returns the name of a provider, or bokat.ErrNotFound.
func (tx *Tx) ProviderName(ctx context.Context, providerID string) (string, error) {
	return providerName(ctx, tx.tx, providerID)
}

// ProviderName returns the name of a provider, or bokat.ErrNotFound.
func (db *DB) ProviderName(ctx context.Context, providerID string) (string, error) {
	return providerName(ctx, db.read, providerID)
}

func providerName(ctx context.Context, q Reader, providerID string) (string, error) {
	var name string
	err := q.QueryRowContext(ctx, `SELECT name FROM providers WHERE id = $1`, providerID).Scan(&name)
	return name, translate(err)
}

// ProviderBookings returns the provider's live bookings, confirmed and
// cancelled, whose slot ends after from, ordered by slot start then id, with
// what its calendar feed shows of each. Test bookings are never shown to a
// provider (its feed, its pages).
func (db *DB) ProviderBookings(ctx context.Context, providerID string, from time.Time) ([]bokat.CalendarBooking, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT id, status, service_label_sv, slot_start_at, slot_end_at, price_sek,
		terms_version, postcode, destination_postcode, confirmed_at, rescheduled_at, cancelled_at, sequence FROM bookings
		WHERE provider_id = $1 AND slot_end_at > $2 AND mode = 'live' ORDER BY slot_start_at, id`, providerID, Millis(from))
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []bokat.CalendarBooking
	for rows.Next() {
		var (
			b                      bokat.CalendarBooking
			start, end, confirmed  int64
			rescheduled, cancelled sql.NullInt64
		)
		if err := rows.Scan(&b.ID, &b.Status, &b.ServiceLabelSV, &start, &end, &b.PriceSEK, &b.TermsVersion, &b.Postcode,
			&b.DestinationPostcode, &confirmed, &rescheduled, &cancelled, &b.Sequence); err != nil {
			return nil, translate(err)
		}
		b.SlotStart, b.SlotEnd, b.ConfirmedAt = FromMillis(start), FromMillis(end), FromMillis(confirmed)
		b.RescheduledAt, b.CancelledAt = FromNullMillis(rescheduled), FromNullMillis(cancelled)
		out = append(out, b)
	}
	return out, translate(rows.Err())
}

// NotificationBooking is everything a customer or provider message about a
// booking needs: the booking (ids, status, service, provider, slot, price,
// terms version, locale, confirmed/rescheduled/cancelled times, cancel
// reason, the iCalendar sequence) and the customer's contact data and
// address(es). It carries contact data: compose the message with it, never
// log it.
type NotificationBooking struct {
	bokat.Booking
	Contact bokat.BookingContact
}

// NotificationBooking reads the current state of a booking for a
// notification, or returns an error wrapping bokat.ErrNotFound.
func (db *DB) NotificationBooking(ctx context.Context, bookingID string) (NotificationBooking, error) {
	v, err := db.contactVault()
	if err != nil {
		return NotificationBooking{}, err
	}
	var s sealedBooking
	b, err := scanBooking(db.read.QueryRowContext(ctx, `SELECT `+bookingColumns+`, `+sealedBookingColumns+`, contact_key_id
		FROM bookings WHERE id = $1`, bookingID), s.dest()...)
	if err != nil {
		return NotificationBooking{}, fmt.Errorf("booking %s: %w", bookingID, err)
	}
	plain, err := v.openBooking(bookingID, s)
	if err != nil {
		return NotificationBooking{}, err
	}
	return NotificationBooking{Booking: b, Contact: plain.Contact}, nil
}

// SetConfirmationStatus records, inside tx, the delivery outcome of the
// latest message to one party of a booking: recipient is
// bokat.RecipientCustomer or bokat.RecipientProvider, status is
// bokat.NotificationSent, NotificationSkipped or NotificationFailed. It
// returns an error wrapping bokat.ErrNotFound for an unknown booking.
func (tx *Tx) SetConfirmationStatus(ctx context.Context, bookingID, recipient, status string) error {
	col := map[string]string{
		bokat.RecipientCustomer: "customer_confirmation_status",
		bokat.RecipientProvider: "provider_confirmation_status",
	}[recipient]
	if col == "" {
		return fmt.Errorf("set confirmation status: unknown recipient %q", recipient)
	}
	switch status {
	case bokat.NotificationSent, bokat.NotificationSkipped, bokat.NotificationFailed:
	default:
		return fmt.Errorf("set confirmation status: %q is not sent, skipped or failed", status)
	}
	res, err := tx.tx.ExecContext(ctx, `UPDATE bookings SET `+col+` = $2 WHERE id = $1`, bookingID, status)
	return changedOne(res, err, "booking "+bookingID)
}

// SetConfirmationStatus is Tx.SetConfirmationStatus in a transaction of
// its own.
func (db *DB) SetConfirmationStatus(ctx context.Context, bookingID, recipient, status string) error {
	return db.InTx(ctx, func(tx *Tx) error { return tx.SetConfirmationStatus(ctx, bookingID, recipient, status) })
}

// IdempotencyKeyExists reports, from the read pool, whether the key has a
// stored record: a request that fails its checks is still answered by the
// replay when an identical earlier request succeeded.
func (db *DB) IdempotencyKeyExists(ctx context.Context, k idem.Key) (bool, error) {
	var n int
	err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM idempotency_keys
		WHERE owner_key = $1 AND operation = $2 AND idem_key = $3 AND mode = $4`, k.Owner, k.Operation, k.Key,
		string(k.Mode.Or())).Scan(&n)
	return n > 0, translate(err)
}

// LockProviderCalendar serialises, until the transaction ends, the writers
// that add bookings to one provider's calendar. On PostgreSQL it takes a
// transaction-scoped advisory lock keyed by the provider id: concurrent
// confirmations for the same provider then queue instead of racing into the
// exclusion constraint, where overlapping uncommitted inserts deadlock each
// other (PostgreSQL breaks such a deadlock only after deadlock_timeout).
// The exclusion constraint stays the guarantee; this lock only makes
// contention cheap. On SQLite the single writer already serialises writes.
func (tx *Tx) LockProviderCalendar(ctx context.Context, providerID string) error {
	if tx.engine != Postgres {
		return nil
	}
	_, err := tx.tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('calendar:' || $1, 0))`, providerID)
	return translate(err)
}

// RecordChangeConsent records how the user's consent to the cancellation
// or reschedule of booking id just written in tx was obtained.
func (tx *Tx) RecordChangeConsent(ctx context.Context, id string, method bokat.ConsentMethod) error {
	_, err := tx.tx.ExecContext(ctx, `UPDATE bookings SET change_consent_method = $2 WHERE id = $1`, id, string(method))
	if err != nil {
		return fmt.Errorf("record the change consent of booking %s: %w", id, translate(err))
	}
	return nil
}

// UseElicitationNonce records the nonce of an elicitation state as used, in
// the transaction of the write the state consents to. It fails with an
// error wrapping bokat.ErrConflict when the nonce was used before (on
// PostgreSQL the transaction is then aborted). Expired nonces of earlier
// states are removed on the way.
func (tx *Tx) UseElicitationNonce(ctx context.Context, nonce string, expiresAt, now time.Time) error {
	if _, err := tx.tx.ExecContext(ctx, `DELETE FROM elicitation_nonces WHERE expires_at < $1`, Millis(now)); err != nil {
		return fmt.Errorf("remove expired elicitation nonces: %w", translate(err))
	}
	res, err := tx.tx.ExecContext(ctx, `INSERT INTO elicitation_nonces (nonce, expires_at, used_at) VALUES ($1, $2, $3)
		ON CONFLICT (nonce) DO NOTHING`, nonce, Millis(expiresAt), Millis(now))
	if err != nil {
		return fmt.Errorf("use an elicitation nonce: %w", translate(err))
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("use an elicitation nonce: already used: %w", bokat.ErrConflict)
	}
	return nil
}
