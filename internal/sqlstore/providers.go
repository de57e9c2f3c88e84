package sqlstore

import (
	"context"
	"database/sql"
	"time"

	"bokat"
	"bokat/internal/provider"
)

// The provider side's store: accounts, invitations, sessions, audit, and
// its view of bookings.
var (
	_ provider.Store = Bound[provider.Tx]{}
	_ provider.Tx    = (*Tx)(nil)
)

// indexProviderEmail is the blind index domain of provider users'
// addresses.
const indexProviderEmail = "provider-user-email"

// sealProviderEmail seals a provider user's or invitation's address and
// returns the sealed value, its key id and blind index.
func (db *DB) sealProviderEmail(table, id, email string) (sealed, keyID, index string, err error) {
	v, err := db.contactVault()
	if err != nil {
		return "", "", "", err
	}
	r := v.row(table, id)
	sealed, err = r.seal("email", email)
	return sealed, r.keyID, v.Index(indexProviderEmail, NormaliseEmail(email)), err
}

func (db *DB) providerEmailIndex(email string) (string, error) {
	v, err := db.contactVault()
	if err != nil {
		return "", err
	}
	return v.Index(indexProviderEmail, NormaliseEmail(email)), nil
}

func (db *DB) openProviderEmail(table, id, keyID, sealed string) (string, error) {
	v, err := db.contactVault()
	if err != nil {
		return "", err
	}
	return v.openContact(table, id, "email", keyID, sealed)
}

const providerUserColumns = `id, provider_id, email, key_id, role, invited_by, created_at`

func (db *DB) scanProviderUser(row rowScanner) (provider.User, error) {
	var (
		u             provider.User
		sealed, keyID string
		role          string
		created       int64
	)
	if err := row.Scan(&u.ID, &u.ProviderID, &sealed, &keyID, &role, &u.InvitedBy, &created); err != nil {
		return provider.User{}, translate(err)
	}
	email, err := db.openProviderEmail("provider_users", u.ID, keyID, sealed)
	if err != nil {
		return provider.User{}, err
	}
	u.Email, u.Role, u.CreatedAt = email, provider.Role(role), FromMillis(created)
	return u, nil
}

const invitationColumns = `id, provider_id, email, key_id, role, invited_by, created_at, expires_at`

func (db *DB) scanInvitation(row rowScanner) (provider.Invitation, error) {
	var (
		inv              provider.Invitation
		sealed, keyID    string
		role             string
		created, expires int64
	)
	if err := row.Scan(&inv.ID, &inv.ProviderID, &sealed, &keyID, &role, &inv.InvitedBy, &created, &expires); err != nil {
		return provider.Invitation{}, translate(err)
	}
	email, err := db.openProviderEmail("provider_invitations", inv.ID, keyID, sealed)
	if err != nil {
		return provider.Invitation{}, err
	}
	inv.Email, inv.Role = email, provider.Role(role)
	inv.CreatedAt, inv.ExpiresAt = FromMillis(created), FromMillis(expires)
	return inv, nil
}

// ProviderSessionUser returns the active user of an unexpired session.
func (db *DB) ProviderSessionUser(ctx context.Context, tokenHash string, now time.Time) (provider.User, error) {
	return db.scanProviderUser(db.read.QueryRowContext(ctx, `SELECT u.id, u.provider_id, u.email, u.key_id, u.role,
		u.invited_by, u.created_at FROM provider_sessions s JOIN provider_users u ON u.id = s.user_id
		WHERE s.token_hash = $1 AND s.expires_at > $2 AND u.removed_at IS NULL`, tokenHash, Millis(now)))
}

// DeleteProviderSession ends a session; an unknown one is no error.
func (db *DB) DeleteProviderSession(ctx context.Context, tokenHash string) error {
	return db.InTx(ctx, func(tx *Tx) error {
		_, err := tx.tx.ExecContext(ctx, `DELETE FROM provider_sessions WHERE token_hash = $1`, tokenHash)
		return translate(err)
	})
}

