package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"bokat"
)

// Supply is a consistent read of every provider's supply (blocked periods
// aside: they live in the calendar) at one revision.
type Supply struct {
	// Revision increases with every committed change of the supply tables.
	Revision  int64
	Providers []bokat.ProviderSupply
}

// readStmt returns the prepared statement of a hot read query on the read
// pool, preparing it on first use. Searches run the same few queries for
// every request; preparing them once saves SQLite parsing each time.
func (db *DB) readStmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := db.stmts.Load(query); ok {
		return st.(*sql.Stmt), nil
	}
	st, err := db.read.PrepareContext(ctx, query)
	if err != nil {
		return nil, translate(err)
	}
	if prev, loaded := db.stmts.LoadOrStore(query, st); loaded {
		st.Close()
		return prev.(*sql.Stmt), nil
	}
	return st, nil
}

// SupplyRevision returns the current supply revision.
func (db *DB) SupplyRevision(ctx context.Context) (int64, error) {
	st, err := db.readStmt(ctx, `SELECT revision FROM supply_revision WHERE id = 1`)
	if err != nil {
		return 0, err
	}
	var rev int64
	err = st.QueryRowContext(ctx).Scan(&rev)
	return rev, translate(err)
}

// LoadSupply reads every provider with its postcodes, services and working
// hours, and the revision they belong to, in one read transaction. Providers
// are sorted by id, their lists in a stable order.
func (db *DB) LoadSupply(ctx context.Context) (Supply, error) {
	opts := &sql.TxOptions{ReadOnly: true}
	if db.engine == Postgres {
		opts.Isolation = sql.LevelRepeatableRead // one snapshot for every statement
	}
	tx, err := db.read.BeginTx(ctx, opts)
	if err != nil {
		return Supply{}, translate(err)
	}
	defer tx.Rollback()
	var s Supply
	if err := tx.QueryRowContext(ctx, `SELECT revision FROM supply_revision WHERE id = 1`).Scan(&s.Revision); err != nil {
		return Supply{}, translate(err)
	}
	if s.Providers, err = loadProviders(ctx, tx, ""); err != nil {
		return Supply{}, err
	}
	return s, nil
}

// ProviderSupply reads one provider with its postcodes, services, working
// hours and active blocked periods inside the transaction, or returns
// bokat.ErrNotFound.
func (tx *Tx) ProviderSupply(ctx context.Context, providerID string) (bokat.ProviderSupply, error) {
	ps, err := loadProviders(ctx, tx.tx, providerID)
	if err != nil {
		return bokat.ProviderSupply{}, err
	}
	if len(ps) == 0 {
		return bokat.ProviderSupply{}, fmt.Errorf("provider %s: %w", providerID, bokat.ErrNotFound)
	}
	p := ps[0]
	rows, err := tx.tx.QueryContext(ctx,
		`SELECT id, start_at, end_at, note FROM calendar_entries
		  WHERE provider_id = $1 AND kind = 'blocked' AND active ORDER BY start_at, id`, providerID)
	if err != nil {
		return bokat.ProviderSupply{}, translate(err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			b          bokat.BlockedPeriod
			start, end int64
		)
		if err := rows.Scan(&b.ID, &start, &end, &b.Note); err != nil {
			return bokat.ProviderSupply{}, translate(err)
		}
		b.Start, b.End = FromMillis(start), FromMillis(end)
		p.Blocked = append(p.Blocked, b)
	}
	return p, translate(rows.Err())
}

