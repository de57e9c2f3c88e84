package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"bokat/internal/clocktest"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/webhook/webhooktest"
	"bokat/webhookverify"
)

// TestServeProcessesDeliverABookingBurstExactlyOnce makes a burst of 200
// real bookings through HTTP, spread over the serve processes sharing one
// database (two on PostgreSQL; one on SQLite, which is single-process by
// design), and checks that the receiver gets every booking.confirmed event
// exactly once, correctly signed, and that on PostgreSQL both processes
// delivered some of them (each process's own bokat_webhook_deliveries_total).
func TestServeProcessesDeliverABookingBurstExactlyOnce(t *testing.T) {
	t.Parallel()
	for _, engine := range sqlstoretest.Engines() {
		t.Run(string(engine), func(t *testing.T) {
			const bookings = 200
			dbURL := sqlstoretest.URL(t, engine)
			token := prepareStore(t, dbURL, manyProviders(20))
			procs := []*process{startProcess(t, dbURL, "--webhook-allow-private")}
			if engine != sqlstore.SQLite {
				procs = append(procs, startProcess(t, dbURL, "--webhook-allow-private"))
			}
			client := &http.Client{Timeout: time.Minute}
			t.Cleanup(func() {
				if t.Failed() {
					for i, p := range procs {
						for _, line := range strings.Split(p.logs.String(), "\n") {
							if strings.Contains(line, `"level":"ERROR"`) || strings.Contains(line, `"level":"WARN"`) {
								t.Logf("process %d: %s", i, line)
							}
						}
					}
				}
			})

			rc := webhooktest.NewReceiver(t, nil)
			status, res, err := call(client, "POST", procs[0].baseURL+"/v1/webhook-endpoints", token,
				map[string]any{"url": rc.URL, "event_types": []string{"booking.confirmed"}})
			if err != nil || status != 201 {
				t.Fatalf("register the endpoint: %d %v %v", status, res, err)
			}
			verifier, err := webhookverify.New(res["signing_secret"].(string))
			if err != nil {
				t.Fatal(err)
			}

			// Eight clients take the 200 bookings from a queue; each sends its
			// n-th attempt to process n mod len(procs), and after a taken slot
			// (409) tries the same booking again with a fresh search.
			var (
				mu        sync.Mutex
				booked    = map[string]int{} // booking id → process that confirmed it
				lastAt    time.Time          // when the last confirmation answered
				conflicts int
				wg        sync.WaitGroup
			)
			queue := make(chan int, bookings)
			for n := range bookings {
				queue <- n
			}
			close(queue)
			// A booking whose every attempt meets a taken slot would loop for
			// ever; it is bounded by attempts, not by the clock, so a slow
			// machine cannot fail the test. Each conflict means another
			// client booked, so a bound this far above the expected few is
			// reached only when no progress is made.
			const maxAttempts = 50
			start := time.Now()
			for w := range 8 {
				wg.Go(func() {
					rng := rand.New(rand.NewPCG(uint64(w), 11))
					i := 0
					for n := range queue {
						for attempt := 1; ; i, attempt = i+1, attempt+1 {
							if attempt > maxAttempts {
								t.Errorf("booking %d: %d attempts, each met a taken slot", n, maxAttempts)
								return
							}
							pi := (w + i) % len(procs)
							base := procs[pi].baseURL
							status, res, err := call(client, "POST", base+"/v1/booking-options", "", crashSearch)
							if err != nil || status != 200 {
								t.Errorf("search on process %d: %d %v", pi, status, err)
								return
							}
							opts, _ := res["options"].([]any)
							if len(opts) == 0 {
								t.Errorf("search on process %d found no options", pi)
								return
							}
							o := opts[rng.IntN(len(opts))].(map[string]any)
							status, res, err = call(client, "POST", base+"/v1/bookings", token, crashConfirm(o, fmt.Sprintf("burst-%d-%d", w, i)))
							if err != nil {
								t.Errorf("confirm on process %d: %v", pi, err)
								return
							}
							mu.Lock()
							if status == 201 {
								booked[res["booking"].(map[string]any)["id"].(string)] = pi
								lastAt = time.Now()
							} else if status == 409 {
								conflicts++
							}
							mu.Unlock()
							if status == 201 {
								i++
								break
							}
							if status != 409 {
								t.Errorf("confirm on process %d: %d %v", pi, status, res)
								return
							}
						}
					}
				})
			}
			wg.Wait()
			booking := time.Since(start)
			if t.Failed() || len(booked) != bookings {
				t.Fatalf("%d bookings in %s", len(booked), booking)
			}
			const total = bookings
			perProcBookings := make([]int, len(procs))
			for _, pi := range booked {
				perProcBookings[pi]++
			}

			got := rc.WaitFor(t, total)
			// A late duplicate would arrive after the count is reached: give
			// the dispatchers a moment to show one.
			time.Sleep(300 * time.Millisecond)
			got = rc.Deliveries()

			perWebhookID, perOutboxID, perBooking := map[string]int{}, map[string]int{}, map[string]int{}
			var lags []time.Duration
			first, last := got[0].At, got[0].At
			for i, d := range got {
				id, err := verifier.Verify(d.Header, d.Body)
				if err != nil {
					t.Fatalf("delivery %d does not verify: %v", i, err)
				}
				var ev struct {
					ID        string    `json:"id"`
					OutboxID  string    `json:"outbox_id"`
					Type      string    `json:"type"`
					CreatedAt time.Time `json:"created_at"`
					Data      struct {
						Booking struct {
							ID string `json:"id"`
						} `json:"booking"`
					} `json:"data"`
				}
				if err := json.Unmarshal(d.Body, &ev); err != nil {
					t.Fatalf("delivery %d: %v", i, err)
				}
				if ev.ID != id || ev.Type != "booking.confirmed" {
					t.Errorf("delivery %d: id %q type %q, Webhook-Id %q", i, ev.ID, ev.Type, id)
				}
				perWebhookID[id]++
				perOutboxID[ev.OutboxID]++
				perBooking[ev.Data.Booking.ID]++
				lags = append(lags, d.At.Sub(ev.CreatedAt))
				if d.At.Before(first) {
					first = d.At
				}
				if d.At.After(last) {
					last = d.At
				}
			}
			for name, counts := range map[string]map[string]int{"Webhook-Id": perWebhookID, "outbox_id": perOutboxID, "booking": perBooking} {
				for id, n := range counts {
					if n != 1 {
						t.Errorf("%s %s delivered %d times", name, id, n)
					}
				}
				if len(counts) != total {
					t.Errorf("%d distinct %s values, want %d", len(counts), name, total)
				}
			}
			for id := range booked {
				if perBooking[id] != 1 {
					t.Errorf("booking %s: %d deliveries", id, perBooking[id])
				}
			}
			if len(got) != total {
				t.Errorf("receiver got %d requests, want %d", len(got), total)
			}

			// Each process counts the attempts its own dispatcher recorded.
			// A dispatcher counts an attempt after the receiver answered it,
			// so the last ones may still be on their way to the counter:
			// the counters are read until they add up, for at most 30 s.
			perProc := make([]map[string]float64, len(procs))
			sum := 0.0
			for wait := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				sum = 0
				for i, p := range procs {
					perProc[i] = webhookCounters(t, client, p.baseURL)
					sum += perProc[i]["delivered"]
				}
				if int(sum) >= total || time.Now().After(wait) {
					break
				}
			}
			for i := range procs {
				if perProc[i]["retry"] != 0 || perProc[i]["failed"] != 0 {
					t.Errorf("process %d recorded failed attempts: %v", i, perProc[i])
				}
				if len(procs) > 1 && perProc[i]["delivered"] == 0 {
					t.Errorf("process %d delivered nothing: %v", i, perProc[i])
				}
			}
			if int(sum) != total {
				t.Errorf("the processes recorded %v deliveries in all, want %d", sum, total)
			}

			slices.Sort(lags)
			pct := func(p float64) time.Duration { return lags[int(p*float64(len(lags)-1))] }
			t.Logf("%s: %d processes, %d bookings (per process %v, %d conflicts) in %s (%.0f/s); "+
				"deliveries per process %v; %d deliveries in %s from first to last (%.0f/s); "+
				"last delivery %s after the last confirmation answered; commit→delivery lag p50 %s p99 %s max %s",
				engine, len(procs), total, perProcBookings, conflicts, booking.Round(time.Millisecond),
				float64(total)/booking.Seconds(), deliveredPer(perProc), len(got), last.Sub(first).Round(time.Millisecond),
				float64(len(got))/last.Sub(first).Seconds(), last.Sub(lastAt).Round(time.Millisecond), pct(0.50).Round(time.Millisecond),
				pct(0.99).Round(time.Millisecond), lags[len(lags)-1].Round(time.Millisecond))

			for i, p := range procs {
				if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
					t.Fatal(err)
				}
				select {
				case err := <-p.done:
					if err != nil {
						t.Errorf("process %d after SIGTERM: %v", i, err)
					}
				case <-clocktest.Patience(t).Done():
					t.Errorf("process %d did not stop after SIGTERM before the test binary's deadline", i)
				}
			}
		})
	}
}

// webhookCounters scrapes bokat_webhook_deliveries_total by result from a
// process's /metrics.
func webhookCounters(tb testing.TB, client *http.Client, baseURL string) map[string]float64 {
	tb.Helper()
	resp, err := client.Get(baseURL + "/metrics")
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		tb.Fatalf("GET /metrics: %d", resp.StatusCode)
	}
	out := map[string]float64{}
	lines := bufio.NewScanner(resp.Body)
	for lines.Scan() {
		rest, ok := strings.CutPrefix(lines.Text(), `bokat_webhook_deliveries_total{result="`)
		if !ok {
			continue
		}
		result, value, _ := strings.Cut(rest, `"} `)
		n, err := strconv.ParseFloat(value, 64)
		if err != nil {
			tb.Fatalf("metrics line %q: %v", lines.Text(), err)
		}
		out[result] = n
	}
	if _, ok := out["delivered"]; !ok {
		tb.Fatalf("no bokat_webhook_deliveries_total in /metrics")
	}
	return out
}

func deliveredPer(perProc []map[string]float64) []int {
	out := make([]int, len(perProc))
	for i, m := range perProc {
		out[i] = int(m["delivered"])
	}
	return out
}
