package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"bokat"
	"bokat/internal/auth"
	"bokat/internal/provider"
	"bokat/internal/schedule"
)

// The supply a provider keeps itself: its pause, the hours of single
// dates, its blocks of time, and the field groups it manages.
var (
	_ provider.SupplyStore = Bound[provider.SupplyTx]{}
	_ provider.SupplyTx    = (*Tx)(nil)
)

// readProviderDayHours adds the provider_day_hours rows to their providers.
func readProviderDayHours(ctx context.Context, q Reader, f providerFilter, byID map[string]*bokat.ProviderSupply) error {
	return readRuns(ctx, q, "provider_day_hours", "day, start_minute, end_minute", "day, start_minute", f, byID,
		func(scan func(...any) error, pid *sql.RawBytes, d *bokat.DayHours) error {
			return scan(pid, &d.Day, &d.StartMinute, &d.EndMinute)
		},
		func(p *bokat.ProviderSupply, run []bokat.DayHours) { p.DayHours = run })
}

// ReadProviderSupply reads one provider's supply, blocked periods aside,
// or returns bokat.ErrNotFound.
func (db *DB) ReadProviderSupply(ctx context.Context, providerID string) (bokat.ProviderSupply, error) {
	tx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return bokat.ProviderSupply{}, translate(err)
	}
	defer tx.Rollback()
	ps, err := loadProviders(ctx, tx, providerID)
	if err != nil {
		return bokat.ProviderSupply{}, err
	}
	if len(ps) == 0 {
		return bokat.ProviderSupply{}, fmt.Errorf("provider %s: %w", providerID, bokat.ErrNotFound)
	}
	return ps[0], nil
}