// loadProviders reads providers (one when id is not empty) with their
// postcodes, services and hours.
func loadProviders(ctx context.Context, q Reader, id string) ([]bokat.ProviderSupply, error) {
	where, args := "", []any{}
	if id != "" {
		where, args = " WHERE provider_id = $1", []any{id}
	}
	byID := map[string]*bokat.ProviderSupply{}
	var order []string

	pwhere := ""
	if id != "" {
		pwhere = " WHERE id = $1"
	}
	rows, err := q.QueryContext(ctx, `SELECT id, name, city, rating_label, email, phone, active, min_notice_minutes,
		horizon_days FROM providers`+pwhere+` ORDER BY id`, args...)
	if err != nil {
		return nil, translate(err)
	}
	for rows.Next() {
		var p bokat.ProviderSupply
		if err := rows.Scan(&p.ID, &p.Name, &p.City, &p.RatingLabel, &p.Email, &p.Phone, &p.Active,
			&p.MinNoticeMinutes, &p.HorizonDays); err != nil {
			rows.Close()
			return nil, translate(err)
		}
		byID[p.ID] = &p
		order = append(order, p.ID)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, translate(err)
	}

	rows, err = q.QueryContext(ctx, `SELECT provider_id, postcode_from, postcode_to FROM provider_postcodes`+where+
		` ORDER BY provider_id, postcode_from, postcode_to`, args...)
	if err != nil {
		return nil, translate(err)
	}
	for rows.Next() {
		var (
			pid string
			r   bokat.PostcodeRange
		)
		if err := rows.Scan(&pid, &r.From, &r.To); err != nil {
			rows.Close()
			return nil, translate(err)
		}
		if p := byID[pid]; p != nil {
			p.Postcodes = append(p.Postcodes, r)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, translate(err)
	}

	rows, err = q.QueryContext(ctx, `SELECT provider_id, service_id, price_sek, unit_price_sek, minimum_charge_sek,
		fixed_minutes, minutes_per_unit, minimum_minutes FROM provider_services`+where+` ORDER BY provider_id, service_id`, args...)
	if err != nil {
		return nil, translate(err)
	}
	for rows.Next() {
		var (
			pid string
			s   bokat.ProviderService
		)
		if err := rows.Scan(&pid, &s.ServiceID, &s.PriceSEK, &s.UnitPriceSEK, &s.MinimumChargeSEK,
			&s.Duration.FixedMinutes, &s.Duration.MinutesPerUnit, &s.Duration.MinimumMinutes); err != nil {
			rows.Close()
			return nil, translate(err)
		}
		if p := byID[pid]; p != nil {
			p.Services = append(p.Services, s)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, translate(err)
	}

	rows, err = q.QueryContext(ctx, `SELECT provider_id, weekday, start_minute, end_minute FROM provider_hours`+where+
		` ORDER BY provider_id, weekday, start_minute`, args...)
	if err != nil {
		return nil, translate(err)
	}
	for rows.Next() {
		var (
			pid string
			h   bokat.WorkingRange
			wd  int
		)
		if err := rows.Scan(&pid, &wd, &h.StartMinute, &h.EndMinute); err != nil {
			rows.Close()
			return nil, translate(err)
		}
		h.Weekday = time.Weekday(wd)
		if p := byID[pid]; p != nil {
			p.Hours = append(p.Hours, h)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, translate(err)
	}

	out := make([]bokat.ProviderSupply, 0, len(order))
	for _, id := range order {
		out = append(out, *byID[id])
	}
	return out, nil
}

// BusyEntries returns the active calendar entries of the providers that
// overlap [from, to), ordered by provider and start.
func (db *DB) BusyEntries(ctx context.Context, providerIDs []string, from, to time.Time) ([]bokat.CalendarEntry, error) {
	if len(providerIDs) == 0 || !from.Before(to) {
		return nil, nil
	}
	query, args := busyQuery(providerIDs, from, to)
	return scanBusy(db.read.QueryContext(ctx, query, args...))
}

// BusyEntriesWithRevision is BusyEntries and SupplyRevision in one
// statement: a search checks its cached supply against the revision and
// reads the calendar in one round trip. The statement is kept prepared.
func (db *DB) BusyEntriesWithRevision(ctx context.Context, providerIDs []string, from, to time.Time) ([]bokat.CalendarEntry, int64, error) {
	if len(providerIDs) == 0 || !from.Before(to) {
		rev, err := db.SupplyRevision(ctx)
		return nil, rev, err
	}
	args := make([]any, 0, len(providerIDs)+2)
	args = append(args, Millis(from), Millis(to))
	args = append(args, stringArgs(providerIDs)...)
	query := `SELECT r.revision, c.id, c.provider_id, c.booking_id, c.kind, c.start_at, c.end_at
		  FROM supply_revision r
		  LEFT JOIN calendar_entries c ON c.active AND c.provider_id IN (` + placeholders(3, len(providerIDs)) + `)
		       AND c.end_at > $1 AND +c.start_at < $2
		 WHERE r.id = 1
		 ORDER BY c.provider_id, c.start_at, c.id`
	var (
		rows *sql.Rows
		err  error
	)
	if len(providerIDs) > maxPreparedBusyIDs {
		rows, err = db.read.QueryContext(ctx, query, args...)
	} else {
		var st *sql.Stmt
		if st, err = db.readStmt(ctx, query); err != nil {
			return nil, 0, err
		}
		rows, err = st.QueryContext(ctx, args...)
	}
	if err != nil {
		return nil, 0, translate(err)
	}
	defer rows.Close()
	var (
		rev int64
		out []bokat.CalendarEntry
	)
	for rows.Next() {
		var (
			id, provider, kind sql.NullString
			booking            sql.NullString
			start, end         sql.NullInt64
		)
		if err := rows.Scan(&rev, &id, &provider, &booking, &kind, &start, &end); err != nil {
			return nil, 0, translate(err)
		}
		if !id.Valid {
			continue // no entry: the row carries the revision only
		}
		out = append(out, bokat.CalendarEntry{ID: id.String, ProviderID: provider.String, BookingID: booking.String,
			Kind: kind.String, Start: FromMillis(start.Int64), End: FromMillis(end.Int64), Active: true})
	}
	return out, rev, translate(rows.Err())
}

func placeholders(first, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("$" + strconv.Itoa(first+i))
	}
	return b.String()
}

func stringArgs(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// BusyEntries is DB.BusyEntries inside the transaction.
func (tx *Tx) BusyEntries(ctx context.Context, providerIDs []string, from, to time.Time) ([]bokat.CalendarEntry, error) {
	if len(providerIDs) == 0 || !from.Before(to) {
		return nil, nil
	}
	query, args := busyQuery(providerIDs, from, to)
	return scanBusy(tx.tx.QueryContext(ctx, query, args...))
}

// maxPreparedBusyIDs bounds the provider lists whose busy query is kept
// prepared (one statement per list length).
const maxPreparedBusyIDs = 32

// busyQuery reads the entries overlapping [from, to). The unary plus keeps
// the planners off the (provider_id, start_at) index, whose range
// "start_at < to" spans every past entry of the provider, and on the
// partial (provider_id, end_at) index, whose range "end_at > from" spans
// only what is still to come.
func busyQuery(providerIDs []string, from, to time.Time) (string, []any) {
	args := make([]any, 0, len(providerIDs)+2)
	args = append(args, Millis(from), Millis(to))
	args = append(args, stringArgs(providerIDs)...)
	return `SELECT id, provider_id, booking_id, kind, start_at, end_at FROM calendar_entries
		  WHERE active AND provider_id IN (` + placeholders(3, len(providerIDs)) + `) AND end_at > $1 AND +start_at < $2
		  ORDER BY provider_id, start_at, id`, args
}

func scanBusy(rows *sql.Rows, err error) ([]bokat.CalendarEntry, error) {
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []bokat.CalendarEntry
	for rows.Next() {
		var (
			e          bokat.CalendarEntry
			booking    sql.NullString
			start, end int64
		)
		if err := rows.Scan(&e.ID, &e.ProviderID, &booking, &e.Kind, &start, &end); err != nil {
			return nil, translate(err)
		}
		e.BookingID = booking.String
		e.Start, e.End, e.Active = FromMillis(start), FromMillis(end), true
		out = append(out, e)
	}
	return out, translate(rows.Err())
}

// ImportOutcome says what importing one provider changed.
type ImportOutcome string

// Import outcomes.
const (
	ImportCreated   ImportOutcome = "created"
	ImportUpdated   ImportOutcome = "updated"
	ImportUnchanged ImportOutcome = "unchanged"
)

// PutProviderSupply makes the stored supply of p.ID equal p: the provider
// row, its postcodes, services, hours and active blocked periods (matched by
// id). Only the parts that differ are written, so putting the same supply
// again writes nothing and reports ImportUnchanged. Booking entries of the
// calendar are never touched. A change bumps the supply revision.
func (tx *Tx) PutProviderSupply(ctx context.Context, p bokat.ProviderSupply, now time.Time) (ImportOutcome, error) {
	p = NormalizeSupply(p)
	old, err := tx.ProviderSupply(ctx, p.ID)
	exists := err == nil
	if err != nil && !errors.Is(err, bokat.ErrNotFound) {
		return "", err
	}
	q := tx.tx
	changed := false
	if !exists {
		_, err := q.ExecContext(ctx, `INSERT INTO providers (id, name, city, rating_label, email, phone, active,
			min_notice_minutes, horizon_days, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)`,
			p.ID, p.Name, p.City, p.RatingLabel, p.Email, p.Phone, p.Active, p.MinNoticeMinutes, p.HorizonDays, Millis(now))
		if err != nil {
			return "", translate(err)
		}
		changed = true
	} else if old.Provider != p.Provider {
		_, err := q.ExecContext(ctx, `UPDATE providers SET name = $2, city = $3, rating_label = $4, email = $5, phone = $6,
			active = $7, min_notice_minutes = $8, horizon_days = $9, updated_at = $10 WHERE id = $1`,
			p.ID, p.Name, p.City, p.RatingLabel, p.Email, p.Phone, p.Active, p.MinNoticeMinutes, p.HorizonDays, Millis(now))
		if err != nil {
			return "", translate(err)
		}
		changed = true
	}
	if !slices.Equal(old.Postcodes, p.Postcodes) {
		if _, err := q.ExecContext(ctx, `DELETE FROM provider_postcodes WHERE provider_id = $1`, p.ID); err != nil {
			return "", translate(err)
		}
		for _, r := range p.Postcodes {
			if _, err := q.ExecContext(ctx, `INSERT INTO provider_postcodes (provider_id, postcode_from, postcode_to)
				VALUES ($1, $2, $3)`, p.ID, r.From, r.To); err != nil {
				return "", translate(err)
			}
		}
		changed = true
	}
	if !slices.Equal(old.Services, p.Services) {
		if _, err := q.ExecContext(ctx, `DELETE FROM provider_services WHERE provider_id = $1`, p.ID); err != nil {
			return "", translate(err)
		}
		for _, s := range p.Services {
			if _, err := q.ExecContext(ctx, `INSERT INTO provider_services (provider_id, service_id, price_sek,
				unit_price_sek, minimum_charge_sek, fixed_minutes, minutes_per_unit, minimum_minutes)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, p.ID, s.ServiceID, s.PriceSEK, s.UnitPriceSEK,
				s.MinimumChargeSEK, s.Duration.FixedMinutes, s.Duration.MinutesPerUnit, s.Duration.MinimumMinutes); err != nil {
				return "", translate(err)
			}
		}
		changed = true
	}
	if !slices.Equal(old.Hours, p.Hours) {
		if _, err := q.ExecContext(ctx, `DELETE FROM provider_hours WHERE provider_id = $1`, p.ID); err != nil {
			return "", translate(err)
		}
		for _, h := range p.Hours {
			if _, err := q.ExecContext(ctx, `INSERT INTO provider_hours (provider_id, weekday, start_minute, end_minute)
				VALUES ($1, $2, $3, $4)`, p.ID, int(h.Weekday), h.StartMinute, h.EndMinute); err != nil {
				return "", translate(err)
			}
		}
		changed = true
	}
	if !blockedEqual(old.Blocked, p.Blocked) {
		want := map[string]bool{}
		for _, b := range p.Blocked {
			want[b.ID] = true
		}
		for _, b := range old.Blocked {
			if !want[b.ID] {
				if _, err := q.ExecContext(ctx, `DELETE FROM calendar_entries WHERE id = $1 AND kind = 'blocked'`, b.ID); err != nil {
					return "", translate(err)
				}
			}
		}
		have := map[string]bokat.BlockedPeriod{}
		for _, b := range old.Blocked {
			have[b.ID] = b
		}
		for _, b := range p.Blocked {
			if o, ok := have[b.ID]; ok && o.Start.Equal(b.Start) && o.End.Equal(b.End) && o.Note == b.Note {
				continue
			}
			_, err := q.ExecContext(ctx, `INSERT INTO calendar_entries (id, provider_id, booking_id, kind, start_at, end_at,
				active, note, created_at) VALUES ($1, $2, NULL, 'blocked', $3, $4, TRUE, $5, $6)
				ON CONFLICT (id) DO UPDATE SET start_at = excluded.start_at, end_at = excluded.end_at,
				active = TRUE, note = excluded.note`,
				b.ID, p.ID, Millis(b.Start), Millis(b.End), b.Note, Millis(now))
			if err != nil {
				return "", translate(err)
			}
		}
		changed = true
	}
	switch {
	case !changed:
		return ImportUnchanged, nil
	case !exists:
		return ImportCreated, tx.bumpSupplyRevision(ctx)
	default:
		return ImportUpdated, tx.bumpSupplyRevision(ctx)
	}
}

func (tx *Tx) bumpSupplyRevision(ctx context.Context) error {
	_, err := tx.tx.ExecContext(ctx, `UPDATE supply_revision SET revision = revision + 1 WHERE id = 1`)
	return translate(err)
}

// NormalizeSupply returns p with its lists sorted the way the store returns
// them, so two supplies compare equal when they say the same.
func NormalizeSupply(p bokat.ProviderSupply) bokat.ProviderSupply {
	p.Postcodes = slices.Clone(p.Postcodes)
	slices.SortFunc(p.Postcodes, func(a, b bokat.PostcodeRange) int {
		if a.From != b.From {
			return a.From - b.From
		}
		return a.To - b.To
	})
	p.Postcodes = slices.Compact(p.Postcodes)
	p.Services = slices.Clone(p.Services)
	slices.SortFunc(p.Services, func(a, b bokat.ProviderService) int { return strings.Compare(a.ServiceID, b.ServiceID) })
	p.Hours = slices.Clone(p.Hours)
	slices.SortFunc(p.Hours, func(a, b bokat.WorkingRange) int {
		if a.Weekday != b.Weekday {
			return int(a.Weekday) - int(b.Weekday)
		}
		return a.StartMinute - b.StartMinute
	})
	p.Blocked = slices.Clone(p.Blocked)
	for i := range p.Blocked {
		p.Blocked[i].Start = p.Blocked[i].Start.UTC().Truncate(time.Millisecond)
		p.Blocked[i].End = p.Blocked[i].End.UTC().Truncate(time.Millisecond)
	}
	slices.SortFunc(p.Blocked, func(a, b bokat.BlockedPeriod) int {
		if c := a.Start.Compare(b.Start); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return p
}

func blockedEqual(a, b []bokat.BlockedPeriod) bool {
	return slices.EqualFunc(a, b, func(x, y bokat.BlockedPeriod) bool {
		return x.ID == y.ID && x.Start.Equal(y.Start) && x.End.Equal(y.End) && x.Note == y.Note
	})
}

// ProviderContact is how to reach a provider. It is for notification code
// only: contact data never goes into API responses, logs or events.
type ProviderContact struct {
	ID     string
	Name   string
	Email  string
	Phone  string
	Active bool
}

// ProviderContact returns the provider's name and contact data, or an error
// wrapping bokat.ErrNotFound when there is no such provider.
func (db *DB) ProviderContact(ctx context.Context, providerID string) (ProviderContact, error) {
	c := ProviderContact{ID: providerID}
	err := db.read.QueryRowContext(ctx, `SELECT name, email, phone, active FROM providers WHERE id = $1`, providerID).
		Scan(&c.Name, &c.Email, &c.Phone, &c.Active)
	if err != nil {
		return ProviderContact{}, fmt.Errorf("provider %s: %w", providerID, translate(err))
	}
	return c, nil
}
