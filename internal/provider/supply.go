package provider

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"bokat"
	"bokat/internal/calsync"
	"bokat/internal/catalog"
	"bokat/internal/schedule"
	"bokat/internal/supply"
)

// The supply a provider keeps itself: blocked time, working hours (weekly,
// single dates, notice, horizon, a pause), prices and postcodes. These use
// cases are the one way pages and the provider API change a provider's
// supply; prices, hours and postcodes are checked by the supply file's own
// rules (supply.CheckProvider) and written by the import's own writer
// (PutProviderSupply), so a file and a provider are held to the same rules.
// Every change is one transaction with its audit row and marks its field
// group as the provider's own (the import then keeps it), and moves the
// supply revision or, for blocks, the calendar revision, so the next search
// of any process sees it.

// Audit actions of supply changes.
const (
	ActionBlockAdded   = "block.added"
	ActionBlockRemoved = "block.removed"
	ActionHoursSet     = "supply.hours"
	ActionDaySet       = "supply.day_hours"
	ActionPauseSet     = "supply.pause"
	ActionPricesSet    = "supply.prices"
	ActionPostcodesSet = "supply.postcodes"
)

// Limits of supply changes.
const (
	// MaxBlockWeeks is how many weeks a weekly block repeats at most.
	MaxBlockWeeks = 52
	// MaxBlockDays is the longest block of whole days.
	MaxBlockDays = 92
	// BlockNoteMax is the longest note of a block.
	BlockNoteMax = 200
	// MaxAheadDays bounds how far ahead a block, a date's hours or a pause
	// may lie.
	MaxAheadDays = 400
	// blockIDPrefix prefixes the ids of blocks a provider adds.
	blockIDPrefix = bokat.ProviderBlockIDPrefix
)

// Block is blocked time: one added by the provider (once, or the same
// hours weekly for Weeks weeks), or a blocked period of the supply file
// (FromFile; Weeks 1).
type Block struct {
	ID         string
	ProviderID string
	// WholeDays blocks whole Stockholm days [Start's day, End's day).
	WholeDays bool
	Weeks     int
	// Start and End bound the first occurrence.
	Start, End time.Time
	Note       string
	CreatedBy  string
	CreatedAt  time.Time
	FromFile   bool
}

// Occurrences returns the intervals the block makes busy: its first
// occurrence and the same Stockholm wall-clock times each following week.
func (b Block) Occurrences() []schedule.Interval {
	sd, ed := schedule.DateOf(b.Start), schedule.DateOf(b.End)
	sm, em := minuteOfDay(b.Start), minuteOfDay(b.End)
	out := make([]schedule.Interval, 0, max(b.Weeks, 1))
	for k := range max(b.Weeks, 1) {
		out = append(out, schedule.Interval{Start: sd.AddDays(7 * k).At(sm), End: ed.AddDays(7 * k).At(em)})
	}
	return out
}

func minuteOfDay(t time.Time) int {
	t = t.In(schedule.Stockholm())
	return t.Hour()*60 + t.Minute()
}

// BlockInput is a block as a form or an API request gives it: whole days
// From to To (inclusive; To empty for one day), or on the date From the
// hours StartTime to EndTime ("08:00", "12:00"); Weeks 0 or 1 for once,
// up to MaxBlockWeeks for weekly.
type BlockInput struct {
	WholeDays          bool
	From, To           string
	StartTime, EndTime string
	Weeks              int
	Note               string
}

// BookingInTheWay refuses a block over a confirmed booking: it names the
// booking and its slot. It wraps bokat.ErrConflict.
type BookingInTheWay struct {
	BookingID  string
	Start, End time.Time
}

func (e *BookingInTheWay) Error() string {
	return fmt.Sprintf("the block overlaps the confirmed booking %s", e.BookingID)
}

// Unwrap makes the refusal a conflict.
func (e *BookingInTheWay) Unwrap() error { return bokat.ErrConflict }

