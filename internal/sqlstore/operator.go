package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"net/url"
	"strings"
	"time"

	"bokat"
	"bokat/internal/operator"
)

// The operator console's store: accounts, sessions, the audit log, and its
// views of bookings, providers, follow-up requests, webhooks and
// credentials.
var (
	_ operator.Store = Bound[operator.Tx]{}
	_ operator.Tx    = (*Tx)(nil)
)

// indexOperatorEmail is the blind index domain of operators' addresses.
const indexOperatorEmail = "operator-email"

func (db *DB) operatorEmailIndex(email string) (string, error) {
	v, err := db.contactVault()
	if err != nil {
		return "", err
	}
	return v.Index(indexOperatorEmail, NormaliseEmail(email)), nil
}

const operatorColumns = `id, email, key_id, invited_by, created_at, last_sign_in_at`

func (db *DB) scanOperator(row rowScanner) (operator.Operator, error) {
	var (
		o             operator.Operator
		sealed, keyID string
		created       int64
		last          sql.NullInt64
	)
	if err := row.Scan(&o.ID, &sealed, &keyID, &o.InvitedBy, &created, &last); err != nil {
		return operator.Operator{}, translate(err)
	}
	v, err := db.contactVault()
	if err != nil {
		return operator.Operator{}, err
	}
	if o.Email, err = v.openContact("operator_users", o.ID, "email", keyID, sealed); err != nil {
		return operator.Operator{}, err
	}
	o.CreatedAt, o.LastSignInAt = FromMillis(created), FromNullMillis(last)
	return o, nil
}

// OperatorSession returns the active operator of an unexpired session.
func (db *DB) OperatorSession(ctx context.Context, tokenHash string, now time.Time) (operator.Operator, error) {
	return db.scanOperator(db.read.QueryRowContext(ctx, `SELECT u.id, u.email, u.key_id, u.invited_by, u.created_at,
		u.last_sign_in_at FROM operator_sessions s JOIN operator_users u ON u.id = s.operator_id
		WHERE s.token_hash = $1 AND s.expires_at > $2 AND u.removed_at IS NULL`, tokenHash, Millis(now)))
}

// DeleteOperatorSession ends a session; an unknown one is no error.
func (db *DB) DeleteOperatorSession(ctx context.Context, tokenHash string) error {
	return db.InTx(ctx, func(tx *Tx) error {
		_, err := tx.tx.ExecContext(ctx, `DELETE FROM operator_sessions WHERE token_hash = $1`, tokenHash)
		return translate(err)
	})
}

// OperatorExists reports whether the address has an active operator
// account.
func (db *DB) OperatorExists(ctx context.Context, email string) (bool, error) {
	index, err := db.operatorEmailIndex(email)
	if err != nil {
		return false, err
	}
	var n int
	err = db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM operator_users WHERE email_index = $1 AND removed_at IS NULL`,
		index).Scan(&n)
	return n > 0, translate(err)
}

// ConsoleAudit returns the latest audit entries of an object, or of all
// when kind is "", newest first.
func (db *DB) ConsoleAudit(ctx context.Context, kind, id string, limit int) ([]operator.AuditEntry, error) {
	q := `SELECT id, at, actor, action, object_kind, object_id, details FROM operator_audit`
	args := []any{limit}
	if kind != "" {
		q += ` WHERE object_kind = $2 AND object_id = $3`
		args = append(args, kind, id)
	}
	rows, err := db.read.QueryContext(ctx, q+` ORDER BY at DESC, id DESC LIMIT $1`, args...)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []operator.AuditEntry
	for rows.Next() {
		var (
			e       operator.AuditEntry
			at      int64
			details string
		)
		if err := rows.Scan(&e.ID, &at, &e.Actor, &e.Action, &e.ObjectKind, &e.ObjectID, &details); err != nil {
			return nil, translate(err)
		}
		e.At = FromMillis(at)
		if err := json.Unmarshal([]byte(details), &e.Details); err != nil {
			// A row not written as a JSON object keeps its text.
			e.Details = map[string]string{"text": details}
		}
		out = append(out, e)
	}
	return out, translate(rows.Err())
}

// DeleteOperatorAuditBefore deletes, in one transaction, up to limit
// operator audit rows written before the instant (oldest first), and
// returns how many it deleted.
func (db *DB) DeleteOperatorAuditBefore(ctx context.Context, before time.Time, limit int) (int, error) {
	return db.execCounted(ctx, `DELETE FROM operator_audit WHERE id IN (
		SELECT id FROM operator_audit WHERE at < $1 ORDER BY at LIMIT $2)`, Millis(before), limit)
}

// AppendOperatorAudit records one operator action, its details as a JSON
// object of strings (as the credential lifecycle writes them).
func (tx *Tx) AppendOperatorAudit(ctx context.Context, e operator.AuditEntry) error {
	d := e.Details
	if d == nil {
		d = map[string]string{}
	}
	raw, err := json.Marshal(d)
	if err != nil {
		return err
	}
	_, err = tx.tx.ExecContext(ctx, `INSERT INTO operator_audit (id, at, actor, action, object_kind, object_id,
		details) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		e.ID, Millis(e.At), e.Actor, e.Action, e.ObjectKind, e.ObjectID, string(raw))
	return translate(err)
}

