package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"bokat"
	"bokat/internal/booking"
	"bokat/internal/supply"
)

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
func (db *DB) LoadSupply(ctx context.Context) (booking.Supply, error) {
	opts := &sql.TxOptions{ReadOnly: true}
	if db.engine == Postgres {
		opts.Isolation = sql.LevelRepeatableRead // one snapshot for every statement
	}
	tx, err := db.read.BeginTx(ctx, opts)
	if err != nil {
		return booking.Supply{}, translate(err)
	}
	defer tx.Rollback()
	var s booking.Supply
	if err := tx.QueryRowContext(ctx, `SELECT revision FROM supply_revision WHERE id = 1`).Scan(&s.Revision); err != nil {
		return booking.Supply{}, translate(err)
	}
	if s.Providers, err = loadProviders(ctx, tx, ""); err != nil {
		return booking.Supply{}, err
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
	if id == "" {
		return loadProvidersIn(ctx, q, nil)
	}
	return loadProvidersIn(ctx, q, []string{id})
}

// loadProvidersIn reads the providers of ids (every provider when ids is
// nil) with their postcodes, services and hours, sorted by id: one query
// per table, each adding its rows to the providers read first. The rows of
// each table land in one slice of exactly their count, and each provider's
// list is its run of it (capacity-limited, so an append to one list never
// writes into the next): a search keeps the whole supply while it is
// current, and a national one has over a million service rows.
//
// The other tables are asked for the providers found only: ids an import
// is about to create have no rows there, and a list of them would cost a
// lookup per id and table (a statement planned, mid-import, without
// statistics of the tables it fills).
func loadProvidersIn(ctx context.Context, q Reader, ids []string) ([]bokat.ProviderSupply, error) {
	f := newProviderFilter(ids)
	byID, order, err := readProviders(ctx, q, f)
	if err != nil || len(order) == 0 {
		return nil, err
	}
	if ids != nil && len(order) < len(ids) {
		f = newProviderFilter(order)
	}
	return readProviderTables(ctx, q, f, byID, order)
}

// loadProviderRuns reads every provider as loadProvidersIn does, but a run
// of at most n providers (the next ones by id) at a time, and hands each
// run to fn before it reads the next. A caller that keeps a compact form of
// each run holds the rows of one run at a time instead of the whole
// supply's (a national one has over a million service rows).
func loadProviderRuns(ctx context.Context, q Reader, n int, fn func([]bokat.ProviderSupply) error) error {
	after := ""
	for {
		// The last id of the run: the run is the ids in (after, last].
		var last sql.NullString
		if err := q.QueryRowContext(ctx, `SELECT MAX(id) FROM (SELECT id FROM providers WHERE id > $1 ORDER BY id LIMIT $2) run`,
			after, n).Scan(&last); err != nil {
			return translate(err)
		}
		if !last.Valid {
			return nil
		}
		run, err := loadProvidersWhere(ctx, q, providerFilter{byProvider: " WHERE provider_id > $1 AND provider_id <= $2",
			byID: " WHERE id > $1 AND id <= $2", args: []any{after, last.String}})
		if err != nil {
			return err
		}
		if err := fn(run); err != nil {
			return err
		}
		after = last.String
	}
}

// loadProvidersWhere reads the providers of f as loadProvidersIn does.
func loadProvidersWhere(ctx context.Context, q Reader, f providerFilter) ([]bokat.ProviderSupply, error) {
	byID, order, err := readProviders(ctx, q, f)
	if err != nil {
		return nil, err
	}
	return readProviderTables(ctx, q, f, byID, order)
}

// readProviderTables adds to the providers read (byID, in order) their
// rows of the other supply tables that f selects.
func readProviderTables(ctx context.Context, q Reader, f providerFilter, byID map[string]*bokat.ProviderSupply,
	order []string) ([]bokat.ProviderSupply, error) {
	for _, read := range []func(context.Context, Reader, providerFilter, map[string]*bokat.ProviderSupply) error{
		readProviderPostcodes, readProviderServices, readProviderHours, readProviderDayHours,
	} {
		if err := read(ctx, q, f, byID); err != nil {
			return nil, err
		}
	}
	out := make([]bokat.ProviderSupply, 0, len(order))
	for _, id := range order {
		out = append(out, *byID[id])
	}
	return out, nil
}

// providerFilter is the WHERE clause that limits the supply tables to some
// providers (empty for all): byProvider for the tables keyed by
// provider_id, byID for providers itself, with their arguments.
type providerFilter struct {
	byProvider, byID string
	args             []any
}

func newProviderFilter(ids []string) providerFilter {
	f := providerFilter{args: stringArgs(ids)}
	if ids != nil {
		in := placeholders(1, len(ids))
		f.byProvider, f.byID = " WHERE provider_id IN ("+in+")", " WHERE id IN ("+in+")"
	}
	return f
}

// eachRow runs query on q and calls row with the Scan of each result row;
// the first error of the query, a row or the iteration ends it.
func eachRow(ctx context.Context, q Reader, query string, args []any, row func(scan func(dest ...any) error) error) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return translate(err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := row(rows.Scan); err != nil {
			return translate(err)
		}
	}
	return translate(rows.Err())
}