// SupplyStore is what the supply use cases need of the database outside a
// transaction.
type SupplyStore interface {
	// InTx runs fn in one write transaction, committed when fn returns nil.
	InTx(ctx context.Context, fn func(SupplyTx) error) error
	// ReadProviderSupply reads one provider's supply (blocked periods
	// aside), or returns bokat.ErrNotFound.
	ReadProviderSupply(ctx context.Context, providerID string) (bokat.ProviderSupply, error)
	// ProviderBlocks returns the provider's blocks whose last occurrence
	// ends after now, by start: its own, and the supply file's blocked
	// periods.
	ProviderBlocks(ctx context.Context, providerID string, now time.Time) ([]Block, error)
}

// SupplyTx is a write transaction of the supply use cases.
type SupplyTx interface {
	Tx
	supply.Tx
	// calsync.Tx lets a keyed write of the provider API change the
	// provider's calendar subscriptions (Calendars).
	calsync.Tx
	// PutProviderSupply makes the stored supply of p.ID equal p, writing
	// only what differs and moving the supply revision when anything did
	// (the import's writer).
	PutProviderSupply(ctx context.Context, p bokat.ProviderSupply, now time.Time) (supply.Outcome, error)
	// SetProviderPause stores the provider's pause (zero: none) and moves
	// the supply revision.
	SetProviderPause(ctx context.Context, providerID string, until, now time.Time) error
	// PutProviderDayHours replaces the provider's hours of single dates and
	// moves the supply revision.
	PutProviderDayHours(ctx context.Context, providerID string, days []bokat.DayHours, now time.Time) error
	// InsertProviderBlock stores a block and its occurrences as blocked
	// calendar entries (moving the calendar revision).
	InsertProviderBlock(ctx context.Context, b Block, occurrences []schedule.Interval, now time.Time) error
	// DeleteProviderBlock removes a block of the provider, its own or a
	// file's, with its calendar entries; bokat.ErrNotFound when the
	// provider has no such block.
	DeleteProviderBlock(ctx context.Context, providerID, blockID string) error
	// MarkManaged records that the provider manages the field group.
	MarkManaged(ctx context.Context, providerID, group, actor string, now time.Time) error
}

// Supply runs the supply use cases for provider users and tokens.
type Supply struct {
	store SupplyStore
	cat   *catalog.Catalog
	now   func() time.Time
	log   *slog.Logger
}

// NewSupply returns the supply use cases over the store, checking prices
// against the catalog.
func NewSupply(store SupplyStore, cat *catalog.Catalog, now func() time.Time, log *slog.Logger) *Supply {
	return &Supply{store: store, cat: cat, now: now, log: log}
}

// Catalog is the catalog prices are checked against.
func (s *Supply) Catalog() *catalog.Catalog { return s.cat }

// Supply returns the user's provider's supply: hours, dates, notice,
// horizon, pause, prices, postcodes.
func (s *Supply) Supply(ctx context.Context, u User) (bokat.ProviderSupply, error) {
	return s.store.ReadProviderSupply(ctx, u.ProviderID)
}

// Blocks returns the user's provider's blocks still to come.
func (s *Supply) Blocks(ctx context.Context, u User) ([]Block, error) {
	return s.store.ProviderBlocks(ctx, u.ProviderID, s.now())
}

// change runs fn on the provider's stored supply in one transaction, with
// the audit row and the group marked as the provider's own.
func (s *Supply) change(ctx context.Context, u User, group, action, objectType, objectID, note string,
	fn func(tx SupplyTx, p bokat.ProviderSupply, now time.Time) error) error {
	now := s.now()
	return s.store.InTx(ctx, func(tx SupplyTx) error {
		// One writer per provider at a time: two changes of one group
		// would otherwise both replace the rows they read.
		if err := tx.LockProviderCalendar(ctx, u.ProviderID); err != nil {
			return err
		}
		p, err := tx.ProviderSupply(ctx, u.ProviderID)
		if err != nil {
			return err
		}
		if err := fn(tx, p, now); err != nil {
			return err
		}
		if err := tx.MarkManaged(ctx, u.ProviderID, group, u.ID, now); err != nil {
			return err
		}
		return audit(ctx, tx, u.ProviderID, u.ID, now, action, objectType, objectID, note)
	})
}

