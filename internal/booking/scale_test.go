package booking_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"bokat/internal/booking"
	"bokat/internal/schedule"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
)

// scaleSupply writes n providers offering a faucet installation in
// postcodes 111–118 (Monday–Friday 08:00–17:00, no notice, 14 days'
// horizon), each with `busy` one-hour blocked periods on working hours of
// the 14 days from `from`, chosen by a PRNG seeded with seed. It writes
// with multi-row statements, so thousands of providers take a moment.
func scaleSupply(tb testing.TB, db *sqlstore.DB, n, busy int, seed uint64, from time.Time) {
	tb.Helper()
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
	ctx := context.Background()
	now := sqlstore.Millis(from)
	type table struct {
		head string
		rows [][]any
	}
	tables := []*table{
		{head: `INSERT INTO providers (id, name, city, rating_label, email, phone, active, min_notice_minutes, horizon_days, created_at, updated_at) VALUES `},
		{head: `INSERT INTO provider_postcodes (provider_id, postcode_from, postcode_to) VALUES `},
		{head: `INSERT INTO provider_services (provider_id, service_id, price_sek) VALUES `},
		{head: `INSERT INTO provider_hours (provider_id, weekday, start_minute, end_minute) VALUES `},
		{head: `INSERT INTO calendar_entries (id, provider_id, booking_id, kind, start_at, end_at, active, note, created_at) VALUES `},
	}
	start := schedule.DateOf(from)
	for i := range n {
		id := fmt.Sprintf("prv_scale_%05d", i)
		tables[0].rows = append(tables[0].rows, []any{id, fmt.Sprintf("Skalrör %05d AB", i), "Stockholm", "", id + "@scale.example", "", true, 0, 14, now, now})
		tables[1].rows = append(tables[1].rows, []any{id, 11100, 11899})
		tables[2].rows = append(tables[2].rows, []any{id, "vvs_install_faucet_standard", 1500 + rng.IntN(800)})
		for wd := time.Monday; wd <= time.Friday; wd++ {
			tables[3].rows = append(tables[3].rows, []any{id, int(wd), 480, 1020})
		}
		taken := map[int]bool{}
		for k := 0; len(taken) < busy && k < 10*busy; k++ {
			day, hour := rng.IntN(14), 8+rng.IntN(9)
			if taken[day*24+hour] {
				continue
			}
			taken[day*24+hour] = true
			s := start.AddDays(day).At(hour * 60)
			tables[4].rows = append(tables[4].rows, []any{fmt.Sprintf("blk_%s_%d", id, len(taken)), id, nil, "blocked",
				sqlstore.Millis(s), sqlstore.Millis(s.Add(time.Hour)), true, "", now})
		}
	}
	err := db.InTx(ctx, func(tx *sqlstore.Tx) error {
		for _, t := range tables {
			for lo := 0; lo < len(t.rows); lo += 500 {
				hi := min(lo+500, len(t.rows))
				var b strings.Builder
				var args []any
				b.WriteString(t.head)
				for r, row := range t.rows[lo:hi] {
					if r > 0 {
						b.WriteString(", ")
					}
					b.WriteString("(")
					for c, v := range row {
						if c > 0 {
							b.WriteString(", ")
						}
						args = append(args, v)
						if tx.Engine() == sqlstore.SQLite {
							b.WriteString("?") // SQLite looks numbered parameters up one by one
						} else {
							fmt.Fprintf(&b, "$%d", len(args))
						}
					}
					b.WriteString(")")
				}
				if _, err := tx.Q().ExecContext(ctx, b.String(), args...); err != nil {
					return err
				}
			}
		}
		_, err := tx.Q().ExecContext(ctx, `UPDATE supply_revision SET revision = revision + 1 WHERE id = 1`)
		return err
	})
	if err != nil {
		tb.Fatalf("write the scale supply: %v", err)
	}
}

