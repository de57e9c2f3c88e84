package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"bokat"
	"bokat/internal/auth"
	"bokat/internal/booking"
	"bokat/internal/followup"
	"bokat/internal/idem"
	"bokat/internal/schedule"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/supply"
)

// The confirmation benchmarks measure confirmations per second and their
// latency on each engine, twice at the same concurrency: through HTTP (a
// real server on loopback, the partner credential checked, the body
// validated against the contract, the answer written), and the same
// transaction called directly from Go (Lifecycle.Confirm). Every
// confirmation books a fresh, free slot: the supply has enough providers
// for b.N one-hour slots. Run them with a fixed count, e.g.
//
//	go test ./internal/httpapi/ -run '^$' -bench Confirm -benchtime 3000x
//
// and add BOKAT_TEST_POSTGRES_URL for PostgreSQL.

// benchConcurrency is the number of clients confirming at once.
const benchConcurrency = 16

// benchNow is the fixed clock of the benchmarks: a Monday morning.
var benchNow = time.Date(2026, 11, 23, 6, 0, 0, 0, schedule.Stockholm())

const benchHorizonDays = 60

func benchSupply(providers int) string {
	var b strings.Builder
	b.WriteString("version: 1\nproviders:\n")
	for i := range providers {
		fmt.Fprintf(&b, `  - id: prv_bench_%04d
    name: Bänkrör %04d AB
    email: bokningar@bankror-%04d.example
    city: Stockholm
    min_notice_minutes: 0
    horizon_days: %d
    postcodes: ["111-118"]
    hours: {weekdays: ["08:00-17:00"]}
    services:
      - {service_id: vvs_install_faucet_standard, price_sek: %d, duration: {fixed_minutes: 60}}
`, i, i, i, benchHorizonDays, 1500+i)
	}
	return b.String()
}

// benchSlots returns the one-hour slots a bench provider works in, in order.
func benchSlots() []schedule.Interval {
	var out []schedule.Interval
	end := benchNow.AddDate(0, 0, benchHorizonDays)
	for d := schedule.DateOf(benchNow); d.At(0).Before(end); d = d.AddDays(1) {
		if off, _ := schedule.IsNonWorkingDay(d); off || d.Weekday() == time.Saturday || d.Weekday() == time.Sunday {
			continue
		}
		for h := 8; h < 17; h++ {
			iv := schedule.Interval{Start: d.At(h * 60), End: d.At(h*60 + 60)}
			if iv.Start.After(benchNow) && !iv.End.After(end) {
				out = append(out, iv)
			}
		}
	}
	return out
}

type benchFixture struct {
	db     *sqlstore.DB
	lc     *booking.Lifecycle
	http   *httptest.Server
	token  string
	p      bokat.Principal
	bodies [][]byte
	inputs []booking.ConfirmInput
	keys   []string
	fps    []string
}

func newBenchFixture(b *testing.B, engine sqlstore.Engine, n int) *benchFixture {
	b.Helper()
	ctx := context.Background()
	slots := benchSlots()
	providers := n/len(slots) + 1
	db := sqlstoretest.Open(b, engine)
	cat, err := loadCatalog()
	if err != nil {
		b.Fatal(err)
	}
	if _, err := supply.Import(ctx, sqlstore.Bind[supply.Tx](db), cat, "bench.yaml", []byte(benchSupply(providers)), benchNow); err != nil {
		b.Fatal(err)
	}
	now := func() time.Time { return benchNow }
	search, err := booking.NewSearch(booking.Config{Catalog: cat, Store: db, Keys: testOptionKeys, Now: now})
	if err != nil {
		b.Fatal(err)
	}
	lc, err := booking.NewLifecycle(booking.LifecycleConfig{Store: sqlstore.Bind[booking.Tx](db), Catalog: cat, Keys: testOptionKeys, Now: now})
	if err != nil {
		b.Fatal(err)
	}
	contract, err := loadContract()
	if err != nil {
		b.Fatal(err)
	}
	hasher, _ := auth.NewHasher(bytes.Repeat([]byte{1}, 32))
	cfg := envConfig{Config: Config{BaseURL: "http://bokat.test", Logger: slog.New(slog.NewJSONHandler(io.Discard, nil)), Now: now,
		Contract: contract, Catalog: cat, Store: db, Followups: followup.New(sqlstore.Bind[followup.Tx](db), cat, now, nil), Search: search, Bookings: lc}}
	completeConfig(b, db, hasher, &cfg)
	clientID, token, err := cfg.Auth.CreatePartner(ctx, "bench", bokat.AllScopes(), benchNow)
	if err != nil {
		b.Fatal(err)
	}
	srv, err := New(cfg.Config)
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	b.Cleanup(hs.Close)
	f := &benchFixture{db: db, lc: lc, http: hs, token: token,
		p: bokat.Principal{Kind: bokat.PrincipalPartner, ClientID: clientID, Scopes: bokat.AllScopes()}}
	svc, _ := cat.Service("vvs_install_faucet_standard")
	for i := range n {
		// Round robin over providers spreads the writes.
		slot := slots[i/providers]
		c := booking.OptionClaims{
			IssuedAt: benchNow, ExpiresAt: benchNow.Add(time.Hour),
			ProviderID: fmt.Sprintf("prv_bench_%04d", i%providers), ServiceID: svc.ID, VerticalID: "vvs", JobTypeID: "install_faucet",
			SlotStart: slot.Start, SlotEnd: slot.End, AmountSEK: int64(1500 + i%providers), PricingModel: string(svc.PricingModel),
			PriceType: string(svc.PriceType), Quantity: 1, TermsVersion: svc.Terms.Version, Postcode: "11345", Locale: "sv-SE",
		}
		id, err := testOptionKeys.Sign(c)
		if err != nil {
			b.Fatal(err)
		}
		key := fmt.Sprintf("bench-%d", i)
		body := confirmBody(map[string]any{"booking_option_id": id, "terms": map[string]any{"version": svc.Terms.Version}}, key)
		raw, _ := json.Marshal(body)
		var wire confirmRequestWire
		if err := json.Unmarshal(raw, &wire); err != nil {
			b.Fatal(err)
		}
		wire.IdempotencyKey = ""
		fp, err := idem.Fingerprint(wire, "")
		if err != nil {
			b.Fatal(err)
		}
		f.bodies, f.keys, f.fps = append(f.bodies, raw), append(f.keys, key), append(f.fps, fp)
		f.inputs = append(f.inputs, booking.ConfirmInput{
			OptionID:        id,
			Customer:        bokat.BookingContact{Name: "Greta Gåsfot", Phone: "+46701234567", Email: "greta.gasfot@example.se"},
			ServiceLocation: booking.Location{Address: "Drottninggatan 1", Postcode: "113 45"}, ConsentConfirmed: true,
			TermsAccepted: true, TermsVersion: svc.Terms.Version, TermsAcceptedAt: benchNow,
		})
	}
	return f
}