// readRuns reads the rows of a per-provider table (columns: provider_id,
// then cols; ordered by provider_id, then order) into one slice sized by a
// count of the rows first, and hands each provider of byID its run of it
// through set. scan reads a row's columns after provider_id into a value.
// scan is called with the same pid and value pointers for every row (it
// may keep them). Rows of providers not in byID are skipped. The count only sizes the
// slice: should rows appear between it and the read, the slice grows.
func readRuns[T any](ctx context.Context, q Reader, table, cols, order string, f providerFilter,
	byID map[string]*bokat.ProviderSupply, scan func(scan func(...any) error, pid *sql.RawBytes, v *T) error,
	set func(p *bokat.ProviderSupply, run []T)) error {
	var n int
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+table+f.byProvider, f.args...).Scan(&n); err != nil {
		return translate(err)
	}
	all := make([]T, 0, n)
	var (
		cur   *bokat.ProviderSupply
		curID string
		from  int
	)
	flush := func() {
		if cur != nil && len(all) > from {
			set(cur, all[from:len(all):len(all)])
		}
	}
	var (
		pid sql.RawBytes
		v   T
	)
	err := eachRow(ctx, q, `SELECT provider_id, `+cols+` FROM `+table+f.byProvider+` ORDER BY provider_id, `+order, f.args,
		func(s func(...any) error) error {
			v = *new(T)
			if err := scan(s, &pid, &v); err != nil {
				return err
			}
			if cur == nil || string(pid) != curID {
				flush()
				cur, from = byID[string(pid)], len(all)
				if cur != nil {
					curID = cur.ID
				}
			}
			if cur != nil {
				all = append(all, v)
			}
			return nil
		})
	flush()
	return err
}

// readProviders reads the providers table: the providers by id, and their
// ids in order. Cities, rating labels and modes repeat across providers:
// each distinct one is kept once.
func readProviders(ctx context.Context, q Reader, f providerFilter) (map[string]*bokat.ProviderSupply, []string, error) {
	byID := map[string]*bokat.ProviderSupply{}
	var order []string
	intern := map[string]string{}
	once := func(s string) string {
		if v, ok := intern[s]; ok {
			return v
		}
		intern[s] = s
		return s
	}
	err := eachRow(ctx, q, `SELECT id, name, city, rating_label, email, phone, active, min_notice_minutes,
		horizon_days, paused_until, mode FROM providers`+f.byID+` ORDER BY id`, f.args, func(scan func(...any) error) error {
		var (
			p      bokat.ProviderSupply
			paused int64
		)
		if err := scan(&p.ID, &p.Name, &p.City, &p.RatingLabel, &p.Email, &p.Phone, &p.Active,
			&p.MinNoticeMinutes, &p.HorizonDays, &paused, &p.Mode); err != nil {
			return err
		}
		if paused != 0 {
			p.PausedUntil = FromMillis(paused)
		}
		p.City, p.RatingLabel, p.Mode = once(p.City), once(p.RatingLabel), bokat.Mode(once(string(p.Mode)))
		byID[p.ID] = &p
		order = append(order, p.ID)
		return nil
	})
	return byID, order, err
}

// readProviderPostcodes adds the provider_postcodes rows to their providers.
func readProviderPostcodes(ctx context.Context, q Reader, f providerFilter, byID map[string]*bokat.ProviderSupply) error {
	return readRuns(ctx, q, "provider_postcodes", "postcode_from, postcode_to", "postcode_from, postcode_to", f, byID,
		func(scan func(...any) error, pid *sql.RawBytes, r *bokat.PostcodeRange) error {
			return scan(pid, &r.From, &r.To)
		},
		func(p *bokat.ProviderSupply, run []bokat.PostcodeRange) { p.Postcodes = run })
}