// checked checks the provider's fields with the group's keys replaced by
// the supply file's rules; the error wraps ErrInvalid and says what is
// wrong, by field.
func (s *Supply) checked(p bokat.ProviderSupply, replace map[string]any) (bokat.ProviderSupply, error) {
	fields := supply.Fields(p, s.cat)
	for k, v := range replace {
		fields[k] = v
	}
	out, problems := supply.CheckProvider(s.cat, fields)
	if len(problems) > 0 {
		return bokat.ProviderSupply{}, &Invalid{Problems: problems}
	}
	return out, nil
}

// Invalid refuses a supply change by the supply file's rules: one problem
// per field ("services[1].price_sek"). It wraps ErrInvalid.
type Invalid struct {
	Problems []supply.Problem
}

func (e *Invalid) Error() string { return "invalid: " + supply.ProblemText(e.Problems) }

// Unwrap makes the refusal ErrInvalid.
func (e *Invalid) Unwrap() error { return ErrInvalid }

func invalid(path, format string, args ...any) error {
	return &Invalid{Problems: []supply.Problem{{Path: path, Message: fmt.Sprintf(format, args...)}}}
}

// HoursInput is a provider's weekly hours in the supply file's grammar
// (weekday names or "weekdays" mapped to "HH:MM-HH:MM" ranges), its
// minimum notice and its horizon.
type HoursInput struct {
	Weekly           map[string][]string
	MinNoticeMinutes int
	HorizonDays      int
	// Days, when not nil, replaces the hours of single dates too.
	Days *[]DayInput
}

// PutHours replaces the provider's weekly hours, notice and horizon,
// checked by the supply file's rules. Confirmed bookings stand whatever
// the new hours.
func (s *Supply) PutHours(ctx context.Context, u User, in HoursInput) error {
	weekly := map[string]any{}
	for k, v := range in.Weekly {
		list := make([]any, 0, len(v))
		for _, r := range v {
			list = append(list, r)
		}
		weekly[k] = list
	}
	note := fmt.Sprintf("notice=%d horizon=%d", in.MinNoticeMinutes, in.HorizonDays)
	var days []bokat.DayHours
	if in.Days != nil {
		seen := map[string]bool{}
		for i, d := range *in.Days {
			date, rows, err := s.dayRows(d)
			if err != nil {
				if inv, ok := err.(*Invalid); ok {
					for k := range inv.Problems {
						inv.Problems[k].Path = fmt.Sprintf("dates[%d].%s", i, inv.Problems[k].Path)
					}
				}
				return err
			}
			if seen[date.String()] {
				return invalid(fmt.Sprintf("dates[%d].date", i), "%s is given twice", date)
			}
			seen[date.String()] = true
			days = append(days, rows...)
		}
	}
	return s.change(ctx, u, supply.GroupHours, ActionHoursSet, "provider", u.ProviderID, note, func(tx SupplyTx, p bokat.ProviderSupply, now time.Time) error {
		next, err := s.checked(p, map[string]any{"hours": weekly, "min_notice_minutes": in.MinNoticeMinutes,
			"horizon_days": in.HorizonDays})
		if err != nil {
			return err
		}
		p.Hours, p.MinNoticeMinutes, p.HorizonDays = next.Hours, next.MinNoticeMinutes, next.HorizonDays
		if _, err = tx.PutProviderSupply(ctx, p, now); err != nil {
			return err
		}
		if in.Days != nil {
			return tx.PutProviderDayHours(ctx, u.ProviderID, days, now)
		}
		return nil
	})
}