// concurrentRun calls op(i) for every i of ids from benchConcurrency
// goroutines, records each latency and returns the wall time.
func concurrentRun(ids []int, latencies []time.Duration, op func(i int) error) (time.Duration, error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	var firstErr atomic.Value
	start := time.Now()
	for range benchConcurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := int(next.Add(1) - 1)
				if k >= len(ids) {
					return
				}
				t := time.Now()
				if err := op(ids[k]); err != nil {
					firstErr.CompareAndSwap(nil, err)
				}
				latencies[ids[k]] = time.Since(t)
			}
		}()
	}
	wg.Wait()
	err, _ := firstErr.Load().(error)
	return time.Since(start), err
}

// benchRounds is how many alternating rounds of each way a benchmark runs:
// direct and HTTP take turns, so both see the same background load of a
// shared machine.
const benchRounds = 6

// BenchmarkConfirm confirms b.N bookings directly and b.N through HTTP per
// engine, in alternating rounds, and reports each way's throughput and
// latency and the ratio of HTTP to direct throughput.
func BenchmarkConfirm(b *testing.B) {
	for _, engine := range sqlstoretest.Engines() {
		b.Run(string(engine), func(b *testing.B) {
			n := b.N
			f := newBenchFixture(b, engine, 2*n)
			ctx := context.Background()
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: benchConcurrency, MaxConnsPerHost: benchConcurrency}}
			direct := func(i int) error {
				out, replay, err := f.lc.Confirm(ctx, f.p, f.inputs[i],
					idem.Key{Owner: f.p.OwnerKey(), Operation: booking.OpConfirm, Key: f.keys[i]}, f.fps[i], confirmOutcome)
				if err == nil && (replay || out.ResourceID == "") {
					err = fmt.Errorf("no new booking (replay %v, resource %q)", replay, out.ResourceID)
				}
				return err
			}
			viaHTTP := func(i int) error {
				req, _ := http.NewRequest("POST", f.http.URL+"/v1/bookings", bytes.NewReader(f.bodies[i]))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+f.token)
				resp, err := client.Do(req)
				if err != nil {
					return err
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusCreated {
					return fmt.Errorf("status %d: %s", resp.StatusCode, body)
				}
				return nil
			}
			latencies := make([]time.Duration, 2*n)
			var elapsed [2]time.Duration
			b.ResetTimer()
			for round := range benchRounds {
				lo, hi := round*n/benchRounds, (round+1)*n/benchRounds
				for way, op := range []func(int) error{direct, viaHTTP} {
					ids := make([]int, 0, hi-lo)
					for i := lo; i < hi; i++ {
						ids = append(ids, 2*i+way) // interleaved over providers and slots
					}
					d, err := concurrentRun(ids, latencies, op)
					if err != nil {
						b.Fatal(err)
					}
					elapsed[way] += d
				}
			}
			b.StopTimer()
			f.check(b)
			var perWay [2][]time.Duration
			for i, l := range latencies {
				perWay[i%2] = append(perWay[i%2], l)
			}
			rate := [2]float64{}
			for way, name := range []string{"direct", "http"} {
				lat := perWay[way]
				slices.Sort(lat)
				rate[way] = float64(len(lat)) / elapsed[way].Seconds()
				b.ReportMetric(rate[way], name+"-confirms/s")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, name+"-p99-ms")
			}
			b.ReportMetric(rate[1]/rate[0], "http/direct")
			b.ReportMetric(0, "ns/op") // the rates are the figures; ns/op of concurrent rounds misleads
		})
	}
}

// check confirms that the run booked what it claims.
func (f *benchFixture) check(b *testing.B) {
	b.Helper()
	var n int
	if err := f.db.R().QueryRowContext(context.Background(), `SELECT COUNT(*) FROM bookings`).Scan(&n); err != nil || n != len(f.inputs) {
		b.Fatalf("%d bookings for %d confirmations (%v)", n, len(f.inputs), err)
	}
}
