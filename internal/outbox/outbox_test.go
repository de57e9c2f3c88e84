package outbox_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"bokat"
	"bokat/api"
	"bokat/internal/outbox"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/webhook"
	"bokat/internal/webhook/webhooktest"
)

var loadContract = sync.OnceValues(api.Load)

func TestRelayCreatesOneDeliveryPerSubscribedEndpointOfTheOwner(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		rc := webhooktest.NewReceiver(t, nil)
		both, _ := f.endpoint(acme, rc.URL+"/both", bokat.EventBookingConfirmed, bokat.EventBookingCancelled)
		cancelOnly, _ := f.endpoint(acme, rc.URL+"/cancel", bokat.EventBookingCancelled)
		deleted, _ := f.endpoint(acme, rc.URL+"/deleted", bokat.EventBookingConfirmed)
		if err := f.svc.DeleteEndpoint(ctx, acme, deleted.ID); err != nil {
			t.Fatal(err)
		}
		other, _ := f.endpoint(globex, rc.URL+"/globex", bokat.EventBookingConfirmed)
		acmeUser := bokat.Principal{Kind: bokat.PrincipalOAuth, ClientID: acme.ClientID, UserID: "user_1"}
		userEP, _ := f.endpoint(acmeUser, rc.URL+"/user", bokat.EventBookingConfirmed)

		confirmed := f.event(acme, "bk_1", bokat.EventBookingConfirmed)
		cancelled := f.event(acme, "bk_1", bokat.EventBookingCancelled)
		globexEv := f.event(globex, "bk_2", bokat.EventBookingConfirmed)
		userEv := f.event(acmeUser, "bk_3", bokat.EventBookingConfirmed)
		rescheduled := f.event(acme, "bk_1", bokat.EventBookingRescheduled) // nobody subscribes

		if n, err := f.relay.RunOnce(ctx); err != nil || n != 5 {
			t.Fatalf("relay = %d, %v; want 5 events", n, err)
		}
		endpointsOf := func(ev outbox.Event) []string {
			var ids []string
			webhookIDs := map[string]bool{}
			for _, d := range f.deliveries(ev.ID) {
				if d.Status != outbox.DeliveryPending || d.Origin != outbox.OriginRelay || d.Attempts != 0 {
					t.Errorf("delivery %+v: want a pending relay delivery without attempts", d)
				}
				ids = append(ids, d.EndpointID)
				webhookIDs[d.WebhookID] = true
			}
			if len(webhookIDs) > 1 {
				t.Errorf("event %s: %d Webhook-Ids, want one shared by its endpoints", ev.EventType, len(webhookIDs))
			}
			slices.Sort(ids)
			return ids
		}
		sorted := func(ids ...string) []string { slices.Sort(ids); return ids }
		for _, tc := range []struct {
			name string
			ev   outbox.Event
			want []string
		}{
			{"confirmed to the subscribed, not deleted endpoint", confirmed, []string{both.ID}},
			{"cancelled to both subscribers", cancelled, sorted(both.ID, cancelOnly.ID)},
			{"another client's event to its own endpoint", globexEv, []string{other.ID}},
			{"a user's event to the user's endpoint only", userEv, []string{userEP.ID}},
			{"an event nobody subscribes to", rescheduled, nil},
		} {
			if got := endpointsOf(tc.ev); !slices.Equal(got, tc.want) {
				t.Errorf("%s: endpoints %v, want %v", tc.name, got, tc.want)
			}
		}
		if d1, d2 := f.deliveries(confirmed.ID), f.deliveries(cancelled.ID); d1[0].WebhookID == d2[0].WebhookID {
			t.Error("two events share a Webhook-Id")
		}
		// Relaying again creates nothing: each event is relayed once.
		if n, err := f.relay.RunOnce(ctx); err != nil || n != 0 {
			t.Fatalf("second relay = %d, %v; want 0", n, err)
		}
		if got := len(f.deliveries(cancelled.ID)); got != 2 {
			t.Fatalf("after a second relay: %d deliveries, want 2", got)
		}
	})
}

