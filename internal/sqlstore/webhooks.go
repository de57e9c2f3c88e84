package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"bokat"
	"bokat/internal/outbox"
	"bokat/internal/webhook"
)

var (
	_ outbox.Tx            = (*Tx)(nil)
	_ outbox.Store         = Bound[outbox.Tx]{}
	_ outbox.DeliveryStore = (*DB)(nil)
	_ webhook.Tx           = (*Tx)(nil)
	_ webhook.Store        = Bound[webhook.Tx]{}
)

const endpointColumns = `id, owner_client_id, owner_user_id, url, event_types, signing_key_id, secret_key_id,
	secret_ciphertext, disabled_at, disabled_reason, created_at, updated_at, previous_secret_expires_at`

func scanEndpoint(row interface{ Scan(...any) error }) (webhook.Endpoint, error) {
	var (
		e                webhook.Endpoint
		types            string
		disabled         sql.NullInt64
		created, updated int64
		previousExpiry   sql.NullInt64
	)
	err := row.Scan(&e.ID, &e.OwnerClientID, &e.OwnerUserID, &e.URL, &types, &e.SigningKeyID, &e.SecretKeyID,
		&e.SecretCiphertext, &disabled, &e.DisabledReason, &created, &updated, &previousExpiry)
	if err != nil {
		return webhook.Endpoint{}, translate(err)
	}
	e.EventTypes = strings.Fields(types)
	e.DisabledAt = FromNullMillis(disabled)
	e.CreatedAt = FromMillis(created)
	e.UpdatedAt = FromMillis(updated)
	e.PreviousSecretExpiresAt = FromNullMillis(previousExpiry)
	return e, nil
}

// InsertWebhookEndpoint stores a new endpoint unless its owner already has
// limit endpoints (not deleted), in which case it returns
// webhook.ErrEndpointLimit. Registrations of one owner are serialised so the
// limit holds under concurrency on both engines.
func (tx *Tx) InsertWebhookEndpoint(ctx context.Context, e webhook.Endpoint, limit int) error {
	if tx.engine == Postgres {
		if _, err := tx.tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 74260040))`,
			e.OwnerClientID+" "+e.OwnerUserID); err != nil {
			return translate(err)
		}
	}
	var n int
	err := tx.tx.QueryRowContext(ctx,
		`SELECT COUNT(*) FROM webhook_endpoints WHERE owner_client_id = $1 AND owner_user_id = $2 AND deleted_at IS NULL`,
		e.OwnerClientID, e.OwnerUserID).Scan(&n)
	if err != nil {
		return translate(err)
	}
	if n >= limit {
		return webhook.ErrEndpointLimit
	}
	_, err = tx.tx.ExecContext(ctx,
		`INSERT INTO webhook_endpoints (id, owner_client_id, owner_user_id, url, event_types, signing_key_id,
		        secret_key_id, secret_ciphertext, disabled_at, disabled_reason, created_at, updated_at, mode)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
		e.ID, e.OwnerClientID, e.OwnerUserID, e.URL, strings.Join(e.EventTypes, " "), e.SigningKeyID,
		e.SecretKeyID, e.SecretCiphertext, NullMillis(e.DisabledAt), e.DisabledReason, Millis(e.CreatedAt), Millis(e.UpdatedAt),
		string(e.Mode.Or()))
	return translate(err)
}

// WebhookEndpoints returns the owner's endpoints that are not deleted,
// oldest first.
func (db *DB) WebhookEndpoints(ctx context.Context, clientID, userID string) ([]webhook.Endpoint, error) {
	return queryEndpoints(ctx, db.read,
		`SELECT `+endpointColumns+` FROM webhook_endpoints
		  WHERE owner_client_id = $1 AND owner_user_id = $2 AND deleted_at IS NULL
		  ORDER BY created_at, id`, clientID, userID)
}