// PutPrices replaces the services the provider offers and their prices,
// given as services of the supply file ("service_id", "price_sek" or
// "unit_price_sek" and "minimum_charge_sek", optionally "duration"),
// checked by the file's rules against the catalog. A confirmed booking
// keeps its price; an option issued before fails confirmation with
// booking_option_changed.
func (s *Supply) PutPrices(ctx context.Context, u User, services []map[string]any) error {
	list := make([]any, 0, len(services))
	ids := make([]string, 0, len(services))
	for _, m := range services {
		list = append(list, m)
		if id, ok := m["service_id"].(string); ok {
			ids = append(ids, id)
		}
	}
	return s.change(ctx, u, supply.GroupPrices, ActionPricesSet, "provider", u.ProviderID, "services="+strings.Join(ids, ","),
		func(tx SupplyTx, p bokat.ProviderSupply, now time.Time) error {
			next, err := s.checked(p, map[string]any{"services": list})
			if err != nil {
				return err
			}
			p.Services = next.Services
			_, err = tx.PutProviderSupply(ctx, p, now)
			return err
		})
}

// PutPostcodes replaces the postcodes the provider serves, given as
// entries of the supply file ("113 45", "113", "111-118").
func (s *Supply) PutPostcodes(ctx context.Context, u User, entries []string) error {
	list := make([]any, 0, len(entries))
	for _, e := range entries {
		list = append(list, e)
	}
	return s.change(ctx, u, supply.GroupPostcodes, ActionPostcodesSet, "provider", u.ProviderID, strings.Join(entries, ","),
		func(tx SupplyTx, p bokat.ProviderSupply, now time.Time) error {
			next, err := s.checked(p, map[string]any{"postcodes": list})
			if err != nil {
				return err
			}
			p.Postcodes = next.Postcodes
			_, err = tx.PutProviderSupply(ctx, p, now)
			return err
		})
}

// DayInput is the provider's hours of one date: closed, or ranges in the
// supply file's grammar ("10:00-14:00").
type DayInput struct {
	Date   string
	Closed bool
	Ranges []string
}

// SetDay sets the hours of one date (today or later, at most MaxAheadDays
// ahead), replacing the weekly hours that day; a public holiday stays
// closed whatever it says.
func (s *Supply) SetDay(ctx context.Context, u User, in DayInput) error {
	d, rows, err := s.dayRows(in)
	if err != nil {
		return err
	}
	return s.change(ctx, u, supply.GroupHours, ActionDaySet, "provider", u.ProviderID, d.String()+" "+dayNote(rows),
		func(tx SupplyTx, p bokat.ProviderSupply, now time.Time) error {
			kept := slices.DeleteFunc(slices.Clone(p.DayHours), func(x bokat.DayHours) bool { return x.Day == d.String() })
			return tx.PutProviderDayHours(ctx, u.ProviderID, append(kept, rows...), now)
		})
}

// ClearDay removes the hours of one date: the weekly hours apply again.
func (s *Supply) ClearDay(ctx context.Context, u User, date string) error {
	d, err := supply.ParseDate(date)
	if err != nil {
		return invalid("date", "%v", err)
	}
	return s.change(ctx, u, supply.GroupHours, ActionDaySet, "provider", u.ProviderID, d.String()+" weekly",
		func(tx SupplyTx, p bokat.ProviderSupply, now time.Time) error {
			kept := slices.DeleteFunc(slices.Clone(p.DayHours), func(x bokat.DayHours) bool { return x.Day == d.String() })
			if len(kept) == len(p.DayHours) {
				return fmt.Errorf("hours of %s: %w", d, bokat.ErrNotFound)
			}
			return tx.PutProviderDayHours(ctx, u.ProviderID, kept, now)
		})
}

func dayNote(rows []bokat.DayHours) string {
	if len(rows) == 1 && rows[0].Closed() {
		return "closed"
	}
	parts := make([]string, len(rows))
	for i, r := range rows {
		parts[i] = schedule.ClockRange{Start: r.StartMinute, End: r.EndMinute}.String()
	}
	return strings.Join(parts, ",")
}