// ActiveOperatorByEmail returns the active operator account of the address.
func (tx *Tx) ActiveOperatorByEmail(ctx context.Context, email string) (operator.Operator, error) {
	index, err := tx.db.operatorEmailIndex(email)
	if err != nil {
		return operator.Operator{}, err
	}
	return tx.db.scanOperator(tx.tx.QueryRowContext(ctx, `SELECT `+operatorColumns+` FROM operator_users
		WHERE email_index = $1 AND removed_at IS NULL`, index))
}

// InsertOperator stores a new operator account, its address sealed.
func (tx *Tx) InsertOperator(ctx context.Context, o operator.Operator) error {
	v, err := tx.db.contactVault()
	if err != nil {
		return err
	}
	r := v.row("operator_users", o.ID)
	sealed, err := r.seal("email", o.Email)
	if err != nil {
		return err
	}
	_, err = tx.tx.ExecContext(ctx, `INSERT INTO operator_users (id, email, email_index, key_id, invited_by, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, o.ID, sealed, v.Index(indexOperatorEmail, NormaliseEmail(o.Email)), r.keyID,
		o.InvitedBy, Millis(o.CreatedAt))
	return translate(err)
}

// RecordOperatorSignIn records an operator's sign-in.
func (tx *Tx) RecordOperatorSignIn(ctx context.Context, id string, now time.Time) error {
	return affectedOne(tx.tx.ExecContext(ctx, `UPDATE operator_users SET last_sign_in_at = $2 WHERE id = $1`, id, Millis(now)))
}

// InsertOperatorSession stores a session under its keyed hash.
func (tx *Tx) InsertOperatorSession(ctx context.Context, tokenHash, operatorID string, created, expires time.Time) error {
	_, err := tx.tx.ExecContext(ctx, `INSERT INTO operator_sessions (token_hash, operator_id, created_at, expires_at)
		VALUES ($1, $2, $3, $4)`, tokenHash, operatorID, Millis(created), Millis(expires))
	return translate(err)
}

// OperatorBookingForUpdate returns a booking, locked.
func (tx *Tx) OperatorBookingForUpdate(ctx context.Context, id string) (bokat.Booking, error) {
	return scanBooking(tx.tx.QueryRowContext(ctx, `SELECT `+bookingColumns+` FROM bookings WHERE id = $1`+tx.forUpdate(), id))
}

func scanOperatorBooking(row rowScanner) (operator.Booking, error) {
	var (
		ack sql.NullInt64
		by  string
	)
	b, err := scanBooking(row, &ack, &by)
	if err != nil {
		return operator.Booking{}, err
	}
	return operator.Booking{Booking: b, AcknowledgedAt: FromNullMillis(ack), AcknowledgedBy: by}, nil
}

// FindBookings returns the bookings matching every set field of f, latest
// slot first. The e-mail is matched by its blind index.
func (db *DB) FindBookings(ctx context.Context, f operator.BookingFilter) ([]operator.Booking, error) {
	var (
		where []string
		args  []any
	)
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, strings.ReplaceAll(cond, "?", "$"+itoa(len(args))))
	}
	if f.ID != "" {
		add("(id = ? OR request_id = ?)", f.ID)
	}
	if f.ProviderID != "" {
		add("provider_id = ?", f.ProviderID)
	}
	if f.Status != "" {
		add("status = ?", f.Status)
	}
	if !f.From.IsZero() {
		add("slot_start_at >= ?", Millis(f.From))
	}
	if !f.To.IsZero() {
		add("slot_start_at < ?", Millis(f.To))
	}
	if f.Email != "" {
		v, err := db.contactVault()
		if err != nil {
			return nil, err
		}
		add("customer_email_index = ?", v.EmailIndex(f.Email))
	}
	q := `SELECT ` + providerBookingColumns + ` FROM bookings`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	args = append(args, f.Limit)
	q += ` ORDER BY slot_start_at DESC, id DESC LIMIT $` + itoa(len(args))
	rows, err := db.read.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []operator.Booking
	for rows.Next() {
		b, err := scanOperatorBooking(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, translate(rows.Err())
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// OperatorBooking returns a booking with its acknowledgement.
func (db *DB) OperatorBooking(ctx context.Context, id string) (operator.Booking, error) {
	return scanOperatorBooking(db.read.QueryRowContext(ctx, `SELECT `+providerBookingColumns+` FROM bookings WHERE id = $1`, id))
}

// BookingAddresses returns a booking's service and destination addresses.
func (db *DB) BookingAddresses(ctx context.Context, id string) (bokat.BookingContact, error) {
	var c bokat.BookingContact
	err := db.InTx(ctx, func(tx *Tx) error {
		var err error
		c, err = tx.BookingAddresses(ctx, id)
		return err
	})
	return c, err
}

// BookingStory returns a booking's events, messages and webhook
// deliveries, each oldest first.
func (db *DB) BookingStory(ctx context.Context, id string) (operator.Story, error) {
	var st operator.Story
	rows, err := db.read.QueryContext(ctx, `SELECT id, event_type, payload, occurred_at, relayed_at FROM outbox_events
		WHERE booking_id = $1 ORDER BY occurred_at, id`, id)
	if err != nil {
		return st, translate(err)
	}
	for rows.Next() {
		var (
			e        operator.Event
			payload  string
			occurred int64
			relayed  sql.NullInt64
		)
		if err := rows.Scan(&e.ID, &e.Type, &payload, &occurred, &relayed); err != nil {
			rows.Close()
			return st, translate(err)
		}
		var p struct {
			Data struct {
				Reason string `json:"reason"`
			} `json:"data"`
		}
		if json.Unmarshal([]byte(payload), &p) == nil {
			e.Reason = p.Data.Reason
		}
		e.OccurredAt, e.RelayedAt = FromMillis(occurred), FromNullMillis(relayed)
		st.Events = append(st.Events, e)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return st, translate(err)
	}
	rows, err = db.read.QueryContext(ctx, `SELECT id, event_type, recipient, status, attempts, last_error, created_at,
		updated_at FROM notification_jobs WHERE booking_id = $1 ORDER BY created_at, id`, id)
	if err != nil {
		return st, translate(err)
	}
	for rows.Next() {
		var (
			m                operator.Message
			created, updated int64
		)
		if err := rows.Scan(&m.ID, &m.EventType, &m.Recipient, &m.Status, &m.Attempts, &m.LastError, &created, &updated); err != nil {
			rows.Close()
			return st, translate(err)
		}
		m.CreatedAt, m.UpdatedAt = FromMillis(created), FromMillis(updated)
		st.Messages = append(st.Messages, m)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return st, translate(err)
	}
	rows, err = db.read.QueryContext(ctx, `SELECT d.id, d.endpoint_id, e.event_type, d.status, d.attempts,
		d.last_status_code, d.last_error, d.updated_at FROM webhook_deliveries d JOIN outbox_events e ON e.id = d.outbox_id
		WHERE e.booking_id = $1 ORDER BY d.created_at, d.id`, id)
	if err != nil {
		return st, translate(err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			d       operator.Delivery
			code    sql.NullInt64
			updated int64
		)
		if err := rows.Scan(&d.ID, &d.EndpointID, &d.EventType, &d.Status, &d.Attempts, &code, &d.LastError, &updated); err != nil {
			return st, translate(err)
		}
		d.LastStatusCode, d.UpdatedAt = int(code.Int64), FromMillis(updated)
		st.Deliveries = append(st.Deliveries, d)
	}
	return st, translate(rows.Err())
}

// ProviderHealth returns the providers q.ProviderIDs names, by name, with
// their people, message failures since the instant and calendar
// subscriptions; each query reads those providers' rows only, by index.
func (db *DB) ProviderHealth(ctx context.Context, q operator.HealthQuery) ([]operator.ProviderHealth, error) {
	since, staleBefore := q.FailuresSince, q.StaleBefore
	if len(q.ProviderIDs) == 0 {
		return nil, nil
	}
	only := stringArgs(q.ProviderIDs)
	onlyProvider := ` WHERE p.id IN (` + placeholders(3, len(only)) + `)`
	onlyBookingsOf := ` AND b.provider_id IN (` + placeholders(2, len(only)) + `)`
	onlyFeedsOf := ` WHERE provider_id IN (` + placeholders(1, len(only)) + `)`
	rows, err := db.read.QueryContext(ctx, `SELECT p.id, p.name, p.active, p.paused_until,
		(SELECT COUNT(*) FROM provider_users u WHERE u.provider_id = p.id AND u.removed_at IS NULL),
		(SELECT MAX(u.last_sign_in_at) FROM provider_users u WHERE u.provider_id = p.id),
		(SELECT COUNT(*) FROM provider_invitations i WHERE i.provider_id = p.id AND i.accepted_at IS NULL
		    AND i.revoked_at IS NULL AND i.expires_at > $2),
		(SELECT COUNT(*) FROM notification_jobs j JOIN bookings b ON b.id = j.booking_id
		    WHERE b.provider_id = p.id AND j.recipient = 'provider' AND j.status = 'failed' AND j.updated_at >= $1)
		FROM providers p`+onlyProvider+` ORDER BY p.name, p.id`, append([]any{Millis(since), Millis(q.Now)}, only...)...)
	if err != nil {
		return nil, translate(err)
	}
	var out []operator.ProviderHealth
	index := map[string]int{}
	for rows.Next() {
		var (
			h      operator.ProviderHealth
			paused int64
			last   sql.NullInt64
		)
		if err := rows.Scan(&h.ID, &h.Name, &h.Active, &paused, &h.Users, &last, &h.OpenInvitations, &h.MessageFailures); err != nil {
			rows.Close()
			return nil, translate(err)
		}
		if paused != 0 {
			h.PausedUntil = FromMillis(paused)
		}
		h.LastSignIn = FromNullMillis(last)
		index[h.ID] = len(out)
		out = append(out, h)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, translate(err)
	}
	rows, err = db.read.QueryContext(ctx, `SELECT b.provider_id, j.last_error FROM notification_jobs j
		JOIN bookings b ON b.id = j.booking_id WHERE j.recipient = 'provider' AND j.status = 'failed' AND j.updated_at >= $1
		`+onlyBookingsOf+` ORDER BY j.updated_at, j.id`, append([]any{Millis(since)}, only...)...)
	if err != nil {
		return nil, translate(err)
	}
	for rows.Next() {
		var id, msg string
		if err := rows.Scan(&id, &msg); err != nil {
			rows.Close()
			return nil, translate(err)
		}
		if i, ok := index[id]; ok {
			out[i].LastMessageError = msg
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, translate(err)
	}
	rows, err = db.read.QueryContext(ctx, `SELECT id, provider_id, label, last_synced_at, last_error, failing_since
		FROM calendar_feeds`+onlyFeedsOf+` ORDER BY created_at, id`, only...)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			f              operator.FeedHealth
			pid            string
			synced, failed sql.NullInt64
		)
		if err := rows.Scan(&f.ID, &pid, &f.Label, &synced, &f.LastError, &failed); err != nil {
			return nil, translate(err)
		}
		f.LastSyncedAt, f.FailingSince = FromNullMillis(synced), FromNullMillis(failed)
		f.Stale = failed.Valid && !f.FailingSince.After(staleBefore)
		if i, ok := index[pid]; ok {
			out[i].Feeds = append(out[i].Feeds, f)
		}
	}
	return out, translate(rows.Err())
}

// ProviderBriefs returns every provider's brief by name and id: three
// reads of small results (the providers' own rows, the providers with a
// message failed since the instant, by the failed jobs' partial index, and
// those with a failing calendar, by the failing feeds' one).
func (db *DB) ProviderBriefs(ctx context.Context, failuresSince time.Time) ([]operator.ProviderBrief, error) {
	failed, err := db.providerSet(ctx, `SELECT DISTINCT b.provider_id FROM notification_jobs j JOIN bookings b ON b.id = j.booking_id
		WHERE j.status = 'failed' AND j.updated_at >= $1 AND j.recipient = 'provider'`, Millis(failuresSince))
	if err != nil {
		return nil, err
	}
	failing, err := db.providerSet(ctx, `SELECT DISTINCT provider_id FROM calendar_feeds WHERE failing_since IS NOT NULL`)
	if err != nil {
		return nil, err
	}
	rows, err := db.read.QueryContext(ctx, `SELECT id, name, active, paused_until FROM providers ORDER BY name, id`)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []operator.ProviderBrief
	for rows.Next() {
		var (
			b      operator.ProviderBrief
			paused int64
		)
		if err := rows.Scan(&b.ID, &b.Name, &b.Active, &paused); err != nil {
			return nil, translate(err)
		}
		b.Paused, b.MessageFailed, b.CalendarFailing = paused != 0, failed[b.ID], failing[b.ID]
		out = append(out, b)
	}
	return out, translate(rows.Err())
}

// providerSet returns the provider ids the query reads, as a set.
func (db *DB) providerSet(ctx context.Context, query string, args ...any) (map[string]bool, error) {
	rows, err := db.read.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	set := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, translate(err)
		}
		set[id] = true
	}
	return set, translate(rows.Err())
}

// FollowUps returns the latest follow-up requests, newest first (as they
// reached the server), with their candidates.
func (db *DB) FollowUps(ctx context.Context, uncovered bool, limit int) ([]operator.FollowUp, error) {
	q := `SELECT id, created_at, vertical_id, job_type_id, postcode, status, mode, candidate_count FROM follow_up_requests`
	if uncovered {
		q += ` WHERE candidate_count = 0`
	}
	// Newest first by id: a request id is a UUIDv7 of the server's clock,
	// while a test request's created_at is its owner's test clock, which
	// may stand months ahead and would keep it on top.
	rows, err := db.read.QueryContext(ctx, q+` ORDER BY id DESC LIMIT $1`, limit)
	if err != nil {
		return nil, translate(err)
	}
	var out []operator.FollowUp
	index := map[string]int{}
	for rows.Next() {
		var (
			f       operator.FollowUp
			created int64
		)
		if err := rows.Scan(&f.ID, &created, &f.VerticalID, &f.JobTypeID, &f.Postcode, &f.Status, &f.Mode, &f.CandidateCount); err != nil {
			rows.Close()
			return nil, translate(err)
		}
		f.CreatedAt = FromMillis(created)
		index[f.ID] = len(out)
		out = append(out, f)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(out) == 0 {
		return out, translate(err)
	}
	// The candidates of the requests shown: those created since the
	// oldest of them.
	rows, err = db.read.QueryContext(ctx, `SELECT c.request_id, c.provider_id, c.notification_status, c.notified_at
		FROM follow_up_request_candidates c JOIN follow_up_requests r ON r.id = c.request_id
		WHERE r.created_at >= $1 ORDER BY c.request_id, c.provider_id`, Millis(out[len(out)-1].CreatedAt))
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id       string
			c        operator.FollowUpCandidate
			notified sql.NullInt64
		)
		if err := rows.Scan(&id, &c.ProviderID, &c.Status, &notified); err != nil {
			return nil, translate(err)
		}
		c.NotifiedAt = FromNullMillis(notified)
		if i, ok := index[id]; ok {
			out[i].Candidates = append(out[i].Candidates, c)
		}
	}
	return out, translate(rows.Err())
}

// FollowUpExists reports whether a follow-up request exists.
func (tx *Tx) FollowUpExists(ctx context.Context, id string) (bool, error) {
	var n int
	err := tx.tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM follow_up_requests WHERE id = $1`, id).Scan(&n)
	return n > 0, translate(err)
}

