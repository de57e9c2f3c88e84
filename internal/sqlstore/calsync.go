package sqlstore

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"bokat"
	"bokat/internal/calsync"
)

// Calendar sync's store and transaction.
var (
	_ calsync.Store = Bound[calsync.Tx]{}
	_ calsync.Tx    = (*Tx)(nil)
)

// indexFeedURL is the blind index domain of feed addresses.
const indexFeedURL = "calendar-feed-url"

// feedContext binds a sealed feed address to its feed.
func feedContext(id string) string { return "bokat calendar feed\x00" + id + "\x00url" }

// InsertFeed stores a new feed with its address sealed under the vault's
// sealing key and its blind index, due at once; one added by hand clears
// the record of its address's removal by hand.
func (tx *Tx) InsertFeed(ctx context.Context, f calsync.Feed, now time.Time) error {
	v, err := tx.db.contactVault()
	if err != nil {
		return err
	}
	var one int
	if err := tx.tx.QueryRowContext(ctx, `SELECT 1 FROM providers WHERE id = $1`, f.ProviderID).Scan(&one); err != nil {
		return fmt.Errorf("provider %s: %w", f.ProviderID, translate(err))
	}
	keyID, sealed, err := v.Keys.Seal([]byte(f.URL), feedContext(f.ID))
	if err != nil {
		return fmt.Errorf("seal the address of feed %s: %w", f.ID, err)
	}
	_, err = tx.tx.ExecContext(ctx, `INSERT INTO calendar_feeds (id, provider_id, url_key_id, url_sealed, url_index, label, rule,
		source, created_at, next_poll_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)`,
		f.ID, f.ProviderID, keyID, sealed, v.Index(indexFeedURL, f.URL), f.Label, string(f.Rule), f.Source, Millis(now))
	if err = translate(err); errors.Is(err, bokat.ErrConflict) {
		return fmt.Errorf("provider %s already has this calendar: %w", f.ProviderID, bokat.ErrConflict)
	}
	if err != nil || f.Source == calsync.SourceSupply {
		return err
	}
	// Added again by hand: a removal by hand of the address no longer
	// holds. (An import never adds an address so removed.)
	_, err = tx.tx.ExecContext(ctx, `DELETE FROM dismissed_calendars WHERE provider_id = $1 AND url_index = $2`,
		f.ProviderID, v.Index(indexFeedURL, f.URL))
	return translate(err)
}

// DismissFeed records that the provider's feed was removed by hand at now.
func (tx *Tx) DismissFeed(ctx context.Context, providerID, feedID string, now time.Time) error {
	_, err := tx.tx.ExecContext(ctx, `INSERT INTO dismissed_calendars (provider_id, url_index, dismissed_at)
		SELECT provider_id, url_index, $3 FROM calendar_feeds WHERE id = $1 AND provider_id = $2
		ON CONFLICT (provider_id, url_index) DO UPDATE SET dismissed_at = excluded.dismissed_at`,
		feedID, providerID, Millis(now))
	return translate(err)
}

// CalendarAddress reads, in the transaction, what the provider's calendars
// hold of the address: how many calendars the provider has, whether one
// has the address, and whether the address was removed by hand and not
// added again by hand since.
func (tx *Tx) CalendarAddress(ctx context.Context, providerID, rawURL string) (calsync.AddressState, error) {
	v, err := tx.db.contactVault()
	if err != nil {
		return calsync.AddressState{}, err
	}
	index := v.Index(indexFeedURL, rawURL)
	var st calsync.AddressState
	var subscribed, dismissed int
	err = tx.tx.QueryRowContext(ctx, `SELECT
		(SELECT COUNT(*) FROM calendar_feeds WHERE provider_id = $1),
		(SELECT COUNT(*) FROM calendar_feeds WHERE provider_id = $1 AND url_index = $2),
		(SELECT COUNT(*) FROM dismissed_calendars WHERE provider_id = $1 AND url_index = $2)`,
		providerID, index).Scan(&st.Feeds, &subscribed, &dismissed)
	st.Subscribed, st.Dismissed = subscribed > 0, dismissed > 0
	return st, translate(err)
}