// WebhookEndpoint returns the endpoint with the id, deleted or not, or
// bokat.ErrNotFound. It is meant for operators and tests; API code looks
// endpoints up through their owner.
func (db *DB) WebhookEndpoint(ctx context.Context, id string) (webhook.Endpoint, error) {
	return scanEndpoint(db.read.QueryRowContext(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints WHERE id = $1`, id))
}

// SubscribedWebhookEndpointIDs returns the ids of the owner's enabled, not
// deleted endpoints subscribed to the event type, oldest first.
func (tx *Tx) SubscribedWebhookEndpointIDs(ctx context.Context, clientID, userID, eventType string) ([]string, error) {
	all, err := queryEndpoints(ctx, tx.tx,
		`SELECT `+endpointColumns+` FROM webhook_endpoints
		  WHERE owner_client_id = $1 AND owner_user_id = $2 AND deleted_at IS NULL AND disabled_at IS NULL
		  ORDER BY created_at, id`, clientID, userID)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range all {
		for _, t := range e.EventTypes {
			if t == eventType {
				out = append(out, e.ID)
				break
			}
		}
	}
	return out, nil
}

func queryEndpoints(ctx context.Context, q Reader, query string, args ...any) ([]webhook.Endpoint, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []webhook.Endpoint
	for rows.Next() {
		e, err := scanEndpoint(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, translate(rows.Err())
}

// DeleteWebhookEndpoint deletes the owner's endpoint and cancels its pending
// deliveries. It returns bokat.ErrNotFound when the owner has no such
// endpoint (unknown, another owner's, or already deleted). The row is kept,
// marked deleted, so the history of its deliveries stays readable.
func (tx *Tx) DeleteWebhookEndpoint(ctx context.Context, clientID, userID, id string, now time.Time) error {
	res, err := tx.tx.ExecContext(ctx,
		`UPDATE webhook_endpoints SET deleted_at = $1, updated_at = $1
		  WHERE id = $2 AND owner_client_id = $3 AND owner_user_id = $4 AND deleted_at IS NULL`,
		Millis(now), id, clientID, userID)
	if err != nil {
		return translate(err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return translate(err)
	} else if n == 0 {
		return fmt.Errorf("webhook endpoint %s: %w", id, bokat.ErrNotFound)
	}
	return tx.cancelPendingDeliveries(ctx, id, "", "endpoint deleted", now)
}

// SetWebhookEndpointEnabled enables or disables the owner's endpoint and
// returns it. Disabling records reason and cancels its pending deliveries;
// enabling clears the disabled state, whatever disabled it (its owner, or
// a 410 answer). Both are idempotent: an endpoint already in the state is
// returned unchanged. It returns bokat.ErrNotFound when the owner has no
// such endpoint (unknown, another owner's, or deleted).
func (tx *Tx) SetWebhookEndpointEnabled(ctx context.Context, clientID, userID, id string, enabled bool, reason string, now time.Time) (webhook.Endpoint, error) {
	var (
		res sql.Result
		err error
	)
	if enabled {
		res, err = tx.tx.ExecContext(ctx,
			`UPDATE webhook_endpoints SET disabled_at = NULL, disabled_reason = '', updated_at = $1
			  WHERE id = $2 AND owner_client_id = $3 AND owner_user_id = $4 AND deleted_at IS NULL AND disabled_at IS NOT NULL`,
			Millis(now), id, clientID, userID)
	} else {
		res, err = tx.tx.ExecContext(ctx,
			`UPDATE webhook_endpoints SET disabled_at = $1, disabled_reason = $2, updated_at = $1
			  WHERE id = $3 AND owner_client_id = $4 AND owner_user_id = $5 AND deleted_at IS NULL AND disabled_at IS NULL`,
			Millis(now), reason, id, clientID, userID)
	}
	if err != nil {
		return webhook.Endpoint{}, translate(err)
	}
	changed, err := res.RowsAffected()
	if err != nil {
		return webhook.Endpoint{}, translate(err)
	}
	e, err := scanEndpoint(tx.tx.QueryRowContext(ctx,
		`SELECT `+endpointColumns+` FROM webhook_endpoints
		  WHERE id = $1 AND owner_client_id = $2 AND owner_user_id = $3 AND deleted_at IS NULL`, id, clientID, userID))
	if errors.Is(err, bokat.ErrNotFound) {
		return webhook.Endpoint{}, fmt.Errorf("webhook endpoint %s: %w", id, bokat.ErrNotFound)
	}
	if err != nil {
		return webhook.Endpoint{}, err
	}
	if changed > 0 && !enabled {
		if err := tx.cancelPendingDeliveries(ctx, id, "", "endpoint disabled: "+reason, now); err != nil {
			return webhook.Endpoint{}, err
		}
	}
	return e, nil
}

// RotateWebhookEndpointSecret gives the owner's endpoint the new secret and
// keeps the one it replaces, still sealed, as its previous secret until
// r.PreviousUntil; a previous secret kept from an earlier rotation is
// dropped. It returns the endpoint, or bokat.ErrNotFound when the owner has
// no such endpoint (unknown, another owner's, or deleted).
func (tx *Tx) RotateWebhookEndpointSecret(ctx context.Context, clientID, userID, id string, r webhook.SecretRotation) (webhook.Endpoint, error) {
	res, err := tx.tx.ExecContext(ctx,
		`UPDATE webhook_endpoints
		    SET previous_secret_key_id = secret_key_id, previous_secret_ciphertext = secret_ciphertext,
		        previous_secret_expires_at = $1, signing_key_id = $2, secret_key_id = $3, secret_ciphertext = $4,
		        updated_at = $5
		  WHERE id = $6 AND owner_client_id = $7 AND owner_user_id = $8 AND deleted_at IS NULL`,
		Millis(r.PreviousUntil), r.SigningKeyID, r.SecretKeyID, r.SecretCiphertext, Millis(r.Now), id, clientID, userID)
	if err != nil {
		return webhook.Endpoint{}, translate(err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return webhook.Endpoint{}, translate(err)
	} else if n == 0 {
		return webhook.Endpoint{}, fmt.Errorf("webhook endpoint %s: %w", id, bokat.ErrNotFound)
	}
	return scanEndpoint(tx.tx.QueryRowContext(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints WHERE id = $1`, id))
}