// dayRows checks a date's hours: a date from today on, closed or one to
// four ranges that do not overlap.
func (s *Supply) dayRows(in DayInput) (schedule.Date, []bokat.DayHours, error) {
	d, err := supply.ParseDate(in.Date)
	if err != nil {
		return d, nil, invalid("date", "%v", err)
	}
	today := schedule.DateOf(s.now())
	if d.Before(today) || d.After(today.AddDays(MaxAheadDays)) {
		return d, nil, invalid("date", "must be a date from today to %d days ahead", MaxAheadDays)
	}
	if in.Closed {
		if len(in.Ranges) > 0 {
			return d, nil, invalid("ranges", "a closed day has no hours")
		}
		return d, []bokat.DayHours{{Day: d.String()}}, nil
	}
	if len(in.Ranges) == 0 || len(in.Ranges) > 4 {
		return d, nil, invalid("ranges", "give one to four ranges like 10:00-14:00, or close the day")
	}
	var ranges []schedule.ClockRange
	for _, raw := range in.Ranges {
		r, err := supply.ParseClockRange(raw)
		if err != nil {
			return d, nil, invalid("ranges", "%v", err)
		}
		ranges = append(ranges, r)
	}
	slices.SortFunc(ranges, func(a, b schedule.ClockRange) int { return a.Start - b.Start })
	rows := make([]bokat.DayHours, 0, len(ranges))
	for i, r := range ranges {
		if i > 0 && r.Start < ranges[i-1].End {
			return d, nil, invalid("ranges", "%s overlaps %s", r, ranges[i-1])
		}
		rows = append(rows, bokat.DayHours{Day: d.String(), StartMinute: r.Start, EndMinute: r.End})
	}
	return d, rows, nil
}

// Pause stops new bookings until the start of the date (today or later, at
// most MaxAheadDays ahead); an empty date ends the pause. Confirmed
// bookings stand.
func (s *Supply) Pause(ctx context.Context, u User, until string) error {
	var at time.Time
	note := "resumed"
	if strings.TrimSpace(until) != "" {
		d, err := supply.ParseDate(until)
		if err != nil {
			return invalid("until", "%v", err)
		}
		today := schedule.DateOf(s.now())
		if !d.After(today) || d.After(today.AddDays(MaxAheadDays)) {
			return invalid("until", "must be a date after today, at most %d days ahead", MaxAheadDays)
		}
		at, note = d.At(0), "until="+d.String()
	}
	return s.change(ctx, u, supply.GroupHours, ActionPauseSet, "provider", u.ProviderID, note,
		func(tx SupplyTx, _ bokat.ProviderSupply, now time.Time) error {
			return tx.SetProviderPause(ctx, u.ProviderID, at, now)
		})
}

// AddBlock blocks time for the user's provider: whole days or hours of a
// day, once or weekly. A block any occurrence of which overlaps a confirmed
// booking is refused with *BookingInTheWay naming the first such booking;
// a block wholly in the past, or a bad input, with *Invalid.
func (s *Supply) AddBlock(ctx context.Context, u User, in BlockInput) (Block, error) {
	b, err := s.PlanBlock(u, in)
	if err != nil {
		return Block{}, err
	}
	return s.AddPlannedBlock(ctx, u, b)
}