// readProviderServices adds the provider_services rows to their providers.
func readProviderServices(ctx context.Context, q Reader, f providerFilter, byID map[string]*bokat.ProviderSupply) error {
	// Service ids repeat across providers: the supply keeps one string per
	// id, read without a string per row.
	serviceIDs := map[string]string{}
	var (
		id     sql.RawBytes
		labour sql.NullInt64
		dest   []any
	)
	return readRuns(ctx, q, "provider_services", `service_id, price_sek, unit_price_sek, minimum_charge_sek,
		fixed_minutes, minutes_per_unit, minimum_minutes, labour_percent`, "service_id", f, byID,
		func(scan func(...any) error, pid *sql.RawBytes, s *bokat.ProviderService) error {
			if dest == nil { // pid and s are the same for every row
				dest = []any{pid, &id, &s.PriceSEK, &s.UnitPriceSEK, &s.MinimumChargeSEK,
					&s.Duration.FixedMinutes, &s.Duration.MinutesPerUnit, &s.Duration.MinimumMinutes, &labour}
			}
			if err := scan(dest...); err != nil {
				return err
			}
			if labour.Valid {
				s.Labour = bokat.StatedLabour(int(labour.Int64))
			}
			var ok bool
			if s.ServiceID, ok = serviceIDs[string(id)]; !ok {
				s.ServiceID = string(id)
				serviceIDs[s.ServiceID] = s.ServiceID
			}
			return nil
		},
		func(p *bokat.ProviderSupply, run []bokat.ProviderService) { p.Services = run })
}