func TestRetriesAfterErrorsAndTimeoutsKeepTheWebhookID(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		f := newFixture(t, db)
		// 500, then no answer within the (test) timeout, then success.
		rc := webhooktest.NewReceiver(t, func(n int, _ *http.Request) int {
			return []int{http.StatusInternalServerError, -1, http.StatusOK}[min(n, 2)]
		})
		_, secret := f.endpoint(acme, rc.URL, bokat.EventBookingConfirmed)
		ev := f.event(acme, "bk_1", bokat.EventBookingConfirmed)

		if _, n := f.pump(); n != 1 {
			t.Fatalf("first round attempted %d, want 1", n)
		}
		d := f.deliveries(ev.ID)[0]
		if d.Status != outbox.DeliveryPending || d.Attempts != 1 || !d.NextAttemptAt.Equal(f.clock.Now().Add(5*time.Second)) {
			t.Fatalf("after a 500: %+v, want pending, 1 attempt, next in 5 s", d)
		}
		f.clock.Advance(5*time.Second - time.Millisecond)
		if _, n := f.pump(); n != 0 {
			t.Fatalf("a retry ran %d early", n)
		}
		f.clock.Advance(time.Millisecond)
		// The receiver holds this one until the sender gives up.
		f.withSenderTimeout(300*time.Millisecond, func() {
			if _, n := f.pump(); n != 1 {
				t.Fatal("the retry did not run when due")
			}
		})
		d = f.deliveries(ev.ID)[0]
		if d.Status != outbox.DeliveryPending || d.Attempts != 2 || !d.NextAttemptAt.Equal(f.clock.Now().Add(5*time.Minute)) {
			t.Fatalf("after a timeout: %+v, want pending, 2 attempts, next in 5 min", d)
		}
		f.clock.Advance(5 * time.Minute)
		f.pump()
		d = f.deliveries(ev.ID)[0]
		if d.Status != outbox.DeliveryDelivered || d.Attempts != 3 || d.FinishedAt.IsZero() {
			t.Fatalf("after a 200: %+v, want delivered after 3 attempts", d)
		}

		got := rc.Deliveries()
		if len(got) != 3 {
			t.Fatalf("receiver got %d requests, want 3", len(got))
		}
		for i, r := range got {
			if id := r.Header.Get("Webhook-Id"); id != d.WebhookID || bodyField(t, r.Body, "id") != d.WebhookID {
				t.Errorf("request %d: Webhook-Id %q, want the delivery's %q", i, id, d.WebhookID)
			}
			if string(r.Body) != string(got[0].Body) {
				t.Errorf("request %d: body differs from the first", i)
			}
		}
		f.verify(secret, got[2])

		attempts := f.attempts(d.ID)
		want := []struct {
			code int
			err  string
		}{{500, "HTTP 500"}, {0, "timeout"}, {200, ""}}
		if len(attempts) != len(want) {
			t.Fatalf("%d attempts recorded, want %d", len(attempts), len(want))
		}
		for i, a := range attempts {
			if a.Attempt != i+1 || a.StatusCode != want[i].code || !strings.Contains(a.Error, want[i].err) || (want[i].err == "") != (a.Error == "") {
				t.Errorf("attempt %d = %+v, want status %d error %q", i+1, a, want[i].code, want[i].err)
			}
			if a.AttemptedAt.IsZero() || a.Latency < 0 {
				t.Errorf("attempt %d lacks its time or latency: %+v", i+1, a)
			}
		}
		if attempts[1].Latency < 300*time.Millisecond {
			t.Errorf("timed-out attempt latency %s, want at least the 300ms timeout", attempts[1].Latency)
		}
	})
}

func TestDeliveryFailsAfterTheWholeSchedule(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		f := newFixture(t, db)
		rc := webhooktest.NewReceiver(t, func(int, *http.Request) int { return http.StatusServiceUnavailable })
		f.endpoint(acme, rc.URL, bokat.EventBookingConfirmed)
		ev := f.event(acme, "bk_1", bokat.EventBookingConfirmed)
		start := f.clock.Now()
		f.pump()
		var waited []time.Duration
		for range 10 {
			d := f.deliveries(ev.ID)[0]
			if d.Status != outbox.DeliveryPending {
				break
			}
			wait := d.NextAttemptAt.Sub(f.clock.Now())
			waited = append(waited, wait)
			f.clock.Advance(wait)
			f.pump()
		}
		if want := outbox.RetrySchedule(); !slices.Equal(waited, want) {
			t.Fatalf("waits between attempts %v, want %v", waited, want)
		}
		d := f.deliveries(ev.ID)[0]
		if d.Status != outbox.DeliveryFailed || d.Attempts != 8 || d.LastStatusCode != 503 {
			t.Fatalf("after the schedule: %+v, want failed after 8 attempts", d)
		}
		if rc.Count() != 8 {
			t.Fatalf("receiver got %d requests, want 8", rc.Count())
		}
		if total := f.clock.Now().Sub(start); total != 5*time.Second+5*time.Minute+30*time.Minute+27*time.Hour {
			t.Errorf("the schedule took %s", total)
		}
		// A failed delivery is never tried again.
		f.clock.Advance(48 * time.Hour)
		if _, n := f.pump(); n != 0 || rc.Count() != 8 {
			t.Fatalf("a failed delivery was attempted again")
		}
	})
}