// processCPU returns the CPU time the process has used (user and system).
func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSearchScale is one search for a faucet installation in 113 45
// within two weeks, over the demo supply and over 5,000 providers covering
// the postcode with 40 busy hours each, on each engine of the test run:
//
//	go test ./internal/booking/ -run '^$' -bench SearchScale
//
// and add BOKAT_TEST_POSTGRES_URL for PostgreSQL. The 5,000-provider
// search is to cost at most twice the demo's.
func BenchmarkSearchScale(b *testing.B) {
	now := local(2026, 11, 23, 9, 0)
	q := query("vvs", "install_faucet", "113 45", "inom två veckor")
	for _, engine := range sqlstoretest.Engines() {
		for _, size := range []struct {
			name string
			n    int
		}{{"demo", 0}, {"providers=5000", 5000}} {
			b.Run(string(engine)+"/"+size.name, func(b *testing.B) {
				db := sqlstoretest.Open(b, engine)
				var f *fixture
				if size.n == 0 {
					f = newFixture(b, db, demoFile(), now)
				} else {
					scaleSupply(b, db, size.n, 40, 1, now)
					f = newFixture(b, db, "", now)
				}
				if n := len(f.run(b, q).Options); n < 6 {
					b.Fatalf("%d options", n)
				}
				ctx := context.Background()
				b.ReportAllocs()
				cpu0 := processCPU(b)
				b.ResetTimer()
				for b.Loop() {
					if _, err := f.search.Search(ctx, q); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				// On a shared machine wall time per op includes waiting for a
				// core; the process's CPU time per op does not.
				b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// BenchmarkSearchScaleEmptyWindow is a search whose window no candidate
// has free, over 5,000 providers covering the postcode: Christmas Eve
// (past every horizon) and a Sunday (nobody works; next_available lists
// Monday's first slots). Such a search walks every candidate, so what it
// costs per candidate is what this measures:
//
//	go test ./internal/booking/ -run '^$' -bench SearchScaleEmptyWindow
func BenchmarkSearchScaleEmptyWindow(b *testing.B) {
	now := local(2026, 11, 23, 9, 0)
	for _, engine := range sqlstoretest.Engines() {
		db := sqlstoretest.Open(b, engine)
		scaleSupply(b, db, 5000, 40, 1, now)
		f := newFixture(b, db, "", now)
		for _, c := range []struct {
			text string
			next int
		}{{"julafton", 0}, {"på söndag", 3}} {
			b.Run(string(engine)+"/"+c.text, func(b *testing.B) {
				q := query("vvs", "install_faucet", "113 45", c.text)
				if res := f.run(b, q); len(res.Options) != 0 || len(res.NextAvailable) != c.next {
					b.Fatalf("%d options, %d next available, want 0 and %d", len(res.Options), len(res.NextAvailable), c.next)
				}
				ctx := context.Background()
				b.ReportAllocs()
				for b.Loop() {
					if _, err := f.search.Search(ctx, q); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkIndexMemory builds the index over 10,000 providers with 40 busy
// hours each (400,000 intervals) and reports the heap it holds and the
// time of the full build (the first search); the loop is searches.
//
//	go test ./internal/booking/ -run '^$' -bench IndexMemory -benchtime 200x
func BenchmarkIndexMemory(b *testing.B) {
	now := local(2026, 11, 23, 9, 0)
	q := query("vvs", "install_faucet", "113 45", "inom två veckor")
	for _, engine := range sqlstoretest.Engines() {
		b.Run(string(engine), func(b *testing.B) {
			db := sqlstoretest.Open(b, engine)
			scaleSupply(b, db, 10000, 40, 2, now)
			f := newFixture(b, db, "", now)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			start := time.Now()
			if n := len(f.run(b, q).Options); n != booking.DefaultMaxOptions {
				b.Fatalf("%d options", n)
			}
			build := time.Since(start)
			runtime.GC()
			runtime.ReadMemStats(&after)
			var intervals int
			for _, busy := range booking.Index(f.search).Busy {
				intervals += len(busy)
			}
			if intervals != 400000 {
				b.Fatalf("%d intervals in the index, want 400000", intervals)
			}
			ctx := context.Background()
			b.ResetTimer()
			for b.Loop() {
				if _, err := f.search.Search(ctx, q); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "index-MB")
			b.ReportMetric(float64(build.Milliseconds()), "build-ms")
		})
	}
}
