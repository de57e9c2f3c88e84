package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

type report struct {
	Duration   string                 `json:"duration"`
	Workers    int                    `json:"workers"`
	Statuses   map[string]map[int]int `json:"statuses"`
	Totals     map[int]int            `json:"totals"`
	Refusals   map[string]int         `json:"refusals"`
	Restarts   []window               `json:"restarts"`
	InRestart  int                    `json:"failures_in_restart_windows"`
	Unexpected []string               `json:"unexpected_failures"`
	Bookings   struct {
		Created       int `json:"created_201"`
		Missing       int `json:"missing_at_end"`
		WrongState    int `json:"wrong_state_at_end"`
		Cancelled     int `json:"cancelled_by_soak"`
		DoubleBooked  int `json:"overlapping_active_entries"`
		StoredAtEnd   int `json:"bookings_in_database"`
		CancelUnknown int `json:"cancel_without_answer"`
	} `json:"bookings"`
	Webhooks struct {
		OutboxEvents     int            `json:"outbox_events"`
		SteadyReceived   int            `json:"steady_received"`
		SteadyMissing    int            `json:"steady_missing"`
		FlakyReceived    int            `json:"flaky_received"`
		FlakyDeliveries  map[string]int `json:"flaky_deliveries_by_status"`
		FlakyNotReceived int            `json:"flaky_delivered_but_not_received"`
		BadSignatures    int64          `json:"bad_signatures"`
		SteadyLagP50     string         `json:"steady_lag_p50"`
		SteadyLagP99     string         `json:"steady_lag_p99"`
		FlakyLagP50      string         `json:"flaky_lag_p50"`
		FlakyLagP99      string         `json:"flaky_lag_p99"`
	} `json:"webhooks"`
	Notifications struct {
		ByStatus map[string]int `json:"by_status"`
		LagP50   string         `json:"lag_p50"`
		LagP99   string         `json:"lag_p99"`
	} `json:"notifications"`
	Calendar struct {
		Fetches   int64  `json:"feed_fetches"`
		Synced    bool   `json:"synced"`
		LastError string `json:"last_error"`
	} `json:"calendar_feed"`
	Processes []snapshot `json:"processes"`
	// Memory sums up the samples taken during the load in sixths of it;
	// every sample is in STATE/memory.csv.
	Memory []memoryWindow `json:"memory"`
	PGMax  int            `json:"pg_connections_max"`
	Notes  []string       `json:"notes"`
	Failed []string       `json:"failed_checks"`
	OK     bool           `json:"ok"`
}

func (s *soak) count(ctx context.Context, q string, args ...any) int {
	var n int
	if err := s.db.QueryRowContext(ctx, q, args...).Scan(&n); err != nil {
		s.note("%s: %v", strings.Fields(q)[0], err)
		return -1
	}
	return n
}