func TestJitterStaysWithinTenPercent(t *testing.T) {
	t.Parallel()
	for _, d := range outbox.RetrySchedule() {
		seen := map[time.Duration]bool{}
		for range 200 {
			j := outbox.Jitter(d)
			if j < d-d/10 || j > d+d/10 {
				t.Fatalf("Jitter(%s) = %s, outside ±10%%", d, j)
			}
			seen[j] = true
		}
		if len(seen) < 50 {
			t.Fatalf("Jitter(%s) gave only %d distinct values in 200 draws", d, len(seen))
		}
	}
}

func TestGoneDisablesTheEndpoint(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		f := newFixture(t, db, func(dc *outbox.DispatcherConfig, _ *webhook.SenderConfig) { dc.Concurrency = 1 })
		rc := webhooktest.NewReceiver(t, func(int, *http.Request) int { return http.StatusGone })
		ep, _ := f.endpoint(acme, rc.URL, bokat.EventBookingConfirmed)
		first := f.event(acme, "bk_1", bokat.EventBookingConfirmed)
		f.clock.Advance(time.Millisecond)
		second := f.event(acme, "bk_2", bokat.EventBookingConfirmed)
		f.pump()
		if d := f.deliveries(first.ID)[0]; d.Status != outbox.DeliveryFailed || d.LastStatusCode != 410 {
			t.Fatalf("the 410 delivery: %+v, want failed", d)
		}
		if d := f.deliveries(second.ID)[0]; d.Status != outbox.DeliveryCancelled || !strings.Contains(d.LastError, "410") {
			t.Fatalf("the other pending delivery: %+v, want cancelled", d)
		}
		eps, err := f.svc.ListEndpoints(context.Background(), acme)
		if err != nil || len(eps) != 1 || eps[0].ID != ep.ID || eps[0].Enabled {
			t.Fatalf("endpoints after 410: %+v %v, want the endpoint listed as disabled", eps, err)
		}
		// New events no longer go to it.
		third := f.event(acme, "bk_3", bokat.EventBookingConfirmed)
		f.pump()
		if n := len(f.deliveries(third.ID)); n != 0 || rc.Count() != 1 {
			t.Fatalf("a disabled endpoint got %d deliveries, receiver %d requests", n, rc.Count())
		}
	})
}

func TestDeletingAnEndpointCancelsItsPendingDeliveries(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		f := newFixture(t, db)
		rc := webhooktest.NewReceiver(t, nil)
		ep, _ := f.endpoint(acme, rc.URL, bokat.EventBookingConfirmed)
		ev := f.event(acme, "bk_1", bokat.EventBookingConfirmed)
		if _, err := f.relay.RunOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := f.svc.DeleteEndpoint(context.Background(), acme, ep.ID); err != nil {
			t.Fatal(err)
		}
		f.pump()
		if d := f.deliveries(ev.ID)[0]; d.Status != outbox.DeliveryCancelled || rc.Count() != 0 {
			t.Fatalf("delivery %+v, receiver %d; want cancelled and nothing sent", d, rc.Count())
		}
	})
}

func TestAnExpiredLeaseIsTakenOverAndALateResultIgnored(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		rc := webhooktest.NewReceiver(t, nil)
		f.endpoint(acme, rc.URL, bokat.EventBookingConfirmed)
		ev := f.event(acme, "bk_1", bokat.EventBookingConfirmed)
		if _, err := f.relay.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
		// A worker claims the delivery, then dies.
		dead, err := db.ClaimWebhookDeliveries(ctx, f.clock.Now(), 2*time.Minute, 10, "dead-worker")
		if err != nil || len(dead) != 1 {
			t.Fatalf("claim: %v %v", dead, err)
		}
		if _, n := f.pump(); n != 0 {
			t.Fatal("a leased delivery was claimed again")
		}
		f.clock.Advance(2 * time.Minute)
		if _, n := f.pump(); n != 1 || rc.Count() != 1 {
			t.Fatalf("after the lease: attempted %d, receiver %d; want the delivery taken over", n, rc.Count())
		}
		// The dead worker's late failure does not undo the success.
		if _, err := db.RecordWebhookAttempt(ctx, outbox.Attempt{
			DeliveryID: dead[0].ID, LeaseToken: "dead-worker", AttemptedAt: f.clock.Now(), Error: "late",
			Status: outbox.DeliveryPending, NextAttemptAt: f.clock.Now().Add(time.Hour), Now: f.clock.Now(),
		}); err != nil {
			t.Fatal(err)
		}
		if d := f.deliveries(ev.ID)[0]; d.Status != outbox.DeliveryDelivered || d.Attempts != 2 {
			t.Fatalf("after the late result: %+v, want still delivered (2 attempts recorded)", d)
		}
	})
}