// cancelPendingDeliveries cancels the endpoint's pending deliveries, except
// the one with id except.
func (tx *Tx) cancelPendingDeliveries(ctx context.Context, endpointID, except, reason string, now time.Time) error {
	_, err := tx.tx.ExecContext(ctx,
		`UPDATE webhook_deliveries
		    SET status = 'cancelled', last_error = $1, finished_at = $2, updated_at = $2, locked_until = NULL, lease_token = NULL
		  WHERE endpoint_id = $3 AND status = 'pending' AND id <> $4`,
		reason, Millis(now), endpointID, except)
	return translate(err)
}

const outboxColumns = `id, owner_client_id, owner_user_id, booking_id, event_type, payload, occurred_at, created_at`

func scanOutboxEvent(row interface{ Scan(...any) error }) (outbox.Event, error) {
	var (
		e                 outbox.Event
		payload           string
		occurred, created int64
	)
	if err := row.Scan(&e.ID, &e.OwnerClientID, &e.OwnerUserID, &e.BookingID, &e.EventType, &payload, &occurred, &created); err != nil {
		return outbox.Event{}, translate(err)
	}
	e.Payload = []byte(payload)
	e.OccurredAt = FromMillis(occurred)
	e.CreatedAt = FromMillis(created)
	return e, nil
}

// OwnedOutboxEvent returns the outbox event with the id when it belongs to
// the owner, or bokat.ErrNotFound.
func (tx *Tx) OwnedOutboxEvent(ctx context.Context, clientID, userID, id string) (outbox.Event, error) {
	return scanOutboxEvent(tx.tx.QueryRowContext(ctx,
		`SELECT `+outboxColumns+` FROM outbox_events WHERE id = $1 AND owner_client_id = $2 AND owner_user_id = $3`,
		id, clientID, userID))
}