// AddPlannedBlock is AddBlock of a block PlanBlock returned: its id is
// known before it is written (the provider API answers with it).
func (s *Supply) AddPlannedBlock(ctx context.Context, u User, b Block) (Block, error) {
	if b.ProviderID != u.ProviderID {
		return Block{}, ErrForbidden
	}
	occ := b.Occurrences()
	note := fmt.Sprintf("%s/%s weeks=%d", b.Start.Format(time.RFC3339), b.End.Format(time.RFC3339), b.Weeks)
	err := s.change(ctx, u, supply.GroupBlocks, ActionBlockAdded, "block", b.ID, note,
		func(tx SupplyTx, _ bokat.ProviderSupply, now time.Time) error {
			for _, iv := range occ {
				busy, err := tx.BusyEntries(ctx, []string{u.ProviderID}, iv.Start, iv.End)
				if err != nil {
					return err
				}
				for _, e := range busy {
					if e.Kind == bokat.CalendarKindBooking {
						return &BookingInTheWay{BookingID: e.BookingID, Start: e.Start, End: e.End}
					}
				}
			}
			b.CreatedAt = now
			return tx.InsertProviderBlock(ctx, b, occ, now)
		})
	if err != nil {
		return Block{}, err
	}
	return b, nil
}

// PlanBlock checks a block's input and returns the block, with its id, to
// be added by AddPlannedBlock; a bad input fails with *Invalid.
func (s *Supply) PlanBlock(u User, in BlockInput) (Block, error) {
	weeks := max(in.Weeks, 1)
	if in.Weeks < 0 || weeks > MaxBlockWeeks {
		return Block{}, invalid("weeks", "must be 1 (once) to %d", MaxBlockWeeks)
	}
	note := strings.TrimSpace(in.Note)
	if utf8.RuneCountInString(note) > BlockNoteMax || bokat.CheckText(note, false) != "" {
		return Block{}, invalid("note", "must be one line of text of at most %d characters", BlockNoteMax)
	}
	from, err := supply.ParseDate(in.From)
	if err != nil {
		return Block{}, invalid("from", "%v", err)
	}
	id, err := newID(blockIDPrefix)
	if err != nil {
		return Block{}, err
	}
	b := Block{ID: id, ProviderID: u.ProviderID, WholeDays: in.WholeDays, Weeks: weeks, Note: note, CreatedBy: u.ID}
	if in.WholeDays {
		to := from
		if strings.TrimSpace(in.To) != "" {
			if to, err = supply.ParseDate(in.To); err != nil {
				return Block{}, invalid("to", "%v", err)
			}
		}
		if to.Before(from) || to.After(from.AddDays(MaxBlockDays-1)) {
			return Block{}, invalid("to", "must be the first day or a later one, at most %d days in all", MaxBlockDays)
		}
		if weeks > 1 && to.After(from.AddDays(6)) {
			return Block{}, invalid("weeks", "a weekly block lasts at most seven days")
		}
		b.Start, b.End = from.At(0), to.AddDays(1).At(0)
	} else {
		r, err := supply.ParseClockRange(strings.TrimSpace(in.StartTime) + "-" + strings.TrimSpace(in.EndTime))
		if err != nil {
			return Block{}, invalid("end", "give a start and a later end the same day, like 08:00 and 12:00")
		}
		b.Start, b.End = from.At(r.Start), from.At(r.End)
	}
	now := s.now()
	if !b.End.After(now) {
		return Block{}, invalid("from", "the block has already ended")
	}
	if b.Start.After(now.AddDate(0, 0, MaxAheadDays)) {
		return Block{}, invalid("from", "must start within %d days", MaxAheadDays)
	}
	return b, nil
}

// RemoveBlock removes a block of the user's provider with all its
// occurrences; another provider's block is bokat.ErrNotFound.
func (s *Supply) RemoveBlock(ctx context.Context, u User, blockID string) error {
	return s.change(ctx, u, supply.GroupBlocks, ActionBlockRemoved, "block", blockID, "",
		func(tx SupplyTx, _ bokat.ProviderSupply, _ time.Time) error {
			return tx.DeleteProviderBlock(ctx, u.ProviderID, blockID)
		})
}

// IsInvalid returns the problems of an ErrInvalid refusal.
func IsInvalid(err error) ([]supply.Problem, bool) {
	var inv *Invalid
	if errors.As(err, &inv) {
		return inv.Problems, true
	}
	return nil, false
}
