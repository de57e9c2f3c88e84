package calsync

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"bokat"
	"bokat/internal/notify"
	"bokat/internal/schedule"
)

// Defaults of Config.
const (
	DefaultInterval    = 5 * time.Minute
	DefaultStaleAfter  = 6 * time.Hour
	DefaultConcurrency = 4
	// MinInterval is the shortest poll interval (development only).
	MinInterval = time.Second
	// expandAhead is how far past the provider's horizon busy times are
	// expanded, so an unchanged feed is read again about once a week.
	expandAhead = 7 * 24 * time.Hour
	// staleMarker is the body hash of a feed whose busy times are the
	// stale block: any body read after it is new.
	staleMarker = "stale"
)

// FollowUp raises booking.provider_action_required for a booking (the
// booking lifecycle implements it).
type FollowUp interface {
	ProviderActionRequired(ctx context.Context, bookingID, reason string) error
}

// Heartbeat is how the worker shows readiness that it still makes rounds
// (telemetry.Heartbeat).
type Heartbeat interface {
	Beat()
	Stop()
}

// Observer is told the outcome of every poll (serve counts them in its
// metrics): result is "changed", "unchanged" or "failed", rows the
// calendar rows the poll wrote; and the end of every round, one that
// found nothing due included.
type Observer interface {
	CalendarPoll(result string, rows int)
	CalendarRound()
}

// Config configures a Worker.
type Config struct {
	Store Store
	Fetch FetchConfig
	// Interval between two polls of a feed (DefaultInterval; at least
	// MinInterval).
	Interval time.Duration
	// StaleAfter is how long a feed may fail before its provider stops
	// being directly bookable (DefaultStaleAfter).
	StaleAfter time.Duration
	// Concurrency bounds the feeds polled at once (DefaultConcurrency).
	Concurrency int
	// Lease is how long a claimed feed is a worker's (default twice the
	// fetch timeout plus a minute).
	Lease time.Duration
	// OwnUIDDomain: see ParseOptions.
	OwnUIDDomain string
	// FollowUp raises conflicts; nil leaves them recorded, unraised.
	FollowUp FollowUp
	// Mail tells a provider its feed went stale; nil sends nothing.
	Mail notify.Sender
	// Heartbeat, when set, is beaten after every claim that reached the
	// store (a round finding nothing due included) and stopped when Run
	// ends; MaxSilence bounds the time between two beats of a live worker.
	Heartbeat Heartbeat
	// Observer, when set, is told each poll's outcome.
	Observer Observer
	// Tick is how often Run looks for due feeds; zero is the default, a
	// tenth of the interval between one and thirty seconds. Serve always
	// keeps the default: a shorter tick lets a test on an injected clock
	// see rounds without waiting for them.
	Tick time.Duration
	Now  func() time.Time
	Log  *slog.Logger
}

// Worker polls feeds and keeps their busy times in the calendar.
type Worker struct {
	cfg   Config
	fetch *fetcher
	now   func() time.Time
	log   *slog.Logger
}