// ClaimUnrelayedOutboxEvents returns up to limit outbox events that the
// webhook relay has not handled yet, oldest first. On PostgreSQL the rows
// stay locked until the transaction ends and rows locked by another relay
// are skipped, so several processes relay without waiting on each other.
func (tx *Tx) ClaimUnrelayedOutboxEvents(ctx context.Context, limit int) ([]outbox.Event, error) {
	q := `SELECT ` + outboxColumns + ` FROM outbox_events WHERE relayed_at IS NULL ORDER BY created_at, id LIMIT $1`
	if tx.engine == Postgres {
		q += ` FOR UPDATE SKIP LOCKED`
	}
	rows, err := tx.tx.QueryContext(ctx, q, limit)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []outbox.Event
	for rows.Next() {
		e, err := scanOutboxEvent(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, translate(rows.Err())
}

// HasUnrelayedOutboxEvents reports, from the read pool, whether any outbox
// event awaits the webhook relay, so an idle relay does not take the writer.
func (db *DB) HasUnrelayedOutboxEvents(ctx context.Context) (bool, error) {
	var one int
	err := db.read.QueryRowContext(ctx, `SELECT 1 FROM outbox_events WHERE relayed_at IS NULL LIMIT 1`).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, translate(err)
}

// MarkOutboxEventRelayed records that the webhook relay handled the event.
func (tx *Tx) MarkOutboxEventRelayed(ctx context.Context, id string, now time.Time) error {
	_, err := tx.tx.ExecContext(ctx, `UPDATE outbox_events SET relayed_at = $1 WHERE id = $2 AND relayed_at IS NULL`, Millis(now), id)
	return translate(err)
}

// InsertWebhookDelivery writes a pending delivery. It reports false, and
// writes nothing, when the relay already created the delivery of this
// outbox event to this endpoint.
func (tx *Tx) InsertWebhookDelivery(ctx context.Context, d outbox.Delivery) (bool, error) {
	res, err := tx.tx.ExecContext(ctx,
		`INSERT INTO webhook_deliveries (id, webhook_id, outbox_id, endpoint_id, origin, status, attempts,
		        next_attempt_at, created_at, updated_at, mode)
		 VALUES ($1, $2, $3, $4, $5, 'pending', 0, $6, $7, $7,
		         (SELECT mode FROM webhook_endpoints WHERE id = $4))
		 ON CONFLICT DO NOTHING`,
		d.ID, d.WebhookID, d.OutboxID, d.EndpointID, d.Origin, Millis(d.NextAttemptAt), Millis(d.CreatedAt))
	if err != nil {
		return false, translate(err)
	}
	n, err := res.RowsAffected()
	return n == 1, translate(err)
}

const deliveryColumns = `id, webhook_id, outbox_id, endpoint_id, origin, status, attempts, next_attempt_at,
	last_status_code, last_error, created_at, updated_at, finished_at`

// WebhookDeliveriesOfOutboxEvent returns every delivery of the outbox event,
// oldest first.
func (db *DB) WebhookDeliveriesOfOutboxEvent(ctx context.Context, outboxID string) ([]outbox.Delivery, error) {
	rows, err := db.read.QueryContext(ctx,
		`SELECT `+deliveryColumns+` FROM webhook_deliveries WHERE outbox_id = $1 ORDER BY created_at, id`, outboxID)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []outbox.Delivery
	for rows.Next() {
		var (
			d                      outbox.Delivery
			next, created, updated int64
			code                   sql.NullInt64
			finished               sql.NullInt64
		)
		if err := rows.Scan(&d.ID, &d.WebhookID, &d.OutboxID, &d.EndpointID, &d.Origin, &d.Status, &d.Attempts, &next,
			&code, &d.LastError, &created, &updated, &finished); err != nil {
			return nil, translate(err)
		}
		d.NextAttemptAt, d.CreatedAt, d.UpdatedAt = FromMillis(next), FromMillis(created), FromMillis(updated)
		d.LastStatusCode = int(code.Int64)
		d.FinishedAt = FromNullMillis(finished)
		out = append(out, d)
	}
	return out, translate(rows.Err())
}

// ClaimWebhookDeliveries claims up to limit pending deliveries that are due
// at now and not held by another worker's unexpired lease: it stamps them
// with token and a lease until now+lease and returns them, earliest due
// first. On PostgreSQL rows being claimed by another worker are skipped
// (FOR UPDATE SKIP LOCKED), so several processes share the work without
// delivering a row twice while its lease holds.
func (db *DB) ClaimWebhookDeliveries(ctx context.Context, now time.Time, lease time.Duration, limit int, token string) ([]outbox.ClaimedDelivery, error) {
	var out []outbox.ClaimedDelivery
	err := db.InTx(ctx, func(tx *Tx) error {
		out = out[:0]
		lock := ""
		if tx.engine == Postgres {
			lock = ` FOR UPDATE SKIP LOCKED`
		}
		res, err := tx.tx.ExecContext(ctx,
			`UPDATE webhook_deliveries SET locked_until = $1, lease_token = $2
			  WHERE id IN (SELECT id FROM webhook_deliveries
			                WHERE status = 'pending' AND next_attempt_at <= $3
			                  AND (locked_until IS NULL OR locked_until <= $3)
			                ORDER BY next_attempt_at, id LIMIT $4`+lock+`)`,
			Millis(now.Add(lease)), token, Millis(now), limit)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err
		}
		rows, err := tx.tx.QueryContext(ctx,
			`SELECT d.id, d.webhook_id, d.outbox_id, d.endpoint_id, d.attempts, d.created_at,
			        e.url, e.secret_key_id, e.secret_ciphertext, e.disabled_at, e.deleted_at,
			        CASE WHEN e.previous_secret_expires_at > $2 THEN e.previous_secret_key_id ELSE '' END,
			        CASE WHEN e.previous_secret_expires_at > $2 THEN e.previous_secret_ciphertext ELSE '' END,
			        o.event_type, o.booking_id, o.payload, o.occurred_at, d.mode
			   FROM webhook_deliveries d
			   JOIN webhook_endpoints e ON e.id = d.endpoint_id
			   JOIN outbox_events o ON o.id = d.outbox_id
			  WHERE d.lease_token = $1 AND d.status = 'pending'
			  ORDER BY d.next_attempt_at, d.id`, token, Millis(now))
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				c                 outbox.ClaimedDelivery
				created, occurred int64
				disabled, deleted sql.NullInt64
				payload           string
			)
			if err := rows.Scan(&c.ID, &c.WebhookID, &c.OutboxID, &c.EndpointID, &c.Attempts, &created,
				&c.URL, &c.SecretKeyID, &c.SecretCiphertext, &disabled, &deleted,
				&c.PreviousSecretKeyID, &c.PreviousSecretCiphertext, &c.EventType, &c.BookingID, &payload, &occurred, &c.Mode); err != nil {
				return err
			}
			c.CreatedAt, c.OccurredAt = FromMillis(created), FromMillis(occurred)
			c.Payload = []byte(payload)
			c.EndpointActive = !disabled.Valid && !deleted.Valid
			c.LeaseToken = token
			out = append(out, c)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// RecordWebhookAttempt stores the attempt and applies its outcome in one
// transaction, returning the attempt's number (1 for the first). Success is
// applied to a still-pending delivery even when the lease has expired
// meanwhile; a retry or final failure only while the claim is still the
// worker's own (another worker that took over an expired lease decides then).
func (db *DB) RecordWebhookAttempt(ctx context.Context, a outbox.Attempt) (int, error) {
	var number int
	err := db.InTx(ctx, func(tx *Tx) error {
		code := sql.NullInt64{Int64: int64(a.StatusCode), Valid: a.StatusCode != 0}
		var (
			endpointID string
			status     string
			lease      sql.NullString
		)
		err := tx.tx.QueryRowContext(ctx,
			`UPDATE webhook_deliveries SET attempts = attempts + 1, last_status_code = $1, last_error = $2, updated_at = $3
			  WHERE id = $4
			  RETURNING attempts, endpoint_id, status, lease_token`,
			code, a.Error, Millis(a.Now), a.DeliveryID).Scan(&number, &endpointID, &status, &lease)
		if err != nil {
			return err
		}
		if _, err := tx.tx.ExecContext(ctx,
			`INSERT INTO webhook_delivery_attempts (delivery_id, attempt, attempted_at, status_code, latency_ms, error)
			 VALUES ($1, $2, $3, $4, $5, $6)`,
			a.DeliveryID, number, Millis(a.AttemptedAt), code, a.Latency.Milliseconds(), a.Error); err != nil {
			return err
		}
		ours := lease.Valid && lease.String == a.LeaseToken
		switch {
		case status != outbox.DeliveryPending:
			// Cancelled (endpoint deleted) or finished by another worker meanwhile.
		case a.Status == outbox.DeliveryDelivered || ours:
			finished, next := sql.NullInt64{}, a.NextAttemptAt
			if a.Status != outbox.DeliveryPending {
				finished, next = NullMillis(a.Now), a.Now
			}
			if _, err := tx.tx.ExecContext(ctx,
				`UPDATE webhook_deliveries
				    SET status = $1, next_attempt_at = $2, finished_at = $3, locked_until = NULL, lease_token = NULL
				  WHERE id = $4`,
				a.Status, Millis(next), finished, a.DeliveryID); err != nil {
				return err
			}
		}
		if a.DisableEndpoint != "" {
			if _, err := tx.tx.ExecContext(ctx,
				`UPDATE webhook_endpoints SET disabled_at = $1, disabled_reason = $2, updated_at = $1
				  WHERE id = $3 AND disabled_at IS NULL`,
				Millis(a.Now), a.DisableEndpoint, endpointID); err != nil {
				return err
			}
			return tx.cancelPendingDeliveries(ctx, endpointID, a.DeliveryID, "endpoint disabled: "+a.DisableEndpoint, a.Now)
		}
		return nil
	})
	return number, err
}

// CancelWebhookDelivery cancels a claimed delivery whose endpoint is no
// longer active, without an attempt.
func (db *DB) CancelWebhookDelivery(ctx context.Context, id, leaseToken, reason string, now time.Time) error {
	return db.InTx(ctx, func(tx *Tx) error {
		_, err := tx.tx.ExecContext(ctx,
			`UPDATE webhook_deliveries
			    SET status = 'cancelled', last_error = $1, finished_at = $2, updated_at = $2, locked_until = NULL, lease_token = NULL
			  WHERE id = $3 AND lease_token = $4 AND status = 'pending'`,
			reason, Millis(now), id, leaseToken)
		return err
	})
}

// WebhookDeliveryAttempts returns the attempts of a delivery in order.
func (db *DB) WebhookDeliveryAttempts(ctx context.Context, deliveryID string) ([]outbox.RecordedAttempt, error) {
	rows, err := db.read.QueryContext(ctx,
		`SELECT delivery_id, attempt, attempted_at, status_code, latency_ms, error
		   FROM webhook_delivery_attempts WHERE delivery_id = $1 ORDER BY attempt`, deliveryID)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []outbox.RecordedAttempt
	for rows.Next() {
		var a outbox.RecordedAttempt
		if err := scanAttempt(rows, &a); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, translate(rows.Err())
}

// scanAttempt reads an attempt's columns — delivery_id, attempt,
// attempted_at, status_code, latency_ms, error — into a, after the extra
// leading columns.
func scanAttempt(rows *sql.Rows, a *outbox.RecordedAttempt, extra ...any) error {
	var (
		at, ms int64
		code   sql.NullInt64
	)
	dest := append(extra, &a.DeliveryID, &a.Attempt, &at, &code, &ms, &a.Error)
	if err := rows.Scan(dest...); err != nil {
		return translate(err)
	}
	a.AttemptedAt = FromMillis(at)
	a.StatusCode = int(code.Int64)
	a.Latency = time.Duration(ms) * time.Millisecond
	return nil
}

// EndpointAttempts returns up to limit attempts of deliveries to the owner's
// endpoint (deleted endpoints included), newest first (by attempted_at,
// then delivery id and attempt number, descending), strictly after the
// position after. Attempts recorded meanwhile are newer than any position
// handed out, so pages neither repeat nor skip rows. It returns
// bokat.ErrNotFound when the owner has no such endpoint.
func (db *DB) EndpointAttempts(ctx context.Context, clientID, userID, endpointID string, after webhook.AttemptPosition, limit int) ([]webhook.EndpointAttempt, error) {
	var one int
	err := db.read.QueryRowContext(ctx,
		`SELECT 1 FROM webhook_endpoints WHERE id = $1 AND owner_client_id = $2 AND owner_user_id = $3 AND deleted_at IS NULL`,
		endpointID, clientID, userID).Scan(&one)
	if err != nil {
		return nil, fmt.Errorf("webhook endpoint %s: %w", endpointID, translate(err))
	}
	q := `SELECT d.webhook_id, d.outbox_id, o.event_type, a.delivery_id, a.attempt, a.attempted_at, a.status_code,
	             a.latency_ms, a.error
	        FROM webhook_delivery_attempts a
	        JOIN webhook_deliveries d ON d.id = a.delivery_id
	        JOIN outbox_events o ON o.id = d.outbox_id
	       WHERE d.endpoint_id = $1`
	args := []any{endpointID, limit}
	if after.DeliveryID != "" {
		q += ` AND (a.attempted_at < $3 OR (a.attempted_at = $3 AND (a.delivery_id < $4 OR (a.delivery_id = $4 AND a.attempt < $5))))`
		args = append(args, Millis(after.AttemptedAt), after.DeliveryID, after.Attempt)
	}
	q += ` ORDER BY a.attempted_at DESC, a.delivery_id DESC, a.attempt DESC LIMIT $2`
	rows, err := db.read.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []webhook.EndpointAttempt
	for rows.Next() {
		var a webhook.EndpointAttempt
		if err := scanAttempt(rows, &a.RecordedAttempt, &a.WebhookID, &a.OutboxID, &a.EventType); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, translate(rows.Err())
}

// LockOwnedWebhookEndpoint returns the owner's endpoint (not deleted) and,
// on PostgreSQL, holds its row until the transaction ends, so that writes
// deciding on its state are serialised (SQLite transactions already are).
// It returns bokat.ErrNotFound when the owner has no such endpoint.
func (tx *Tx) LockOwnedWebhookEndpoint(ctx context.Context, clientID, userID, id string) (webhook.Endpoint, error) {
	q := `SELECT ` + endpointColumns + ` FROM webhook_endpoints
	       WHERE id = $1 AND owner_client_id = $2 AND owner_user_id = $3 AND deleted_at IS NULL`
	if tx.engine == Postgres {
		q += ` FOR UPDATE`
	}
	e, err := scanEndpoint(tx.tx.QueryRowContext(ctx, q, id, clientID, userID))
	if errors.Is(err, bokat.ErrNotFound) {
		return webhook.Endpoint{}, fmt.Errorf("webhook endpoint %s: %w", id, bokat.ErrNotFound)
	}
	return e, err
}

// FailedWebhookOutboxIDs returns, oldest first, the outbox events with a
// failed delivery to the endpoint created at or after since and no
// delivery to it that is pending or delivered: the events a recovery
// queues again. Each event appears once.
func (tx *Tx) FailedWebhookOutboxIDs(ctx context.Context, endpointID string, since time.Time) ([]string, error) {
	rows, err := tx.tx.QueryContext(ctx,
		`SELECT d.outbox_id, MIN(d.created_at) AS first_at FROM webhook_deliveries d
		  WHERE d.endpoint_id = $1 AND d.status = 'failed' AND d.created_at >= $2
		    AND NOT EXISTS (SELECT 1 FROM webhook_deliveries o
		                     WHERE o.endpoint_id = d.endpoint_id AND o.outbox_id = d.outbox_id
		                       AND o.status IN ('pending', 'delivered'))
		  GROUP BY d.outbox_id
		  ORDER BY first_at, d.outbox_id`, endpointID, Millis(since))
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var (
			id    string
			first int64
		)
		if err := rows.Scan(&id, &first); err != nil {
			return nil, translate(err)
		}
		out = append(out, id)
	}
	return out, translate(rows.Err())
}
