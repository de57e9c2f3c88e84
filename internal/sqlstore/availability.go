package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"bokat"
	"bokat/internal/booking"
)

// Revisions returns the supply and the calendar revision, read together in
// one statement. The statement is kept prepared: a search runs it on every
// request to check its cached supply and calendar.
func (db *DB) Revisions(ctx context.Context) (supply, calendar int64, err error) {
	st, err := db.readStmt(ctx, `SELECT s.revision, c.revision FROM supply_revision s, calendar_revision c
		 WHERE s.id = 1 AND c.id = 1`)
	if err != nil {
		return 0, 0, err
	}
	err = st.QueryRowContext(ctx).Scan(&supply, &calendar)
	return supply, calendar, translate(err)
}

// supplyRun is how many providers ReadAvailability hands its caller at a
// time.
const supplyRun = 2000

// ReadAvailability reads, in one read-only transaction (one snapshot on
// PostgreSQL: REPEATABLE READ), the current revisions; the supply when its
// revision is not supplyRev, handed to supply in runs of at most supplyRun
// providers ordered by id (not read when supply is nil); and the active calendar entries ending after
// endAfter: of every provider when full is set or calendarRev is negative,
// else of the providers whose calendar changed after calendarRev, however
// many they are (a delta read costs what changed; at worst, every
// provider, what a full read costs).
func (db *DB) ReadAvailability(ctx context.Context, supplyRev, calendarRev int64, full bool, endAfter time.Time,
	supply func([]bokat.ProviderSupply) error) (booking.Availability, error) {
	opts := &sql.TxOptions{ReadOnly: true}
	if db.engine == Postgres {
		opts.Isolation = sql.LevelRepeatableRead
	}
	tx, err := db.read.BeginTx(ctx, opts)
	if err != nil {
		return booking.Availability{}, translate(err)
	}
	defer tx.Rollback()
	var a booking.Availability
	if err := tx.QueryRowContext(ctx, `SELECT s.revision, c.revision FROM supply_revision s, calendar_revision c
		 WHERE s.id = 1 AND c.id = 1`).Scan(&a.SupplyRevision, &a.CalendarRevision); err != nil {
		return booking.Availability{}, translate(err)
	}
	a.SupplyRead = a.SupplyRevision != supplyRev && supply != nil
	a.Full = full || calendarRev < 0
	if !a.SupplyRead || !a.Full {
		if a.SupplyRead {
			if err := loadProviderRuns(ctx, tx, supplyRun, supply); err != nil {
				return booking.Availability{}, err
			}
		}
		err := readCalendar(ctx, tx, &a, calendarRev, endAfter)
		return a, err
	}
	// The whole supply and the whole calendar (a build): the supply is read
	// on a second connection meanwhile, from a snapshot at the same
	// revisions — so the same rows: every supply write moves the supply
	// revision in its transaction, every calendar write the calendar's —
	// else, should a write have committed between the two, after the
	// calendar in this one.
	bctx, cancel := context.WithCancel(ctx)
	defer cancel()
	beside := make(chan error, 1)
	go func() { beside <- db.readSupplyBeside(bctx, opts, a.SupplyRevision, a.CalendarRevision, supply) }()
	err = readCalendar(ctx, tx, &a, calendarRev, endAfter)
	if err != nil {
		cancel()
	}
	berr := <-beside
	if err != nil {
		return booking.Availability{}, err
	}
	if errors.Is(berr, errSnapshotMoved) {
		berr = loadProviderRuns(ctx, tx, supplyRun, supply)
	}
	if berr != nil {
		return booking.Availability{}, berr
	}
	return a, nil
}

// errSnapshotMoved: a write committed between two snapshots meant to be at
// the same revisions.
var errSnapshotMoved = errors.New("the revisions moved between two reads")

// readSupplyBeside reads the supply as ReadAvailability does, in a
// transaction of its own that must be at the revisions given: else it
// reads nothing and returns errSnapshotMoved.
func (db *DB) readSupplyBeside(ctx context.Context, opts *sql.TxOptions, supplyRev, calendarRev int64,
	supply func([]bokat.ProviderSupply) error) error {
	tx, err := db.read.BeginTx(ctx, opts)
	if err != nil {
		return translate(err)
	}
	defer tx.Rollback()
	var s, c int64
	if err := tx.QueryRowContext(ctx, `SELECT s.revision, c.revision FROM supply_revision s, calendar_revision c
		 WHERE s.id = 1 AND c.id = 1`).Scan(&s, &c); err != nil {
		return translate(err)
	}
	if s != supplyRev || c != calendarRev {
		return errSnapshotMoved
	}
	return loadProviderRuns(ctx, tx, supplyRun, supply)
}

// readCalendar reads into a, inside tx, the active calendar entries ending
// after endAfter: of every provider when a.Full, else of the providers
// whose calendar changed after calendarRev.
func readCalendar(ctx context.Context, tx *sql.Tx, a *booking.Availability, calendarRev int64, endAfter time.Time) error {
	if !a.Full && a.CalendarRevision != calendarRev {
		rows, err := tx.QueryContext(ctx, `SELECT provider_id FROM calendar_changes WHERE rev > $1 ORDER BY provider_id`, calendarRev)
		if err != nil {
			return translate(err)
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return translate(err)
			}
			a.Changed = append(a.Changed, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return translate(err)
		}
	}
	// The entries are counted first and read into two slices of that
	// size, each provider's calendar a run of them: a full read holds
	// millions, which search keeps as read, so nothing is allocated twice
	// and nothing per entry. Kinds are compared without a string each.
	var where string
	var args []any
	switch {
	case a.Full:
		where, args = `FROM calendar_entries c WHERE c.active AND c.end_at > $1`, []any{Millis(endAfter)}
	case len(a.Changed) > 0:
		where, args = `FROM calendar_changes ch JOIN calendar_entries c ON c.provider_id = ch.provider_id
			 WHERE ch.rev > $1 AND c.active AND c.end_at > $2`, []any{calendarRev, Millis(endAfter)}
	default:
		return nil
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) `+where, args...).Scan(&n); err != nil {
		return translate(err)
	}
	// The kind is read as a truth value: a string per entry is garbage
	// (a national calendar has millions) that the collector must keep room
	// for while a reload holds two indexes.
	rows, err := tx.QueryContext(ctx, `SELECT c.provider_id, c.kind = 'booking', c.start_at, c.end_at `+where+` ORDER BY c.provider_id, c.start_at, c.id`, args...)
	if err != nil {
		return translate(err)
	}
	defer rows.Close()
	spans, kinds := make([]booking.BusySpan, 0, n), make([]bool, 0, n)
	from := 0
	flush := func() {
		if last := len(a.Calendars) - 1; last >= 0 {
			k := len(spans)
			a.Calendars[last].Spans, a.Calendars[last].Booking = spans[from:k:k], kinds[from:k:k]
			from = k
		}
	}
	var (
		id         sql.RawBytes
		isBooking  bool
		start, end int64
	)
	for rows.Next() {
		if err := rows.Scan(&id, &isBooking, &start, &end); err != nil {
			return translate(err)
		}
		if last := len(a.Calendars) - 1; last < 0 || string(id) != a.Calendars[last].ProviderID {
			flush()
			a.Calendars = append(a.Calendars, booking.ProviderCalendar{ProviderID: string(id)})
		}
		spans, kinds = append(spans, booking.BusySpan{Start: start, End: end}), append(kinds, isBooking)
	}
	flush()
	return translate(rows.Err())
}