// ManagedGroups returns the field groups each of the providers manages
// itself, for those that manage any.
func (tx *Tx) ManagedGroups(ctx context.Context, providerIDs []string) (map[string][]string, error) {
	out := map[string][]string{}
	for chunk := range slices.Chunk(providerIDs, supplyReadBatch) {
		err := eachRow(ctx, tx.tx, `SELECT provider_id, field_group FROM provider_managed WHERE provider_id IN (`+
			placeholders(1, len(chunk))+`) ORDER BY provider_id, field_group`, stringArgs(chunk), func(scan func(...any) error) error {
			var pid, group string
			if err := scan(&pid, &group); err != nil {
				return err
			}
			out[pid] = append(out[pid], group)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// MarkManaged records that the provider manages the field group; the first
// change's actor and time are kept.
func (tx *Tx) MarkManaged(ctx context.Context, providerID, group, actor string, now time.Time) error {
	_, err := tx.tx.ExecContext(ctx, `INSERT INTO provider_managed (provider_id, field_group, actor, changed_at)
		VALUES ($1, $2, $3, $4) ON CONFLICT (provider_id, field_group) DO NOTHING`, providerID, group, actor, Millis(now))
	return translate(err)
}

// SetProviderPause stores the provider's pause (zero: none) and moves the
// supply revision.
func (tx *Tx) SetProviderPause(ctx context.Context, providerID string, until, now time.Time) error {
	var ms int64
	if !until.IsZero() {
		ms = Millis(until)
	}
	res, err := tx.tx.ExecContext(ctx, `UPDATE providers SET paused_until = $2, updated_at = $3 WHERE id = $1`,
		providerID, ms, Millis(now))
	if err := named("provider "+providerID, affectedOne(res, err)); err != nil {
		return err
	}
	return tx.bumpSupplyRevision(ctx)
}

// PutProviderDayHours replaces the provider's hours of single dates and
// moves the supply revision.
func (tx *Tx) PutProviderDayHours(ctx context.Context, providerID string, days []bokat.DayHours, now time.Time) error {
	if _, err := tx.tx.ExecContext(ctx, `DELETE FROM provider_day_hours WHERE provider_id = $1`, providerID); err != nil {
		return translate(err)
	}
	for _, d := range days {
		if _, err := tx.tx.ExecContext(ctx, `INSERT INTO provider_day_hours (provider_id, day, start_minute, end_minute)
			VALUES ($1, $2, $3, $4)`, providerID, d.Day, d.StartMinute, d.EndMinute); err != nil {
			return translate(err)
		}
	}
	if _, err := tx.tx.ExecContext(ctx, `UPDATE providers SET updated_at = $2 WHERE id = $1`, providerID, Millis(now)); err != nil {
		return translate(err)
	}
	return tx.bumpSupplyRevision(ctx)
}

// InsertProviderBlock stores a block and its occurrences as blocked
// calendar entries "<block id>_<week>", which move the calendar revision.
func (tx *Tx) InsertProviderBlock(ctx context.Context, b provider.Block, occurrences []schedule.Interval, now time.Time) error {
	if _, err := tx.tx.ExecContext(ctx, `INSERT INTO provider_blocks (id, provider_id, whole_days, weeks, start_at, end_at,
		note, created_by, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		b.ID, b.ProviderID, b.WholeDays, b.Weeks, Millis(b.Start), Millis(b.End), b.Note, b.CreatedBy, Millis(now)); err != nil {
		return translate(err)
	}
	for k, iv := range occurrences {
		if _, err := tx.tx.ExecContext(ctx, `INSERT INTO calendar_entries (id, provider_id, booking_id, kind, start_at, end_at,
			active, note, created_at, block_id) VALUES ($1, $2, NULL, 'blocked', $3, $4, TRUE, $5, $6, $7)`,
			b.ID+"_"+strconv.Itoa(k), b.ProviderID, Millis(iv.Start), Millis(iv.End), b.Note, Millis(now), b.ID); err != nil {
			return translate(err)
		}
	}
	return nil
}

// DeleteProviderBlock removes a block of the provider with its calendar
// entries: one it added ("pb_..."), or a blocked period of the supply
// file. Another provider's block is bokat.ErrNotFound.
func (tx *Tx) DeleteProviderBlock(ctx context.Context, providerID, blockID string) error {
	what := "block " + blockID
	if strings.HasPrefix(blockID, bokat.ProviderBlockIDPrefix) {
		res, err := tx.tx.ExecContext(ctx, `DELETE FROM provider_blocks WHERE id = $1 AND provider_id = $2`, blockID, providerID)
		if err := named(what, affectedOne(res, err)); err != nil {
			return err
		}
		_, err = tx.tx.ExecContext(ctx, `DELETE FROM calendar_entries WHERE block_id = $1 AND provider_id = $2`, blockID, providerID)
		return translate(err)
	}
	res, err := tx.tx.ExecContext(ctx, `DELETE FROM calendar_entries WHERE id = $1 AND provider_id = $2 AND kind = 'blocked'
		AND block_id IS NULL`, blockID, providerID)
	return named(what, affectedOne(res, err))
}

// ProviderBlocks returns the provider's blocks whose last occurrence ends
// after now, by start: those it added, then merged with the supply file's
// blocked periods.
func (db *DB) ProviderBlocks(ctx context.Context, providerID string, now time.Time) ([]provider.Block, error) {
	var out []provider.Block
	err := eachRow(ctx, db.read, `SELECT id, whole_days, weeks, start_at, end_at, note, created_by, created_at
		FROM provider_blocks WHERE provider_id = $1 ORDER BY start_at, id`, []any{providerID}, func(scan func(...any) error) error {
		b := provider.Block{ProviderID: providerID}
		var start, end, created int64
		if err := scan(&b.ID, &b.WholeDays, &b.Weeks, &start, &end, &b.Note, &b.CreatedBy, &created); err != nil {
			return err
		}
		b.Start, b.End, b.CreatedAt = FromMillis(start), FromMillis(end), FromMillis(created)
		if occ := b.Occurrences(); occ[len(occ)-1].End.After(now) {
			out = append(out, b)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = eachRow(ctx, db.read, `SELECT id, start_at, end_at, note, created_at FROM calendar_entries
		WHERE provider_id = $1 AND kind = 'blocked' AND active AND block_id IS NULL AND end_at > $2 ORDER BY start_at, id`,
		[]any{providerID, Millis(now)}, func(scan func(...any) error) error {
			b := provider.Block{ProviderID: providerID, Weeks: 1, FromFile: true}
			var start, end, created int64
			if err := scan(&b.ID, &start, &end, &b.Note, &created); err != nil {
				return err
			}
			b.Start, b.End, b.CreatedAt = FromMillis(start), FromMillis(end), FromMillis(created)
			out = append(out, b)
			return nil
		})
	slices.SortStableFunc(out, func(a, b provider.Block) int { return a.Start.Compare(b.Start) })
	return out, err
}

// named says which object a store error is about.
func named(what string, err error) error {
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

var _ auth.ProviderTokenStore = (*DB)(nil)

// CreateProviderToken stores a provider token under its keyed hash.
func (db *DB) CreateProviderToken(ctx context.Context, t auth.ProviderToken, tokenHash string) error {
	scopes := make([]string, len(t.Scopes))
	for i, s := range t.Scopes {
		scopes[i] = string(s)
	}
	return db.InTx(ctx, func(tx *Tx) error {
		var n int
		if err := tx.tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM providers WHERE id = $1`, t.ProviderID).Scan(&n); err != nil {
			return translate(err)
		}
		if n == 0 {
			return fmt.Errorf("provider %s: %w", t.ProviderID, bokat.ErrNotFound)
		}
		_, err := tx.tx.ExecContext(ctx, `INSERT INTO provider_tokens (id, provider_id, name, scopes, token_hash, created_at)
			VALUES ($1, $2, $3, $4, $5, $6)`, t.ID, t.ProviderID, t.Name, strings.Join(scopes, " "), tokenHash, Millis(t.CreatedAt))
		return translate(err)
	})
}

// ProviderTokenByHash returns the unrevoked provider token with the hash.
func (db *DB) ProviderTokenByHash(ctx context.Context, tokenHash string) (auth.ProviderToken, error) {
	var (
		t       auth.ProviderToken
		scopes  string
		created int64
	)
	err := db.read.QueryRowContext(ctx, `SELECT id, provider_id, name, scopes, created_at FROM provider_tokens
		WHERE token_hash = $1 AND revoked_at IS NULL`, tokenHash).Scan(&t.ID, &t.ProviderID, &t.Name, &scopes, &created)
	if err != nil {
		return auth.ProviderToken{}, translate(err)
	}
	for _, s := range strings.Fields(scopes) {
		t.Scopes = append(t.Scopes, bokat.Scope(s))
	}
	t.CreatedAt = FromMillis(created)
	return t, nil
}

// AuditImport writes one provider audit row per provider an import
// changed: the operator, the file, and the groups kept.
func (tx *Tx) AuditImport(ctx context.Context, providerIDs []string, file string, notes map[string]string, now time.Time) error {
	rows := make([]any, 0, 8*len(providerIDs))
	for _, id := range providerIDs {
		u, err := uuid.NewV7()
		if err != nil {
			return err
		}
		note := strings.TrimSpace("file=" + filepath.Base(file) + " " + notes[id])
		rows = append(rows, bokat.ProviderAuditIDPrefix+strings.ReplaceAll(u.String(), "-", ""), id, provider.OperatorActor, Millis(now),
			"supply.imported", "provider", id, note)
	}
	return tx.insertRows(ctx, `INSERT INTO provider_audit (id, provider_id, actor, at, action, object_type, object_id, note) VALUES `,
		"", 8, rows)
}