// readProviderHours adds the provider_hours rows to their providers.
func readProviderHours(ctx context.Context, q Reader, f providerFilter, byID map[string]*bokat.ProviderSupply) error {
	var wd int
	return readRuns(ctx, q, "provider_hours", "weekday, start_minute, end_minute", "weekday, start_minute", f, byID,
		func(scan func(...any) error, pid *sql.RawBytes, h *bokat.WorkingRange) error {
			if err := scan(pid, &wd, &h.StartMinute, &h.EndMinute); err != nil {
				return err
			}
			h.Weekday = time.Weekday(wd)
			return nil
		},
		func(p *bokat.ProviderSupply, run []bokat.WorkingRange) { p.Hours = run })
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

var (
	_ supply.Tx    = (*Tx)(nil)
	_ supply.Store = Bound[supply.Tx]{}
)

// PutProviderSupply makes the stored supply of p.ID equal p: the provider
// row, its postcodes, services, hours and active blocked periods (matched by
// id). Only the parts that differ are written, so putting the same supply
// again writes nothing and reports supply.Unchanged. Booking entries of the
// calendar are never touched. A change bumps the supply revision.
func (tx *Tx) PutProviderSupply(ctx context.Context, p bokat.ProviderSupply, now time.Time) (supply.Outcome, error) {
	out, err := tx.PutSupply(ctx, []bokat.ProviderSupply{p}, now)
	if err != nil {
		return "", err
	}
	return out[0], nil
}

// Batch sizes of PutSupply: providers read per query, and bound parameters
// per multi-row statement (well below SQLite's 32,766 and PostgreSQL's
// 65,535).
const (
	supplyReadBatch   = 500
	supplyWriteParams = 6000
)

// PutSupply is PutProviderSupply for many providers at once, with one
// outcome per provider in the order given. It reads what the store holds
// for them in a few queries per batch of providers and writes what differs
// with multi-row statements, so its cost grows with the rows written, not
// with the round trips per provider. A provider id given twice is an error.
// Any change bumps the supply revision once.
func (tx *Tx) PutSupply(ctx context.Context, ps []bokat.ProviderSupply, now time.Time) ([]supply.Outcome, error) {
	ps, ids, err := normalizeBatch(ps)
	if err != nil {
		return nil, err
	}
	old, err := tx.storedSupply(ctx, ids)
	if err != nil {
		return nil, err
	}
	c := supplyChanges{nowMS: Millis(now)}
	out := make([]supply.Outcome, len(ps))
	for i, p := range ps {
		o, exists := old[p.ID]
		out[i] = c.add(p, o, exists)
	}
	if err := tx.writeSupplyChanges(ctx, &c); err != nil {
		return nil, err
	}
	if slices.ContainsFunc(out, func(o supply.Outcome) bool { return o != supply.Unchanged }) {
		if err := tx.bumpSupplyRevision(ctx); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// normalizeBatch returns a copy of ps with every provider normalised
// (normalizeForPut) and their ids, or an error for an id given twice.
func normalizeBatch(ps []bokat.ProviderSupply) ([]bokat.ProviderSupply, []string, error) {
	ps = slices.Clone(ps)
	ids := make([]string, len(ps))
	seen := make(map[string]bool, len(ps))
	for i := range ps {
		ps[i] = normalizeForPut(ps[i])
		if seen[ps[i].ID] {
			return nil, nil, fmt.Errorf("provider %s is given twice", ps[i].ID)
		}
		seen[ps[i].ID] = true
		ids[i] = ps[i].ID
	}
	return ps, ids, nil
}

// supplyChanges is what PutSupply writes, gathered table by table from the
// differences between the given providers and the stored ones.
type supplyChanges struct {
	nowMS        int64
	newProviders []any // rows of providers to insert, flattened
	updated      []bokat.Provider
	// The child tables: postcodes, services and hours are replaced per
	// provider (clear holds provider ids), blocked periods per entry
	// (clear holds the calendar entry ids no longer given). A created
	// provider's blocked periods are in createdBlocked: no entry can have
	// their ids yet (an id is derived from the provider's), so they are
	// inserted without the upsert's check of the primary key per row.
	postcodes, services, hours, blocked, createdBlocked tableChange
}

// tableChange is the change of one table: the keys whose rows are deleted,
// and the rows then inserted, flattened.
type tableChange struct {
	clear []string
	rows  []any
}

// add gathers the changes of provider p over its stored state o (exists
// false: none) and returns p's outcome.
func (c *supplyChanges) add(p, o bokat.ProviderSupply, exists bool) supply.Outcome {
	changed := []bool{c.provider(p, o, exists), c.addPostcodes(p, o, exists), c.addServices(p, o, exists),
		c.addHours(p, o, exists), c.addBlocked(p, o, exists)}
	switch {
	case !slices.Contains(changed, true):
		return supply.Unchanged
	case !exists:
		return supply.Created
	}
	return supply.Updated
}

// provider gathers the change of p's providers row. A new provider is
// stored in p's realm (live when unset); an import never moves a stored
// provider to another realm.
func (c *supplyChanges) provider(p, o bokat.ProviderSupply, exists bool) bool {
	switch {
	case !exists:
		c.newProviders = append(c.newProviders, p.ID, p.Name, p.City, p.RatingLabel, p.Email, p.Phone, p.Active,
			p.MinNoticeMinutes, p.HorizonDays, c.nowMS, c.nowMS, string(p.Mode.Or()))
		return true
	}
	p.Mode = o.Mode
	switch {
	case o.Provider != p.Provider:
		c.updated = append(c.updated, p.Provider)
		return true
	}
	return false
}

// replaces starts the replacement of a provider's rows in t: the stored
// ones are cleared first when the provider exists.
func (t *tableChange) replaces(id string, exists bool) {
	if exists {
		t.clear = append(t.clear, id)
	}
}

// addPostcodes gathers the change of p's provider_postcodes rows.
func (c *supplyChanges) addPostcodes(p, o bokat.ProviderSupply, exists bool) bool {
	if slices.Equal(o.Postcodes, p.Postcodes) {
		return false
	}
	c.postcodes.replaces(p.ID, exists)
	for _, r := range p.Postcodes {
		c.postcodes.rows = append(c.postcodes.rows, p.ID, r.From, r.To)
	}
	return true
}

// addServices gathers the change of p's provider_services rows.
func (c *supplyChanges) addServices(p, o bokat.ProviderSupply, exists bool) bool {
	if slices.Equal(o.Services, p.Services) {
		return false
	}
	c.services.replaces(p.ID, exists)
	for _, s := range p.Services {
		labour := sql.NullInt64{Int64: int64(s.Labour.Percent), Valid: s.Labour.Stated}
		c.services.rows = append(c.services.rows, p.ID, s.ServiceID, s.PriceSEK, s.UnitPriceSEK, s.MinimumChargeSEK,
			s.Duration.FixedMinutes, s.Duration.MinutesPerUnit, s.Duration.MinimumMinutes, labour)
	}
	return true
}

// addHours gathers the change of p's provider_hours rows.
func (c *supplyChanges) addHours(p, o bokat.ProviderSupply, exists bool) bool {
	if slices.Equal(o.Hours, p.Hours) {
		return false
	}
	c.hours.replaces(p.ID, exists)
	for _, h := range p.Hours {
		c.hours.rows = append(c.hours.rows, p.ID, int(h.Weekday), h.StartMinute, h.EndMinute)
	}
	return true
}

// addBlocked gathers the change of p's blocked periods (calendar entries):
// the new or changed ones upserted, those no longer given deleted; a
// created provider's inserted.
func (c *supplyChanges) addBlocked(p, o bokat.ProviderSupply, exists bool) bool {
	if blockedEqual(o.Blocked, p.Blocked) {
		return false
	}
	rows := &c.blocked.rows
	if !exists {
		rows = &c.createdBlocked.rows // o has none: every period is new
	}
	have := make(map[string]bokat.BlockedPeriod, len(o.Blocked))
	for _, b := range o.Blocked {
		have[b.ID] = b
	}
	want := make(map[string]bool, len(p.Blocked))
	for _, b := range p.Blocked {
		want[b.ID] = true
		if h, ok := have[b.ID]; ok && h.Start.Equal(b.Start) && h.End.Equal(b.End) && h.Note == b.Note {
			continue
		}
		*rows = append(*rows, b.ID, p.ID, Millis(b.Start), Millis(b.End), b.Note, c.nowMS)
	}
	for _, b := range o.Blocked {
		if !want[b.ID] {
			c.blocked.clear = append(c.blocked.clear, b.ID)
		}
	}
	return true
}

// insertBlocked inserts blocked periods: six values per row, then
// blockedFixed.
const insertBlocked = `INSERT INTO calendar_entries (id, provider_id, start_at, end_at, note, created_at,
		booking_id, kind, active) VALUES `

var blockedFixed = []string{`NULL, 'blocked', TRUE`}

// writeSupplyChanges writes c: the providers rows, then every child
// table's deletions, then their insertions.
func (tx *Tx) writeSupplyChanges(ctx context.Context, c *supplyChanges) error {
	if err := tx.writeProviders(ctx, c); err != nil {
		return err
	}
	children := []struct {
		del, insert, conflict string
		cols                  int
		change                tableChange
		fixed                 []string
	}{
		{del: `DELETE FROM provider_postcodes WHERE provider_id IN (`,
			insert: `INSERT INTO provider_postcodes (provider_id, postcode_from, postcode_to) VALUES `,
			cols:   3, change: c.postcodes},
		{del: `DELETE FROM provider_services WHERE provider_id IN (`,
			insert: `INSERT INTO provider_services (provider_id, service_id, price_sek, unit_price_sek,
		minimum_charge_sek, fixed_minutes, minutes_per_unit, minimum_minutes, labour_percent) VALUES `,
			cols: 9, change: c.services},
		{del: `DELETE FROM provider_hours WHERE provider_id IN (`,
			insert: `INSERT INTO provider_hours (provider_id, weekday, start_minute, end_minute) VALUES `,
			cols:   4, change: c.hours},
		{del: `DELETE FROM calendar_entries WHERE kind = 'blocked' AND id IN (`,
			insert: insertBlocked,
			conflict: ` ON CONFLICT (id) DO UPDATE SET start_at = excluded.start_at,
		end_at = excluded.end_at, active = TRUE, note = excluded.note`,
			cols: 6, change: c.blocked, fixed: blockedFixed},
		{insert: insertBlocked, cols: 6, change: c.createdBlocked, fixed: blockedFixed},
	}
	for _, t := range children {
		if err := tx.deleteIn(ctx, t.del, t.change.clear); err != nil {
			return err
		}
	}
	for _, t := range children {
		if err := tx.insertRows(ctx, t.insert, t.conflict, t.cols, t.change.rows, t.fixed...); err != nil {
			return err
		}
	}
	return nil
}

// writeProviders inserts the new providers rows and updates the changed
// ones.
func (tx *Tx) writeProviders(ctx context.Context, c *supplyChanges) error {
	if err := tx.insertRows(ctx, `INSERT INTO providers (id, name, city, rating_label, email, phone, active,
		min_notice_minutes, horizon_days, created_at, updated_at, mode) VALUES `, "", 12, c.newProviders); err != nil {
		return err
	}
	if len(c.updated) == 0 {
		return nil
	}
	st, err := tx.tx.PrepareContext(ctx, `UPDATE providers SET name = $2, city = $3, rating_label = $4, email = $5,
			phone = $6, active = $7, min_notice_minutes = $8, horizon_days = $9, updated_at = $10 WHERE id = $1`)
	if err != nil {
		return translate(err)
	}
	defer st.Close()
	for _, p := range c.updated {
		if _, err := st.ExecContext(ctx, p.ID, p.Name, p.City, p.RatingLabel, p.Email, p.Phone, p.Active,
			p.MinNoticeMinutes, p.HorizonDays, c.nowMS); err != nil {
			return translate(err)
		}
	}
	return nil
}

// normalizeForPut is NormalizeSupply with blocked periods of one id kept
// once (the last given wins, as a row per id is stored).
func normalizeForPut(p bokat.ProviderSupply) bokat.ProviderSupply {
	last := make(map[string]int, len(p.Blocked))
	for i, b := range p.Blocked {
		last[b.ID] = i
	}
	if len(last) < len(p.Blocked) {
		kept := make([]bokat.BlockedPeriod, 0, len(last))
		for i, b := range p.Blocked {
			if last[b.ID] == i {
				kept = append(kept, b)
			}
		}
		p.Blocked = kept
	}
	return NormalizeSupply(p)
}

// storedSupply reads the stored supply (active blocked periods included) of
// the providers of ids that exist, batch by batch.
func (tx *Tx) storedSupply(ctx context.Context, ids []string) (map[string]bokat.ProviderSupply, error) {
	out := make(map[string]bokat.ProviderSupply, len(ids))
	for chunk := range slices.Chunk(ids, supplyReadBatch) {
		ps, err := loadProvidersIn(ctx, tx.tx, chunk)
		if err != nil {
			return nil, err
		}
		if len(ps) == 0 {
			continue // all to be created
		}
		byID := make(map[string]*bokat.ProviderSupply, len(ps))
		found := make([]string, len(ps))
		for i := range ps {
			byID[ps[i].ID] = &ps[i]
			found[i] = ps[i].ID
		}
		rows, err := tx.tx.QueryContext(ctx, `SELECT id, provider_id, start_at, end_at, note FROM calendar_entries
			WHERE kind = 'blocked' AND active AND provider_id IN (`+placeholders(1, len(found))+`)
			ORDER BY provider_id, start_at, id`, stringArgs(found)...)
		if err != nil {
			return nil, translate(err)
		}
		for rows.Next() {
			var (
				b          bokat.BlockedPeriod
				pid        string
				start, end int64
			)
			if err := rows.Scan(&b.ID, &pid, &start, &end, &b.Note); err != nil {
				rows.Close()
				return nil, translate(err)
			}
			b.Start, b.End = FromMillis(start), FromMillis(end)
			if p := byID[pid]; p != nil {
				p.Blocked = append(p.Blocked, b)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, translate(err)
		}
		for _, p := range ps {
			out[p.ID] = p
		}
	}
	return out, nil
}

// supplyArrayRows is the number of rows PostgreSQL gets per statement of
// insertArrays.
const supplyArrayRows = 50_000

// insertArrays is insertRows on PostgreSQL: one array parameter per column,
// expanded by unnest, so a statement of many rows has few parameters to
// bind and a short text to plan. Values are string, int, int64, bool or
// sql.NullInt64 (a NULL where not valid).
func (tx *Tx) insertArrays(ctx context.Context, head, tail string, cols int, args []any, fixed []string) error {
	for chunk := range slices.Chunk(args, supplyArrayRows*cols) {
		rows := len(chunk) / cols
		arrays := make([]any, cols)
		casts := make([]string, cols)
		for c := range cols {
			switch chunk[c].(type) {
			case string:
				a := make([]string, rows)
				for r := range rows {
					a[r] = chunk[r*cols+c].(string)
				}
				arrays[c], casts[c] = a, "text[]"
			case int, int64:
				a := make([]int64, rows)
				for r := range rows {
					switch v := chunk[r*cols+c].(type) {
					case int:
						a[r] = int64(v)
					case int64:
						a[r] = v
					}
				}
				arrays[c], casts[c] = a, "int8[]"
			case bool:
				a := make([]bool, rows)
				for r := range rows {
					a[r] = chunk[r*cols+c].(bool)
				}
				arrays[c], casts[c] = a, "bool[]"
			case sql.NullInt64:
				a := make([]*int64, rows)
				for r := range rows {
					if v := chunk[r*cols+c].(sql.NullInt64); v.Valid {
						a[r] = &v.Int64
					}
				}
				arrays[c], casts[c] = a, "int8[]"
			default:
				return fmt.Errorf("insert rows: unsupported value %T", chunk[c])
			}
		}
		var b strings.Builder
		b.WriteString(strings.Replace(head, "VALUES", "SELECT u.*", 1))
		for _, f := range fixed {
			b.WriteString(", " + f)
		}
		b.WriteString(" FROM unnest(")
		for c := range cols {
			if c > 0 {
				b.WriteString(", ")
			}
			b.WriteString("$" + strconv.Itoa(c+1) + "::" + casts[c])
		}
		b.WriteString(") AS u")
		b.WriteString(tail)
		if _, err := tx.tx.ExecContext(ctx, b.String(), arrays...); err != nil {
			return translate(err)
		}
	}
	return nil
}

// deleteIn runs head + "<placeholders>)" for keys, batch by batch.
func (tx *Tx) deleteIn(ctx context.Context, head string, keys []string) error {
	for chunk := range slices.Chunk(keys, supplyWriteParams) {
		if _, err := tx.tx.ExecContext(ctx, head+tx.params(1, len(chunk))+")", stringArgs(chunk)...); err != nil {
			return translate(err)
		}
	}
	return nil
}

// params is placeholders for long statements: SQLite gets anonymous "?"
// parameters, as its driver looks up the name of every numbered one in a
// list as long as the statement's (quadratic in a multi-row INSERT).
func (tx *Tx) params(first, n int) string {
	if tx.engine != SQLite {
		return placeholders(first, n)
	}
	return strings.Repeat("?, ", n-1) + "?"
}

// insertRows inserts rows of cols values each (args holds them one row after
// another) with multi-row statements head + "(...), (...)" + tail. Each row's
// placeholders are followed by fixed, a list of SQL literals for the
// trailing columns, when given. The statement of a full batch is prepared
// once.
func (tx *Tx) insertRows(ctx context.Context, head, tail string, cols int, args []any, fixed ...string) error {
	if len(args) == 0 {
		return nil
	}
	if tx.engine == Postgres {
		return tx.insertArrays(ctx, head, tail, cols, args, fixed)
	}
	perStmt := supplyWriteParams / cols
	query := func(rows int) string {
		var b strings.Builder
		b.WriteString(head)
		for r := range rows {
			if r > 0 {
				b.WriteString(", ")
			}
			b.WriteString("(" + tx.params(r*cols+1, cols))
			for _, f := range fixed {
				b.WriteString(", " + f)
			}
			b.WriteString(")")
		}
		b.WriteString(tail)
		return b.String()
	}
	var full *sql.Stmt
	defer func() {
		if full != nil {
			full.Close()
		}
	}()
	for chunk := range slices.Chunk(args, perStmt*cols) {
		rows := len(chunk) / cols
		var err error
		if rows == perStmt {
			if full == nil {
				if full, err = tx.tx.PrepareContext(ctx, query(rows)); err != nil {
					return translate(err)
				}
			}
			_, err = full.ExecContext(ctx, chunk...)
		} else {
			_, err = tx.tx.ExecContext(ctx, query(rows), chunk...)
		}
		if err != nil {
			return translate(err)
		}
	}
	return nil
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

// ProviderContact returns the provider's name and contact data, or an error
// wrapping bokat.ErrNotFound when there is no such provider.
func (db *DB) ProviderContact(ctx context.Context, providerID string) (bokat.ProviderContact, error) {
	c := bokat.ProviderContact{ID: providerID}
	err := db.read.QueryRowContext(ctx, `SELECT name, email, phone, active FROM providers WHERE id = $1`, providerID).
		Scan(&c.Name, &c.Email, &c.Phone, &c.Active)
	if err != nil {
		return bokat.ProviderContact{}, fmt.Errorf("provider %s: %w", providerID, translate(err))
	}
	return c, nil
}