// outboxIDs lists the outbox events of the soak's partner.
func (s *soak) outboxIDs(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id FROM outbox_events WHERE owner_client_id = $1`, s.d.Partner.ID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// timeUnit guesses the unit of the store's BIGINT instants from one of
// them: milliseconds, microseconds or nanoseconds since 1970.
func timeUnit(v int64) time.Duration {
	switch {
	case v > 1e17:
		return time.Nanosecond
	case v > 1e14:
		return time.Microsecond
	case v > 1e11:
		return time.Millisecond
	}
	return time.Second
}

// lags reads differences of two instants (a query of "late, early") and
// returns their p50 and p99.
func (s *soak) lags(ctx context.Context, q string, args ...any) (p50, p99 string) {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		s.note("lag query: %v", err)
		return "-", "-"
	}
	defer rows.Close()
	var ds []time.Duration
	for rows.Next() {
		var late, early int64
		if rows.Scan(&late, &early) != nil {
			continue
		}
		ds = append(ds, time.Duration(late-early)*timeUnit(early))
	}
	if len(ds) == 0 {
		return "-", "-"
	}
	slices.Sort(ds)
	pick := func(q float64) string {
		i := int(q * float64(len(ds)-1))
		return ds[i].Round(time.Millisecond).String()
	}
	return pick(0.5), pick(0.99)
}

func (s *soak) check(ctx context.Context, start time.Time) (*report, error) {
	rep := &report{Duration: s.c.duration.String(), Workers: s.c.workers, Totals: map[int]int{}}
	// Wait for the steady receiver to have every event.
	var ids []string
	deadline := time.Now().Add(s.c.drain)
	for {
		var err error
		ids, err = s.outboxIDs(ctx)
		if err != nil {
			return nil, err
		}
		missing := 0
		for _, id := range ids {
			if !s.steady.got(id) {
				missing++
			}
		}
		if missing == 0 || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		time.Sleep(time.Second)
	}

	// The load's answers, before the checks below add their own reads.
	s.mu.Lock()
	rep.Statuses = map[string]map[int]int{}
	for op, m := range s.statuses {
		rep.Statuses[op] = maps.Clone(m)
		for st, n := range m {
			rep.Totals[st] += n
		}
	}
	rep.Restarts = slices.Clone(s.windows)
	rep.Refusals = maps.Clone(s.refusals)
	for _, f := range s.failures {
		in := false
		for _, w := range s.windows {
			in = in || w.covers(f.at)
		}
		if in {
			rep.InRestart++
		} else {
			rep.Unexpected = append(rep.Unexpected, fmt.Sprintf("%s %s answered %d", f.at.Format("15:04:05.000"), f.op, f.status))
		}
	}
	created := slices.Clone(s.created)
	s.mu.Unlock()

	// Bookings: every 201 there, in the state the soak left it; no overlap.
	rep.Bookings.Created = len(created)
	stored := map[string]bool{}
	rows, err := s.db.QueryContext(ctx, `SELECT id FROM bookings`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		stored[id] = true
	}
	rows.Close()
	rep.Bookings.StoredAtEnd = len(stored)
	// Each booking's status through the API, as many at once as the load's
	// clients (one at a time, 15,000 bookings took eight minutes).
	var wg sync.WaitGroup
	var mu sync.Mutex
	todo := make(chan *booking)
	for range s.c.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range todo {
				_, res := s.call(ctx, "final_status", "GET", "/v1/bookings/"+b.id, s.d.Partner.Token, nil)
				active, _ := res["current_confirmation_active"].(bool)
				mu.Lock()
				switch {
				case res["found"] != true:
					rep.Bookings.Missing++
				case b.cancelUnknown:
				case active == b.cancelled:
					rep.Bookings.WrongState++
				}
				mu.Unlock()
			}
		}()
	}
	for _, b := range created {
		if !stored[b.id] {
			mu.Lock()
			rep.Bookings.Missing++
			mu.Unlock()
			continue
		}
		if b.cancelled {
			rep.Bookings.Cancelled++
		}
		if b.cancelUnknown {
			rep.Bookings.CancelUnknown++
		}
		todo <- b
	}
	close(todo)
	wg.Wait()
	rep.Bookings.DoubleBooked = s.count(ctx, `SELECT COUNT(*) FROM calendar_entries a JOIN calendar_entries b
		ON a.provider_id = b.provider_id AND a.id < b.id
		WHERE a.active AND b.active AND a.kind = 'booking' AND b.kind = 'booking'
		  AND a.start_at < b.end_at AND b.start_at < a.end_at`)

	// Webhooks.
	rep.Webhooks.OutboxEvents = len(ids)
	for _, id := range ids {
		if !s.steady.got(id) {
			rep.Webhooks.SteadyMissing++
		}
	}
	rep.Webhooks.SteadyReceived = s.steady.count()
	rep.Webhooks.FlakyReceived = s.flaky.count()
	rep.Webhooks.BadSignatures = s.steady.bad.Load() + s.flaky.bad.Load()
	rep.Webhooks.FlakyDeliveries = map[string]int{}
	if rows, err := s.db.QueryContext(ctx, `SELECT d.status, d.outbox_id FROM webhook_deliveries d WHERE d.endpoint_id = $1 AND d.origin = 'relay'`,
		s.flaky.endpointID); err == nil {
		for rows.Next() {
			var st, id string
			if rows.Scan(&st, &id) == nil {
				rep.Webhooks.FlakyDeliveries[st]++
				if st == "delivered" && !s.flaky.got(id) {
					rep.Webhooks.FlakyNotReceived++
				}
			}
		}
		rows.Close()
	}
	lagQ := `SELECT d.finished_at, o.created_at FROM webhook_deliveries d JOIN outbox_events o ON o.id = d.outbox_id
		WHERE d.endpoint_id = $1 AND d.status = 'delivered' AND d.origin = 'relay'`
	rep.Webhooks.SteadyLagP50, rep.Webhooks.SteadyLagP99 = s.lags(ctx, lagQ, s.steady.endpointID)
	rep.Webhooks.FlakyLagP50, rep.Webhooks.FlakyLagP99 = s.lags(ctx, lagQ, s.flaky.endpointID)

	// Notifications (e-mail to customers and providers; files in this
	// deployment, the same worker and queue as SMTP).
	rep.Notifications.ByStatus = map[string]int{}
	if rows, err := s.db.QueryContext(ctx, `SELECT status, COUNT(*) FROM notification_jobs GROUP BY status`); err == nil {
		for rows.Next() {
			var st string
			var n int
			if rows.Scan(&st, &n) == nil {
				rep.Notifications.ByStatus[st] = n
			}
		}
		rows.Close()
	}
	rep.Notifications.LagP50, rep.Notifications.LagP99 = s.lags(ctx,
		`SELECT updated_at, created_at FROM notification_jobs WHERE status = 'sent'`)

	rep.Calendar.Fetches = s.feed.fetches.Load()
	rep.Calendar.Synced, rep.Calendar.LastError = s.calendarState(ctx)

	s.mu.Lock()
	rep.Processes = s.snaps
	samples := slices.Clone(s.samples)
	rep.PGMax = s.pgMax
	rep.Notes = s.notes
	s.mu.Unlock()
	rep.Memory = summarise(samples, s.c.duration, 6)
	if err := s.writeSamples(samples); err != nil {
		rep.Notes = append(rep.Notes, fmt.Sprintf("memory samples: %v", err))
	}

	fail := func(cond bool, format string, args ...any) {
		if cond {
			rep.Failed = append(rep.Failed, fmt.Sprintf(format, args...))
		}
	}
	fail(len(rep.Unexpected) > 0, "%d failed requests (5xx or no answer) outside the restart windows", len(rep.Unexpected))
	fail(rep.Bookings.Created == 0, "no booking was confirmed")
	fail(rep.Bookings.Missing > 0, "%d bookings answered 201 are gone", rep.Bookings.Missing)
	fail(rep.Bookings.WrongState > 0, "%d bookings are not in the state the soak left them", rep.Bookings.WrongState)
	fail(rep.Bookings.DoubleBooked != 0, "%d overlapping active booking entries", rep.Bookings.DoubleBooked)
	fail(rep.Webhooks.SteadyMissing > 0, "%d of %d events never reached the steady receiver", rep.Webhooks.SteadyMissing, len(ids))
	fail(rep.Webhooks.FlakyNotReceived > 0, "%d deliveries marked delivered never reached the failing receiver", rep.Webhooks.FlakyNotReceived)
	fail(rep.Webhooks.BadSignatures > 0, "%d deliveries with a bad signature", rep.Webhooks.BadSignatures)
	fail(rep.Notifications.ByStatus["failed"] > 0, "%d notification jobs failed", rep.Notifications.ByStatus["failed"])
	fail(!rep.Calendar.Synced || rep.Calendar.LastError != "", "the provider's calendar feed: synced %v, last error %q", rep.Calendar.Synced, rep.Calendar.LastError)
	rep.OK = len(rep.Failed) == 0
	_ = start
	return rep, nil
}

func (rep *report) print(w io.Writer) {
	fmt.Fprintf(w, "\nSoak: %s, %d workers, through nginx to two serve instances (PostgreSQL, Redis)\n\n", rep.Duration, rep.Workers)
	var statuses []int
	for st := range rep.Totals {
		statuses = append(statuses, st)
	}
	sort.Ints(statuses)
	fmt.Fprintf(w, "%-22s", "requests")
	for _, st := range statuses {
		fmt.Fprintf(w, "%7s", statusName(st))
	}
	fmt.Fprintln(w)
	var ops []string
	for op := range rep.Statuses {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	for _, op := range append(ops, "total") {
		m := rep.Statuses[op]
		if op == "total" {
			m = rep.Totals
		}
		fmt.Fprintf(w, "%-22s", op)
		for _, st := range statuses {
			fmt.Fprintf(w, "%7d", m[st])
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	var refusals []string
	for k := range rep.Refusals {
		refusals = append(refusals, k)
	}
	sort.Strings(refusals)
	for _, k := range refusals {
		fmt.Fprintf(w, "refused: %-60s %7d\n", k, rep.Refusals[k])
	}
	fmt.Fprintln(w)
	for _, r := range rep.Restarts {
		fmt.Fprintf(w, "restart: instance %s %s at %s, answering again after %s\n", r.Instance, r.Signal,
			r.From.Format("15:04:05"), r.Ready.Sub(r.From).Round(time.Millisecond))
	}
	fmt.Fprintf(w, "5xx or no answer: %d inside restart windows, %d outside\n", rep.InRestart, len(rep.Unexpected))
	for i, u := range rep.Unexpected {
		if i == 10 {
			fmt.Fprintf(w, "  … %d more\n", len(rep.Unexpected)-10)
			break
		}
		fmt.Fprintf(w, "  %s\n", u)
	}
	b := rep.Bookings
	fmt.Fprintf(w, "bookings: %d confirmed (201 or replay), %d cancelled by the soak, %d cancellations unanswered; at the end %d missing, %d in the wrong state; %d in the database\n",
		b.Created, b.Cancelled, b.CancelUnknown, b.Missing, b.WrongState, b.StoredAtEnd)
	fmt.Fprintf(w, "double booking: %d overlapping active entries\n", b.DoubleBooked)
	h := rep.Webhooks
	fmt.Fprintf(w, "webhooks: %d outbox events; steady receiver got %d (%d missing), lag p50 %s p99 %s\n",
		h.OutboxEvents, h.SteadyReceived, h.SteadyMissing, h.SteadyLagP50, h.SteadyLagP99)
	fmt.Fprintf(w, "          failing receiver (503 every 3rd attempt) got %d; deliveries %v; lag p50 %s p99 %s; bad signatures %d\n",
		h.FlakyReceived, h.FlakyDeliveries, h.FlakyLagP50, h.FlakyLagP99, h.BadSignatures)
	fmt.Fprintf(w, "calendar feed (served by the soak, polled by calendar sync): fetched %d times, synced %v, last error %q\n",
		rep.Calendar.Fetches, rep.Calendar.Synced, rep.Calendar.LastError)
	fmt.Fprintf(w, "notifications: %v, lag p50 %s p99 %s\n", rep.Notifications.ByStatus, rep.Notifications.LagP50, rep.Notifications.LagP99)
	fmt.Fprintf(w, "\n%-8s %-9s %8s %8s %9s %9s %12s %11s %9s  %s\n", "when", "instance", "pid", "RSS MiB", "anon MiB", "peak MiB", "Go heap MiB", "goroutines", "PG conns", "heap profile")
	mib := func(kib int64) float64 { return float64(kib) / 1024 }
	for _, p := range rep.Processes {
		fmt.Fprintf(w, "%-8s %-9s %8d %8.1f %9.1f %9.1f %12.1f %11d %9d  %s\n", p.At, p.Instance, p.PID, mib(p.RSSKiB), mib(p.AnonKiB), mib(p.PeakKiB),
			mib(p.HeapInuseKiB), p.Goroutines, p.PGConns, p.HeapProfile)
	}
	fmt.Fprintf(w, "PostgreSQL connections (both instances), most seen: %d\n", rep.PGMax)
	printMemory(w, rep.Memory)
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	if rep.OK {
		fmt.Fprintln(w, "\nall checks passed")
		return
	}
	fmt.Fprintln(w, "\nFAILED:")
	for _, f := range rep.Failed {
		fmt.Fprintf(w, "  %s\n", f)
	}
}

func statusName(st int) string {
	if st == 0 {
		return "none"
	}
	return fmt.Sprint(st)
}