// FailingEndpoints returns the webhook endpoints that are disabled, or
// whose deliveries failed since the instant or are being retried.
func (db *DB) FailingEndpoints(ctx context.Context, since time.Time) ([]operator.Endpoint, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT * FROM (SELECT e.id, e.owner_client_id, e.owner_user_id, e.url, e.mode,
		e.disabled_at, e.disabled_reason,
		(SELECT COUNT(*) FROM webhook_deliveries d WHERE d.endpoint_id = e.id AND d.status = 'failed' AND d.updated_at >= $1) AS failed,
		(SELECT COUNT(*) FROM webhook_deliveries d WHERE d.endpoint_id = e.id AND d.status = 'pending' AND d.attempts > 0) AS retrying
		FROM webhook_endpoints e WHERE e.deleted_at IS NULL) x
		WHERE x.disabled_at IS NOT NULL OR x.failed > 0 OR x.retrying > 0 ORDER BY x.id`, Millis(since))
	if err != nil {
		return nil, translate(err)
	}
	var out []operator.Endpoint
	index := map[string]int{}
	for rows.Next() {
		var (
			e        operator.Endpoint
			raw      string
			disabled sql.NullInt64
		)
		if err := rows.Scan(&e.ID, &e.OwnerClientID, &e.OwnerUserID, &raw, &e.Mode, &disabled, &e.DisabledReason, &e.Failed, &e.Retrying); err != nil {
			rows.Close()
			return nil, translate(err)
		}
		if u, err := url.Parse(raw); err == nil {
			e.Host = u.Host
		}
		e.DisabledAt = FromNullMillis(disabled)
		index[e.ID] = len(out)
		out = append(out, e)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(out) == 0 {
		return out, translate(err)
	}
	// The latest failed attempt of each: its status code and error.
	rows, err = db.read.QueryContext(ctx, `SELECT d.endpoint_id, d.last_status_code, d.last_error, d.updated_at
		FROM webhook_deliveries d WHERE d.status IN ('failed', 'pending') AND d.attempts > 0 AND d.updated_at >= $1
		ORDER BY d.updated_at, d.id`, Millis(since))
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id, msg string
			code    sql.NullInt64
			at      int64
		)
		if err := rows.Scan(&id, &code, &msg, &at); err != nil {
			return nil, translate(err)
		}
		if i, ok := index[id]; ok {
			out[i].LastStatusCode, out[i].LastError, out[i].LastFailureAt = int(code.Int64), msg, FromMillis(at)
		}
	}
	return out, translate(rows.Err())
}

// Credentials returns the partner credentials, then the OAuth clients,
// each newest first; no secret or hash.
func (db *DB) Credentials(ctx context.Context) ([]operator.Credential, error) {
	var out []operator.Credential
	for _, q := range []struct{ kind, query string }{
		{"partner", `SELECT id, name, scopes, mode, '', created_at, revoked_at FROM partner_clients ORDER BY created_at DESC, id`},
		{"oauth", `SELECT id, name, scopes, mode, registration, created_at, revoked_at FROM oauth_clients ORDER BY created_at DESC, id`},
	} {
		rows, err := db.read.QueryContext(ctx, q.query)
		if err != nil {
			return nil, translate(err)
		}
		for rows.Next() {
			var (
				c       = operator.Credential{Kind: q.kind}
				created int64
				revoked sql.NullInt64
			)
			if err := rows.Scan(&c.ID, &c.Name, &c.Scopes, &c.Mode, &c.Registration, &created, &revoked); err != nil {
				rows.Close()
				return nil, translate(err)
			}
			c.CreatedAt, c.RevokedAt = FromMillis(created), FromNullMillis(revoked)
			out = append(out, c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, translate(err)
		}
	}
	return out, nil
}