// FeedDismissed reports whether a calendar of the provider with the address
// was removed by hand and not added again since.
func (db *DB) FeedDismissed(ctx context.Context, providerID, rawURL string) (bool, error) {
	v, err := db.contactVault()
	if err != nil {
		return false, err
	}
	var n int
	err = db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM dismissed_calendars WHERE provider_id = $1 AND url_index = $2`,
		providerID, v.Index(indexFeedURL, rawURL)).Scan(&n)
	return n > 0, translate(err)
}

// DeleteFeed removes a provider's feed, its busy times and its unraised
// conflicts.
func (tx *Tx) DeleteFeed(ctx context.Context, providerID, feedID string) error {
	if _, err := tx.tx.ExecContext(ctx, `DELETE FROM calendar_entries WHERE feed_id = $1 AND provider_id = $2`, feedID, providerID); err != nil {
		return translate(err)
	}
	res, err := tx.tx.ExecContext(ctx, `DELETE FROM calendar_feeds WHERE id = $1 AND provider_id = $2`, feedID, providerID)
	if err != nil {
		return translate(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("calendar feed %s of provider %s: %w", feedID, providerID, bokat.ErrNotFound)
	}
	return nil
}

// SetFeedRule changes a feed's rule and makes it due at now; the body hash
// is forgotten so the feed's busy times are read again under the rule.
func (tx *Tx) SetFeedRule(ctx context.Context, providerID, feedID string, rule calsync.Rule, now time.Time) error {
	res, err := tx.tx.ExecContext(ctx, `UPDATE calendar_feeds SET rule = $3, next_poll_at = $4, body_hash = '', etag = '',
		last_modified = '' WHERE id = $1 AND provider_id = $2`, feedID, providerID, string(rule), Millis(now))
	if err != nil {
		return translate(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("calendar feed %s of provider %s: %w", feedID, providerID, bokat.ErrNotFound)
	}
	return nil
}

const feedColumns = `f.id, f.provider_id, f.url_key_id, f.url_sealed, f.label, f.rule, f.source, f.created_at, f.last_attempt_at,
	f.last_synced_at, f.last_error, f.failing_since, f.busy_count`

type feedRow struct {
	f                          calsync.Feed
	keyID, sealed, rule        string
	created                    int64
	attempt, synced, failingAt sql.NullInt64
}

func (r *feedRow) dest() []any {
	return []any{&r.f.ID, &r.f.ProviderID, &r.keyID, &r.sealed, &r.f.Label, &r.rule, &r.f.Source, &r.created, &r.attempt,
		&r.synced, &r.f.LastError, &r.failingAt, &r.f.BusyCount}
}

func (r *feedRow) open(v *Vault) (calsync.Feed, error) {
	f := r.f
	plain, err := v.Keys.Open(r.keyID, r.sealed, feedContext(f.ID))
	if err != nil {
		return calsync.Feed{}, fmt.Errorf("open the address of calendar feed %s: %w", f.ID, err)
	}
	f.URL, f.Rule = string(plain), calsync.Rule(r.rule)
	f.CreatedAt, f.LastAttemptAt = FromMillis(r.created), FromNullMillis(r.attempt)
	f.LastSyncedAt, f.FailingSince = FromNullMillis(r.synced), FromNullMillis(r.failingAt)
	return f, nil
}

// ProviderFeeds returns a provider's feeds, addresses opened, oldest first.
func (db *DB) ProviderFeeds(ctx context.Context, providerID string) ([]calsync.Feed, error) {
	v, err := db.contactVault()
	if err != nil {
		return nil, err
	}
	rows, err := db.read.QueryContext(ctx, `SELECT `+feedColumns+` FROM calendar_feeds f WHERE f.provider_id = $1
		ORDER BY f.created_at, f.id`, providerID)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []calsync.Feed
	for rows.Next() {
		var r feedRow
		if err := rows.Scan(r.dest()...); err != nil {
			return nil, translate(err)
		}
		f, err := r.open(v)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, translate(rows.Err())
}

// FeedRefs returns every feed with its address left sealed (URL empty),
// by provider, oldest first.
func (db *DB) FeedRefs(ctx context.Context) ([]calsync.Feed, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+feedColumns+` FROM calendar_feeds f ORDER BY f.provider_id, f.created_at, f.id`)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []calsync.Feed
	for rows.Next() {
		var r feedRow
		if err := rows.Scan(r.dest()...); err != nil {
			return nil, translate(err)
		}
		f := r.f
		f.Rule, f.CreatedAt, f.LastAttemptAt = calsync.Rule(r.rule), FromMillis(r.created), FromNullMillis(r.attempt)
		f.LastSyncedAt, f.FailingSince = FromNullMillis(r.synced), FromNullMillis(r.failingAt)
		out = append(out, f)
	}
	return out, translate(rows.Err())
}

// ClaimFeeds leases up to limit due feeds (see calsync.Store). On
// PostgreSQL the candidate rows are locked with SKIP LOCKED; on SQLite the
// claim runs in the single write transaction.
func (db *DB) ClaimFeeds(ctx context.Context, now time.Time, interval, lease time.Duration, token string, limit int) ([]calsync.Claim, error) {
	v, err := db.contactVault()
	if err != nil {
		return nil, err
	}
	lock := ""
	if db.engine == Postgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	var claims []calsync.Claim
	err = db.InTx(ctx, func(tx *Tx) error {
		claims = claims[:0]
		rows, err := tx.tx.QueryContext(ctx, `UPDATE calendar_feeds SET next_poll_at = $2, lease_until = $3, lease_token = $4
			 WHERE id IN (SELECT id FROM calendar_feeds
			               WHERE next_poll_at <= $1 AND (lease_until IS NULL OR lease_until <= $1)
			               ORDER BY next_poll_at, id LIMIT $5`+lock+`)
			 RETURNING id`, Millis(now), Millis(now.Add(interval)), Millis(now.Add(lease)), token, limit)
		if err != nil {
			return err
		}
		var ids []any
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil || len(ids) == 0 {
			return err
		}
		rows, err = tx.tx.QueryContext(ctx, `SELECT `+feedColumns+`, f.etag, f.last_modified, f.body_hash, f.expanded_until,
			f.stale_notified_at, p.horizon_days
			 FROM calendar_feeds f JOIN providers p ON p.id = f.provider_id
			WHERE f.id IN (`+placeholders(1, len(ids))+`) ORDER BY f.next_poll_at, f.id`, ids...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				r               feedRow
				c               calsync.Claim
				expanded, stale sql.NullInt64
			)
			if err := rows.Scan(append(r.dest(), &c.ETag, &c.LastModified, &c.BodyHash, &expanded, &stale, &c.HorizonDays)...); err != nil {
				return err
			}
			f, err := r.open(v)
			if err != nil {
				return err
			}
			c.Feed, c.Token = f, token
			c.ExpandedUntil, c.StaleNotifiedAt = FromNullMillis(expanded), FromNullMillis(stale)
			claims = append(claims, c)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, translate(err)
	}
	return claims, nil
}

// FinishFeed writes a poll's outcome under the lease (see calsync.Tx).
func (tx *Tx) FinishFeed(ctx context.Context, feedID, token string, o calsync.Outcome) error {
	var res sql.Result
	var err error
	if o.Err != "" {
		res, err = tx.tx.ExecContext(ctx, `UPDATE calendar_feeds SET lease_until = NULL, lease_token = '', last_attempt_at = $3,
			last_error = $4, failing_since = COALESCE(failing_since, $3), body_hash = CASE WHEN $5 = '' THEN body_hash ELSE $5 END,
			expanded_until = CASE WHEN $5 = '' THEN expanded_until ELSE $6 END, busy_count = $7
			WHERE id = $1 AND lease_token = $2`, feedID, token, Millis(o.At), o.Err, o.BodyHash, NullMillis(o.ExpandedUntil), o.BusyCount)
	} else {
		res, err = tx.tx.ExecContext(ctx, `UPDATE calendar_feeds SET lease_until = NULL, lease_token = '', last_attempt_at = $3,
			last_synced_at = $3, last_error = '', failing_since = NULL, stale_notified_at = NULL, etag = $4, last_modified = $5,
			body_hash = $6, expanded_until = $7, busy_count = $8
			WHERE id = $1 AND lease_token = $2`, feedID, token, Millis(o.At), o.ETag, o.LastModified, o.BodyHash,
			NullMillis(o.ExpandedUntil), o.BusyCount)
	}
	if err != nil {
		return translate(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return calsync.ErrLeaseLost
	}
	return nil
}

// syncedEntryID is the id of a feed's busy interval: the same interval of
// the same feed keeps its row across syncs, so an unchanged busy time
// writes nothing.
func syncedEntryID(feedID string, iv calsync.Interval) string {
	h := sha256.Sum256([]byte(feedID + "\x00" + strconv.FormatInt(Millis(iv.Start), 10) + "\x00" + strconv.FormatInt(Millis(iv.End), 10)))
	return "cal_s" + hex.EncodeToString(h[:14])
}

// ReplaceSyncedBusy makes busy the feed's busy intervals (see calsync.Tx).
func (tx *Tx) ReplaceSyncedBusy(ctx context.Context, providerID, feedID string, busy []calsync.Interval, now time.Time) (int, error) {
	rows, err := tx.tx.QueryContext(ctx, `SELECT id FROM calendar_entries WHERE feed_id = $1`, feedID)
	if err != nil {
		return 0, translate(err)
	}
	old := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, translate(err)
		}
		old[id] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, translate(err)
	}
	written := 0
	for _, iv := range busy {
		id := syncedEntryID(feedID, iv)
		if old[id] {
			delete(old, id)
			continue
		}
		if _, err := tx.tx.ExecContext(ctx, `INSERT INTO calendar_entries (id, provider_id, feed_id, kind, start_at, end_at, active,
			created_at) VALUES ($1, $2, $3, 'synced', $4, $5, TRUE, $6)`, id, providerID, feedID, Millis(iv.Start), Millis(iv.End),
			Millis(now)); err != nil {
			return written, translate(err)
		}
		written++
	}
	for id := range old {
		if _, err := tx.tx.ExecContext(ctx, `DELETE FROM calendar_entries WHERE id = $1`, id); err != nil {
			return written, translate(err)
		}
		written++
	}
	return written, nil
}

// ConfirmedSlots returns the provider's confirmed bookings overlapping
// [from, to), by start.
func (tx *Tx) ConfirmedSlots(ctx context.Context, providerID string, from, to time.Time) ([]calsync.BookedSlot, error) {
	rows, err := tx.tx.QueryContext(ctx, `SELECT id, slot_start_at, slot_end_at FROM bookings
		WHERE provider_id = $1 AND status = 'confirmed' AND slot_end_at > $2 AND slot_start_at < $3
		ORDER BY slot_start_at, id`, providerID, Millis(from), Millis(to))
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []calsync.BookedSlot
	for rows.Next() {
		var (
			s          calsync.BookedSlot
			start, end int64
		)
		if err := rows.Scan(&s.BookingID, &start, &end); err != nil {
			return nil, translate(err)
		}
		s.Start, s.End = FromMillis(start), FromMillis(end)
		out = append(out, s)
	}
	return out, translate(rows.Err())
}

// InsertConflict records a conflict unless its booking slot has one.
func (tx *Tx) InsertConflict(ctx context.Context, c calsync.Conflict, now time.Time) (bool, error) {
	res, err := tx.tx.ExecContext(ctx, `INSERT INTO calendar_conflicts (booking_id, slot_start_at, provider_id, feed_id, detected_at)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT (booking_id, slot_start_at) DO NOTHING`,
		c.BookingID, Millis(c.SlotStart), c.ProviderID, c.FeedID, Millis(now))
	if err != nil {
		return false, translate(err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// UnraisedConflicts returns up to limit conflicts not raised yet.
func (db *DB) UnraisedConflicts(ctx context.Context, limit int) ([]calsync.Conflict, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT booking_id, slot_start_at, provider_id, feed_id FROM calendar_conflicts
		WHERE raised_at IS NULL ORDER BY detected_at, booking_id LIMIT $1`, limit)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []calsync.Conflict
	for rows.Next() {
		var (
			c     calsync.Conflict
			start int64
		)
		if err := rows.Scan(&c.BookingID, &start, &c.ProviderID, &c.FeedID); err != nil {
			return nil, translate(err)
		}
		c.SlotStart = FromMillis(start)
		out = append(out, c)
	}
	return out, translate(rows.Err())
}