// NewWorker returns a Worker.
func NewWorker(cfg Config) (*Worker, error) {
	if cfg.Store == nil {
		return nil, errors.New("calsync: Store is required")
	}
	f, err := newFetcher(cfg.Fetch)
	if err != nil {
		return nil, err
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.Interval < MinInterval {
		return nil, fmt.Errorf("calsync: interval %s is shorter than %s", cfg.Interval, MinInterval)
	}
	if cfg.StaleAfter <= 0 {
		cfg.StaleAfter = DefaultStaleAfter
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	if cfg.Lease <= 0 {
		timeout := cfg.Fetch.Timeout
		if timeout <= 0 {
			timeout = DefaultFetchTimeout
		}
		cfg.Lease = 2*timeout + time.Minute
	}
	w := &Worker{cfg: cfg, fetch: f, now: cfg.Now, log: cfg.Log}
	if w.now == nil {
		w.now = time.Now
	}
	if w.log == nil {
		w.log = slog.New(slog.DiscardHandler)
	}
	return w, nil
}

// Round counts what one round did.
type Round struct {
	// Polled feeds: Changed wrote busy times, Unchanged found nothing new
	// (a 304, the same body), Failed did not sync.
	Polled, Changed, Unchanged, Failed int
	// Rows is how many calendar rows the round wrote.
	Rows int
	// Raised counts conflict events raised.
	Raised int
}

// resealEvery is how often Run re-seals feed addresses sealed with an
// older key.
const resealEvery = time.Hour

// tick is how often Run looks for due feeds: Tick when set, else a
// tenth of the interval, between one and thirty seconds.
func (c Config) tick() time.Duration {
	if c.Tick > 0 {
		return c.Tick
	}
	interval := c.Interval
	if interval <= 0 {
		interval = DefaultInterval
	}
	return min(max(interval/10, time.Second), 30*time.Second)
}

// MaxSilence is how long a live worker of this configuration may go
// without a heartbeat: three times the longest gap between two claims,
// which is a tick (between two rounds) plus a poll's time-out and its
// write (while every slot holds a slow feed). It is three times (a tenth
// of the interval, within 1–30 s, or Tick, + the time-out): 150 s by
// default, 63 s at the 1 s development interval.
func (c Config) MaxSilence() time.Duration {
	timeout := c.Fetch.Timeout
	if timeout <= 0 {
		timeout = DefaultFetchTimeout
	}
	return 3 * (c.tick() + timeout)
}

// Run polls due feeds until ctx ends, looking for them every tick (a
// tenth of the interval, between one and thirty seconds, or Tick); every hour, and
// at start, it re-seals feed addresses after a key rotation.
func (w *Worker) Run(ctx context.Context) error {
	if w.cfg.Heartbeat != nil {
		defer w.cfg.Heartbeat.Stop()
	}
	t := time.NewTicker(w.cfg.tick())
	defer t.Stop()
	var resealed time.Time
	for {
		if _, err := w.RunOnce(ctx); err != nil && ctx.Err() == nil {
			w.log.WarnContext(ctx, "calendar sync round failed", "error", err)
		}
		if now := time.Now(); now.Sub(resealed) >= resealEvery {
			resealed = now
			if n, err := w.cfg.Store.ResealFeeds(ctx); err != nil && ctx.Err() == nil {
				w.log.WarnContext(ctx, "calendar feed re-seal incomplete", "error", err, "resealed", n)
			} else if n > 0 {
				w.log.InfoContext(ctx, "calendar feed addresses re-sealed", "feeds", n)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// RunOnce claims the feeds due now and polls them, at most Concurrency at
// a time, until none is due; then raises the conflicts not raised yet. A
// slot that frees claims the next feed, so a slow feed holds up only its
// own slot, never the others.
func (w *Worker) RunOnce(ctx context.Context) (Round, error) {
	var (
		round Round
		mu    sync.Mutex
		wg    sync.WaitGroup
		err   error
	)
	slots := make(chan struct{}, w.cfg.Concurrency)
	token := newToken()
	for ctx.Err() == nil {
		slots <- struct{}{} // wait for a free slot, then take every free one
		free := 1
		for free < w.cfg.Concurrency && len(slots) < cap(slots) {
			slots <- struct{}{}
			free++
		}
		var claims []Claim
		claims, err = w.cfg.Store.ClaimFeeds(ctx, w.now(), w.cfg.Interval, w.cfg.Lease, token, free)
		for range free - len(claims) {
			<-slots
		}
		if err != nil {
			err = fmt.Errorf("claim calendar feeds: %w", err)
			break
		}
		if w.cfg.Heartbeat != nil {
			w.cfg.Heartbeat.Beat()
		}
		if len(claims) == 0 {
			break
		}
		for _, c := range claims {
			wg.Go(func() {
				defer func() { <-slots }()
				r := w.poll(ctx, c)
				w.observe(r)
				mu.Lock()
				defer mu.Unlock()
				round.Polled++
				round.Changed += r.Changed
				round.Unchanged += r.Unchanged
				round.Failed += r.Failed
				round.Rows += r.Rows
			})
		}
	}
	wg.Wait()
	if err != nil {
		return round, err
	}
	raised, err := w.raiseConflicts(ctx)
	round.Raised = raised
	if w.cfg.Observer != nil {
		w.cfg.Observer.CalendarRound()
	}
	return round, err
}

func (w *Worker) observe(r Round) {
	if w.cfg.Observer == nil {
		return
	}
	switch {
	case r.Changed > 0:
		w.cfg.Observer.CalendarPoll("changed", r.Rows)
	case r.Unchanged > 0:
		w.cfg.Observer.CalendarPoll("unchanged", r.Rows)
	default:
		w.cfg.Observer.CalendarPoll("failed", r.Rows)
	}
}

func newToken() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// poll reads one claimed feed and writes what it found under the lease.
func (w *Worker) poll(ctx context.Context, c Claim) Round {
	now := w.now()
	horizonEnd := now.Add(time.Duration(c.HorizonDays) * 24 * time.Hour)
	fresh := c.BodyHash != staleMarker && !c.ExpandedUntil.Before(horizonEnd)
	etag, lastModified := c.ETag, c.LastModified
	if !fresh {
		etag, lastModified = "", "" // the body is needed again
	}
	got, err := w.fetch.fetch(ctx, c.URL, etag, lastModified)
	if err != nil {
		return w.failed(ctx, c, now, err.Error())
	}
	out := Outcome{At: now, ETag: got.etag, LastModified: got.lastModified, BusyCount: c.BusyCount,
		BodyHash: c.BodyHash, ExpandedUntil: c.ExpandedUntil}
	if got.notModified {
		return w.unchanged(ctx, c, out)
	}
	sum := sha256.Sum256(got.body)
	out.BodyHash = hex.EncodeToString(sum[:])
	if fresh && out.BodyHash == c.BodyHash {
		return w.unchanged(ctx, c, out)
	}
	from := startOfDay(now)
	out.ExpandedUntil = horizonEnd.Add(expandAhead)
	parsed, err := Parse(got.body, ParseOptions{From: from, To: out.ExpandedUntil, Rule: c.Rule, OwnUIDDomain: w.cfg.OwnUIDDomain})
	got.body = nil
	if err != nil {
		return w.failed(ctx, c, now, err.Error())
	}
	out.BusyCount = len(parsed.Busy)
	var rows int
	err = w.cfg.Store.InTx(ctx, func(tx Tx) error {
		// The calendar lock first, as Remove takes it: a feed removed
		// meanwhile is then gone when the outcome is written (lease lost).
		if err := tx.LockProviderCalendar(ctx, c.ProviderID); err != nil {
			return err
		}
		if err := tx.FinishFeed(ctx, c.ID, c.Token, out); err != nil {
			return err
		}
		var err error
		if rows, err = tx.ReplaceSyncedBusy(ctx, c.ProviderID, c.ID, parsed.Busy, now); err != nil {
			return err
		}
		return recordConflicts(ctx, tx, c, parsed.Busy, now)
	})
	if err != nil {
		w.logFailure(ctx, c, err)
		return Round{Failed: 1}
	}
	w.log.InfoContext(ctx, "calendar feed synced", "feed_id", c.ID, "provider_id", c.ProviderID, "busy", len(parsed.Busy),
		"rows", rows, "events", parsed.Events, "own", parsed.Own, "skipped", parsed.Skipped, "partial", parsed.Partial)
	return Round{Changed: 1, Rows: rows}
}

// unchanged records a poll that found nothing new: the feed row only.
func (w *Worker) unchanged(ctx context.Context, c Claim, out Outcome) Round {
	err := w.cfg.Store.InTx(ctx, func(tx Tx) error { return tx.FinishFeed(ctx, c.ID, c.Token, out) })
	if err != nil {
		w.logFailure(ctx, c, err)
		return Round{Failed: 1}
	}
	return Round{Unchanged: 1}
}

// failed records a failed poll. Once the feed has failed for StaleAfter,
// its busy times become one block over the whole horizon (the provider is
// not directly bookable while Bokat cannot see their calendar) and the
// provider is told once.
func (w *Worker) failed(ctx context.Context, c Claim, now time.Time, summary string) Round {
	since := c.FailingSince
	if since.IsZero() {
		since = now
	}
	stale := now.Sub(since) >= w.cfg.StaleAfter
	horizonEnd := now.Add(time.Duration(c.HorizonDays) * 24 * time.Hour)
	out := Outcome{At: now, Err: summary, BusyCount: c.BusyCount}
	block := stale && (c.BodyHash != staleMarker || c.ExpandedUntil.Before(horizonEnd))
	var rows int
	err := w.cfg.Store.InTx(ctx, func(tx Tx) error {
		if block {
			out.BodyHash, out.ExpandedUntil, out.BusyCount = staleMarker, horizonEnd.Add(expandAhead), 1
			if err := tx.LockProviderCalendar(ctx, c.ProviderID); err != nil {
				return err
			}
		}
		if err := tx.FinishFeed(ctx, c.ID, c.Token, out); err != nil || !block {
			return err
		}
		var err error
		rows, err = tx.ReplaceSyncedBusy(ctx, c.ProviderID, c.ID, []Interval{{Start: startOfDay(now), End: out.ExpandedUntil}}, now)
		return err
	})
	if err != nil {
		w.logFailure(ctx, c, err)
		return Round{Failed: 1}
	}
	w.log.WarnContext(ctx, "calendar feed not synced", "feed_id", c.ID, "provider_id", c.ProviderID, "error", summary,
		"stale", stale)
	if stale && c.StaleNotifiedAt.IsZero() {
		w.notifyStale(ctx, c, since, summary, now)
	}
	return Round{Failed: 1, Rows: rows}
}

func (w *Worker) logFailure(ctx context.Context, c Claim, err error) {
	if errors.Is(err, ErrLeaseLost) {
		w.log.InfoContext(ctx, "calendar feed lease lost; another worker polls it", "feed_id", c.ID)
		return
	}
	w.log.WarnContext(ctx, "calendar feed outcome not stored", "feed_id", c.ID, "error", err)
}

// recordConflicts records a conflict for each confirmed booking that a
// busy time overlaps.
func recordConflicts(ctx context.Context, tx Tx, c Claim, busy []Interval, now time.Time) error {
	if len(busy) == 0 {
		return nil
	}
	slots, err := tx.ConfirmedSlots(ctx, c.ProviderID, busy[0].Start, busy[len(busy)-1].End)
	if err != nil {
		return err
	}
	i := 0
	for _, s := range slots {
		for i < len(busy) && !busy[i].End.After(s.Start) {
			i++
		}
		// busy is sorted and disjoint: the first interval ending after the
		// slot's start is the only one that can begin before its end
		// without an earlier one doing so.
		if i < len(busy) && busy[i].Start.Before(s.End) {
			if _, err := tx.InsertConflict(ctx, Conflict{BookingID: s.BookingID, SlotStart: s.Start, ProviderID: c.ProviderID,
				FeedID: c.ID}, now); err != nil {
				return err
			}
		}
	}
	return nil
}

// raiseConflicts raises booking.provider_action_required (reason
// calendar_conflict) for each recorded conflict not raised yet. An event
// queued but not marked (a crash between the two) is raised again: at
// least once, as the notification worker's follow-ups.
func (w *Worker) raiseConflicts(ctx context.Context) (int, error) {
	if w.cfg.FollowUp == nil {
		return 0, nil
	}
	conflicts, err := w.cfg.Store.UnraisedConflicts(ctx, 100)
	if err != nil {
		return 0, fmt.Errorf("read calendar conflicts: %w", err)
	}
	n := 0
	for _, c := range conflicts {
		if err := w.cfg.FollowUp.ProviderActionRequired(ctx, c.BookingID, bokat.ReasonCalendarConflict); err != nil {
			return n, fmt.Errorf("raise the calendar conflict of booking %s: %w", c.BookingID, err)
		}
		if err := w.cfg.Store.MarkConflictRaised(ctx, c, w.now()); err != nil {
			return n, fmt.Errorf("mark the calendar conflict of booking %s: %w", c.BookingID, err)
		}
		n++
	}
	return n, nil
}

// notifyStale e-mails the provider that a feed went stale; a failure is
// retried at the next failed poll.
func (w *Worker) notifyStale(ctx context.Context, c Claim, since time.Time, summary string, now time.Time) {
	if w.cfg.Mail == nil {
		return
	}
	pc, err := w.cfg.Store.ProviderContact(ctx, c.ProviderID)
	if err != nil {
		w.log.WarnContext(ctx, "stale calendar not told", "feed_id", c.ID, "error", err)
		return
	}
	if err := w.cfg.Mail.Send(ctx, staleMessage(pc.Name, pc.Email, c.Label, since, summary)); err != nil {
		w.log.WarnContext(ctx, "stale calendar not told; will retry", "feed_id", c.ID, "error", err)
		return
	}
	if err := w.cfg.Store.MarkStaleNotified(ctx, c.ID, now); err != nil {
		w.log.WarnContext(ctx, "stale calendar told but not recorded", "feed_id", c.ID, "error", err)
	}
}

func staleMessage(name, email, label string, failingSince time.Time, summary string) notify.Message {
	since := failingSince.In(schedule.Stockholm()).Format("2006-01-02 15:04")
	return notify.Message{
		Kind: "calendar_feed.stale/provider", To: email, ToName: name,
		Subject: "Bokat kan inte läsa din kalender – direktbokning pausad",
		Text: "Hej " + name + ",\n\nBokat har inte kunnat läsa din kalender från " + label + " sedan " + since +
			" (senaste fel: " + summary + ").\nTills den går att läsa igen erbjuder Bokat inga direktbokningar hos dig, " +
			"så att ingen bokar en tid du redan är upptagen. Förfrågningar tar du fortfarande emot.\n" +
			"Kontrollera att kalenderadressen fortfarande är giltig, eller lägg till den på nytt.\n\n" +
			"Bokat cannot read your calendar from " + label + " since " + since + ". Until it can, Bokat offers no direct " +
			"bookings with you; requests still reach you. Check that the calendar address is still valid, or add it again.\n\nBokat\n",
	}
}

// startOfDay is the start of the Stockholm day of t.
func startOfDay(t time.Time) time.Time {
	y, m, d := t.In(schedule.Stockholm()).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, schedule.Stockholm())
}