// ProviderAccountExists reports whether the address has an active account
// or an invitation open at now.
func (db *DB) ProviderAccountExists(ctx context.Context, email string, now time.Time) (bool, error) {
	index, err := db.providerEmailIndex(email)
	if err != nil {
		return false, err
	}
	var n int
	err = db.read.QueryRowContext(ctx, `SELECT
		(SELECT COUNT(*) FROM provider_users WHERE email_index = $1 AND removed_at IS NULL) +
		(SELECT COUNT(*) FROM provider_invitations WHERE email_index = $1 AND expires_at > $2
		    AND accepted_at IS NULL AND revoked_at IS NULL)`, index, Millis(now)).Scan(&n)
	return n > 0, translate(err)
}

// providerBookingColumns are bookingColumns with the acknowledgement.
const providerBookingColumns = bookingColumns + `, provider_acknowledged_at, provider_acknowledged_by`

func scanProviderBooking(row rowScanner) (provider.Booking, error) {
	var (
		ack sql.NullInt64
		by  string
	)
	b, err := scanBooking(row, &ack, &by)
	if err != nil {
		return provider.Booking{}, err
	}
	return provider.Booking{Booking: b, AcknowledgedAt: FromNullMillis(ack), AcknowledgedBy: by}, nil
}

// ProviderBookingList returns at most limit of the provider's upcoming
// (slot ending after now, by start) or past (latest first) bookings that
// come after the booking after in that order (empty: from the first); an
// after that is not a booking of the provider is bokat.ErrNotFound.
func (db *DB) ProviderBookingList(ctx context.Context, providerID string, now time.Time, past bool, after string,
	limit int) ([]provider.Booking, error) {
	where, order, beyond := `slot_end_at > $2`, `slot_start_at, id`, `(slot_start_at > $4 OR (slot_start_at = $4 AND id > $5))`
	if past {
		where, order, beyond = `slot_end_at <= $2`, `slot_start_at DESC, id DESC`, `(slot_start_at < $4 OR (slot_start_at = $4 AND id < $5))`
	}
	q := `SELECT ` + providerBookingColumns + ` FROM bookings WHERE provider_id = $1 AND ` + where
	args := []any{providerID, Millis(now), limit}
	if after != "" {
		var start int64
		err := db.read.QueryRowContext(ctx, `SELECT slot_start_at FROM bookings WHERE id = $1 AND provider_id = $2`,
			after, providerID).Scan(&start)
		if err != nil {
			return nil, translate(err)
		}
		q += ` AND ` + beyond
		args = append(args, start, after)
	}
	rows, err := db.read.QueryContext(ctx, q+` ORDER BY `+order+` LIMIT $3`, args...)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []provider.Booking
	for rows.Next() {
		b, err := scanProviderBooking(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, translate(rows.Err())
}

// ProviderUsers returns the provider's active users by creation.
func (db *DB) ProviderUsers(ctx context.Context, providerID string) ([]provider.User, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+providerUserColumns+` FROM provider_users
		WHERE provider_id = $1 AND removed_at IS NULL ORDER BY created_at, id`, providerID)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []provider.User
	for rows.Next() {
		u, err := db.scanProviderUser(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, translate(rows.Err())
}

// OpenInvitations returns the provider's invitations open at now.
func (db *DB) OpenInvitations(ctx context.Context, providerID string, now time.Time) ([]provider.Invitation, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+invitationColumns+` FROM provider_invitations
		WHERE provider_id = $1 AND expires_at > $2 AND accepted_at IS NULL AND revoked_at IS NULL
		ORDER BY created_at, id`, providerID, Millis(now))
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []provider.Invitation
	for rows.Next() {
		inv, err := db.scanInvitation(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, inv)
	}
	return out, translate(rows.Err())
}

// ProviderAudit returns the provider's latest audit entries, newest first.
func (db *DB) ProviderAudit(ctx context.Context, providerID string, limit int) ([]provider.AuditEntry, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT id, provider_id, actor, at, action, object_type, object_id, note
		FROM provider_audit WHERE provider_id = $1 ORDER BY at DESC, id DESC LIMIT $2`, providerID, limit)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []provider.AuditEntry
	for rows.Next() {
		var (
			e  provider.AuditEntry
			at int64
		)
		if err := rows.Scan(&e.ID, &e.ProviderID, &e.Actor, &at, &e.Action, &e.ObjectType, &e.ObjectID, &e.Note); err != nil {
			return nil, translate(err)
		}
		e.At = FromMillis(at)
		out = append(out, e)
	}
	return out, translate(rows.Err())
}

// ActiveProviderUserByEmail returns the active account of the address.
func (tx *Tx) ActiveProviderUserByEmail(ctx context.Context, email string) (provider.User, error) {
	index, err := tx.db.providerEmailIndex(email)
	if err != nil {
		return provider.User{}, err
	}
	return tx.db.scanProviderUser(tx.tx.QueryRowContext(ctx, `SELECT `+providerUserColumns+` FROM provider_users
		WHERE email_index = $1 AND removed_at IS NULL`, index))
}

// OpenInvitationByEmail returns the latest invitation of the address open
// at now.
func (tx *Tx) OpenInvitationByEmail(ctx context.Context, email string, now time.Time) (provider.Invitation, error) {
	index, err := tx.db.providerEmailIndex(email)
	if err != nil {
		return provider.Invitation{}, err
	}
	return tx.db.scanInvitation(tx.tx.QueryRowContext(ctx, `SELECT `+invitationColumns+` FROM provider_invitations
		WHERE email_index = $1 AND expires_at > $2 AND accepted_at IS NULL AND revoked_at IS NULL
		ORDER BY created_at DESC, id DESC LIMIT 1`, index, Millis(now)))
}

// InsertProviderUser stores a new account, its address sealed; an address
// with an active account fails with bokat.ErrConflict.
func (tx *Tx) InsertProviderUser(ctx context.Context, u provider.User) error {
	sealed, keyID, index, err := tx.db.sealProviderEmail("provider_users", u.ID, u.Email)
	if err != nil {
		return err
	}
	_, err = tx.tx.ExecContext(ctx, `INSERT INTO provider_users (id, provider_id, email, email_index, key_id, role,
		invited_by, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		u.ID, u.ProviderID, sealed, index, keyID, string(u.Role), u.InvitedBy, Millis(u.CreatedAt))
	return translate(err)
}

// CloseInvitation marks an open invitation of the provider accepted or
// withdrawn and erases its address: the account, if any, holds it now.
func (tx *Tx) CloseInvitation(ctx context.Context, providerID, id string, accepted bool, now time.Time) error {
	column := "revoked_at"
	if accepted {
		column = "accepted_at"
	}
	return affectedOne(tx.tx.ExecContext(ctx, `UPDATE provider_invitations SET `+column+` = $3, email = '', email_index = ''
		WHERE id = $1 AND provider_id = $2 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > $3`,
		id, providerID, Millis(now)))
}

// EraseExpiredInvitationAddresses erases, in one transaction, the address
// (sealed value and blind index) of up to limit invitations that expired at
// or before now without being accepted or withdrawn (those lost theirs
// then), and returns how many it erased. The rows stay, ids and times
// with them, for the audit trail that names them; an invitation with its
// address erased finds nobody and opens nothing.
func (db *DB) EraseExpiredInvitationAddresses(ctx context.Context, now time.Time, limit int) (int, error) {
	return db.execCounted(ctx, `UPDATE provider_invitations SET email = '', email_index = ''
		WHERE id IN (SELECT id FROM provider_invitations WHERE expires_at <= $1 AND email <> '' LIMIT $2)`, Millis(now), limit)
}

// InsertInvitation stores an invitation, its address sealed.
func (tx *Tx) InsertInvitation(ctx context.Context, inv provider.Invitation) error {
	sealed, keyID, index, err := tx.db.sealProviderEmail("provider_invitations", inv.ID, inv.Email)
	if err != nil {
		return err
	}
	_, err = tx.tx.ExecContext(ctx, `INSERT INTO provider_invitations (id, provider_id, email, email_index, key_id,
		role, invited_by, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		inv.ID, inv.ProviderID, sealed, index, keyID, string(inv.Role), inv.InvitedBy, Millis(inv.CreatedAt),
		Millis(inv.ExpiresAt))
	return translate(err)
}

// RecordProviderSignIn records a user's sign-in.
func (tx *Tx) RecordProviderSignIn(ctx context.Context, userID string, now time.Time) error {
	return affectedOne(tx.tx.ExecContext(ctx, `UPDATE provider_users SET last_sign_in_at = $2 WHERE id = $1`,
		userID, Millis(now)))
}

// InsertProviderSession stores a session under its keyed hash.
func (tx *Tx) InsertProviderSession(ctx context.Context, tokenHash, userID string, created, expires time.Time) error {
	_, err := tx.tx.ExecContext(ctx, `INSERT INTO provider_sessions (token_hash, user_id, created_at, expires_at)
		VALUES ($1, $2, $3, $4)`, tokenHash, userID, Millis(created), Millis(expires))
	return translate(err)
}

// ProviderUserForUpdate returns an active user of the provider, locked.
func (tx *Tx) ProviderUserForUpdate(ctx context.Context, providerID, userID string) (provider.User, error) {
	return tx.db.scanProviderUser(tx.tx.QueryRowContext(ctx, `SELECT `+providerUserColumns+` FROM provider_users
		WHERE id = $1 AND provider_id = $2 AND removed_at IS NULL`+tx.forUpdate(), userID, providerID))
}

// RemoveProviderUser marks the user removed, erases their address (the id
// stays for the audit trail) and ends their sessions.
func (tx *Tx) RemoveProviderUser(ctx context.Context, userID string, now time.Time) error {
	if err := affectedOne(tx.tx.ExecContext(ctx, `UPDATE provider_users SET removed_at = $2, email = '', email_index = ''
		WHERE id = $1 AND removed_at IS NULL`, userID, Millis(now))); err != nil {
		return err
	}
	_, err := tx.tx.ExecContext(ctx, `DELETE FROM provider_sessions WHERE user_id = $1`, userID)
	return translate(err)
}

// InsertProviderAudit records one write.
func (tx *Tx) InsertProviderAudit(ctx context.Context, e provider.AuditEntry) error {
	_, err := tx.tx.ExecContext(ctx, `INSERT INTO provider_audit (id, provider_id, actor, at, action, object_type,
		object_id, note) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		e.ID, e.ProviderID, e.Actor, Millis(e.At), e.Action, e.ObjectType, e.ObjectID, e.Note)
	return translate(err)
}

// ProviderBookingForUpdate returns a booking of the provider, locked.
func (tx *Tx) ProviderBookingForUpdate(ctx context.Context, providerID, bookingID string) (provider.Booking, error) {
	return scanProviderBooking(tx.tx.QueryRowContext(ctx, `SELECT `+providerBookingColumns+` FROM bookings
		WHERE id = $1 AND provider_id = $2`+tx.forUpdate(), bookingID, providerID))
}

// BookingContact opens the customer's contact data of a booking.
func (tx *Tx) BookingContact(ctx context.Context, bookingID string) (bokat.BookingContact, error) {
	_, plain, err := tx.bookingSecrets(ctx, bookingID)
	if err != nil {
		return bokat.BookingContact{}, err
	}
	return plain.Contact, nil
}

// AcknowledgeBooking records the acknowledgement of a confirmed booking and
// marks the provider's confirmation status sent: the provider has it.
func (tx *Tx) AcknowledgeBooking(ctx context.Context, bookingID, userID string, now time.Time) error {
	return affectedOne(tx.tx.ExecContext(ctx, `UPDATE bookings SET provider_acknowledged_at = $2,
		provider_acknowledged_by = $3, provider_confirmation_status = 'sent'
		WHERE id = $1 AND status = 'confirmed' AND provider_acknowledged_at IS NULL`, bookingID, Millis(now), userID))
}