// ProviderConflicts returns the conflicts of the provider's bookings still
// confirmed whose slot ends after now, by slot start.
func (db *DB) ProviderConflicts(ctx context.Context, providerID string, now time.Time) ([]calsync.Conflict, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT c.booking_id, c.slot_start_at, c.feed_id, c.detected_at, c.raised_at
		FROM calendar_conflicts c JOIN bookings b ON b.id = c.booking_id
		WHERE c.provider_id = $1 AND b.status = 'confirmed' AND b.slot_start_at = c.slot_start_at AND b.slot_end_at > $2
		ORDER BY c.slot_start_at, c.booking_id`, providerID, Millis(now))
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []calsync.Conflict
	for rows.Next() {
		var (
			c               calsync.Conflict
			start, detected int64
			raised          sql.NullInt64
		)
		if err := rows.Scan(&c.BookingID, &start, &c.FeedID, &detected, &raised); err != nil {
			return nil, translate(err)
		}
		c.ProviderID, c.SlotStart, c.DetectedAt, c.RaisedAt = providerID, FromMillis(start), FromMillis(detected), FromNullMillis(raised)
		out = append(out, c)
	}
	return out, translate(rows.Err())
}

// MarkConflictRaised records that a conflict's event is queued.
func (db *DB) MarkConflictRaised(ctx context.Context, c calsync.Conflict, now time.Time) error {
	return db.InTx(ctx, func(tx *Tx) error {
		_, err := tx.tx.ExecContext(ctx, `UPDATE calendar_conflicts SET raised_at = $3 WHERE booking_id = $1 AND slot_start_at = $2`,
			c.BookingID, Millis(c.SlotStart), Millis(now))
		return err
	})
}

// MarkStaleNotified records that the provider was told the feed is stale.
func (db *DB) MarkStaleNotified(ctx context.Context, feedID string, now time.Time) error {
	return db.InTx(ctx, func(tx *Tx) error {
		_, err := tx.tx.ExecContext(ctx, `UPDATE calendar_feeds SET stale_notified_at = $2 WHERE id = $1`, feedID, Millis(now))
		return err
	})
}

// ResealFeeds seals, with the vault's sealing key, every feed address
// sealed with another key (after a rotation), so an old key can be
// dropped. A feed whose address does not open is passed over and named
// (ids only) in the returned error, which wraps the Sealer's; the others
// are re-sealed all the same. A feed re-sealed by another process in
// between is left as it is.
func (db *DB) ResealFeeds(ctx context.Context) (int, error) {
	v, err := db.contactVault()
	if err != nil {
		return 0, err
	}
	sealID := v.Keys.SealingKeyID()
	total, after := 0, ""
	var skipped []error
	for {
		rows, err := db.read.QueryContext(ctx, `SELECT id, url_key_id, url_sealed FROM calendar_feeds
			WHERE url_key_id <> $1 AND id > $2 ORDER BY id LIMIT 100`, sealID, after)
		if err != nil {
			return total, translate(err)
		}
		type feed struct{ id, keyID, sealed string }
		var batch []feed
		for rows.Next() {
			var f feed
			if err := rows.Scan(&f.id, &f.keyID, &f.sealed); err != nil {
				rows.Close()
				return total, translate(err)
			}
			batch = append(batch, f)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return total, translate(err)
		}
		if len(batch) == 0 {
			break
		}
		err = db.InTx(ctx, func(tx *Tx) error {
			for _, f := range batch {
				plain, err := v.Keys.Open(f.keyID, f.sealed, feedContext(f.id))
				if err != nil {
					skipped = append(skipped, fmt.Errorf("calendar feed %s (key %s): %w", f.id, f.keyID, err))
					continue
				}
				keyID, sealed, err := v.Keys.Seal(plain, feedContext(f.id))
				if err != nil {
					return err
				}
				res, err := tx.tx.ExecContext(ctx, `UPDATE calendar_feeds SET url_key_id = $2, url_sealed = $3
					WHERE id = $1 AND url_key_id = $4`, f.id, keyID, sealed, f.keyID)
				if err != nil {
					return err
				}
				n, _ := res.RowsAffected()
				total += int(n)
			}
			return nil
		})
		if err != nil {
			return total, fmt.Errorf("re-seal calendar feeds: %w", translate(err))
		}
		after = batch[len(batch)-1].id
	}
	if len(skipped) > 0 {
		return total, fmt.Errorf("re-seal: %d calendar feed(s) do not open: %w", len(skipped), errors.Join(skipped...))
	}
	return total, nil
}
