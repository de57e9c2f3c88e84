package operator_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"bokat"
	"bokat/internal/operator"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/web/webtest"
)

// TestConsoleFindsCancelsAndMovesBookings runs the console's booking flow
// over HTTP on each engine: sign-in, search by each field (the e-mail by
// its blind index), a booking's story, a move and a cancel through the
// lifecycle, and the audit rows of each action.
func TestConsoleFindsCancelsAndMovesBookings(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newEnv(t, db)
		op := e.invite(t, operatorEmail)
		id := e.book(t, "one")
		other := e.book(t, "two")
		c := newClient(t, e.srv.URL)
		if p := c.Do("GET", "/operator/bookings", nil); p.Status != http.StatusSeeOther || p.Location != "/operator/sign-in" {
			t.Fatalf("signed out: %d %s", p.Status, p.Location)
		}
		c.SignIn(e.sender, operatorEmail)
		if a := e.audit(t, "operator", op.ID); len(a) != 2 || a[0].Action != operator.ActionSignedIn || a[1].Action != operator.ActionInvited ||
			a[1].Actor != operator.CLIActor("drift") || a[0].Actor != op.ID {
			t.Errorf("audit of the operator: %+v", a)
		}

		for q, want := range map[string][]string{
			"?email=" + url.QueryEscape("  GRETA@example.se "): {id, other},
			"?id=" + id:                 {id},
			"?email=someone@example.se": {},
			"?status=cancelled":         {},
			"?from=2026-03-03&to=2026-03-03&status=confirmed": {id, other},
			"?to=2026-03-02": {},
		} {
			p := c.Do("GET", "/operator/bookings"+q, nil)
			if p.Status != http.StatusOK {
				t.Fatalf("search %s: %d", q, p.Status)
			}
			for _, w := range want {
				if !strings.Contains(p.Body, w) {
					t.Errorf("search %s does not find %s", q, w)
				}
			}
			if len(want) == 0 && !strings.Contains(p.Body, "Inga bokningar matchar.") {
				t.Errorf("search %s finds something:\n%s", q, p.Body)
			}
			if strings.Contains(p.Body, customerEmail+"</") || strings.Contains(p.Body, "Gåsfot") {
				t.Errorf("search %s shows the customer's contact data", q)
			}
		}
		for _, q := range []string{"?status=maybe", "?from=2026-13-01", "?email=not-an-address", "?from=2026-03-04&to=2026-03-03"} {
			if p := c.Do("GET", "/operator/bookings"+q, nil); p.Status != http.StatusBadRequest || !strings.Contains(p.Body, "Kontrollera sökningen") {
				t.Errorf("search %s: %d", q, p.Status)
			}
		}

		story := c.Do("GET", "/operator/bookings/"+id, nil)
		for _, w := range []string{"booking.confirmed", "Till kunden", "Till hantverkaren", "väntar", "Inte kvitterad", "pc_console"} {
			if !strings.Contains(story.Body, w) {
				t.Errorf("the story lacks %q", w)
			}
		}

		// Move: the options are the booked provider's; the move runs the
		// lifecycle's reschedule and writes its audit row in the same
		// transaction.
		mv := c.Do("GET", "/operator/bookings/"+id+"/move?when=om+tre+dagar", nil)
		opt := regexpFind(t, mv.Body, `name="option" value="([^"]+)"`)
		if p := c.Post("/operator/bookings/"+id+"/move", url.Values{"option": {opt}, "for": {"customer"},
			"note": {"Kunden ringde."}}); p.Status != http.StatusBadRequest {
			t.Errorf("a move without the customer's agreement: %d", p.Status)
		}
		p := c.Post("/operator/bookings/"+id+"/move", url.Values{"option": {opt}, "for": {"customer"},
			"note": {"Kunden ringde och bad om en senare tid."}, "agreed": {"yes"}})
		if p.Status != http.StatusSeeOther || p.Location != "/operator/bookings/"+id+"?done=moved_notice" {
			t.Fatalf("move: %d %s\n%s", p.Status, p.Location, p.Body)
		}
		if types, _ := e.events(t, id); len(types) != 2 || types[1] != "booking.rescheduled" {
			t.Errorf("events after the move: %v", types)
		}
		if n := e.jobs(t, id); n != 4 {
			t.Errorf("notification jobs after the move: %d, want 4", n)
		}
		a := e.audit(t, "booking", id)
		if len(a) != 1 || a[0].Action != operator.ActionBookingMoved || a[0].Actor != op.ID ||
			a[0].Details["for"] != "customer" || a[0].Details["note"] != "Kunden ringde och bad om en senare tid." ||
			a[0].Details["from"] == "" || a[0].Details["to"] == "" ||
			!a[0].At.Equal(e.clock.Now()) {
			t.Errorf("audit after the move: %+v", a)
		}

		// Cancel for the provider: the event says the provider cancelled.
		if p := c.Post("/operator/bookings/"+id+"/cancel", url.Values{"for": {"provider"}, "note": {"Montören är sjuk."}}); p.Status != http.StatusBadRequest {
			t.Errorf("a cancel without confirmation: %d", p.Status)
		}
		p = c.Post("/operator/bookings/"+id+"/cancel", url.Values{"for": {"provider"}, "reason": {"other"},
			"note": {"Montören är sjuk."}, "confirm": {"yes"}})
		if p.Status != http.StatusSeeOther {
			t.Fatalf("cancel: %d %s", p.Status, p.Body)
		}
		types, payloads := e.events(t, id)
		if len(types) != 3 || types[2] != "booking.cancelled" || !strings.Contains(payloads[2], `"reason":"provider_cancelled"`) {
			t.Errorf("events after the cancel: %v %v", types, payloads)
		}
		if a := e.audit(t, "booking", id); len(a) != 2 || a[0].Action != operator.ActionBookingCancelled ||
			a[0].Details["for"] != "provider" || a[0].Details["note"] != "Montören är sjuk." {
			t.Errorf("audit after the cancel: %+v", a)
		}
		if e.woken != 1 {
			t.Errorf("the notification worker was woken %d times by the cancel, want 1", e.woken)
		}
		if p := c.Post("/operator/bookings/"+id+"/cancel", url.Values{"for": {"customer"}, "reason": {"other"},
			"note": {"Igen."}, "confirm": {"yes"}}); p.Status != http.StatusConflict {
			t.Errorf("a second cancel: %d", p.Status)
		}

		// Cancel for the customer with the contract's reason.
		p = c.Post("/operator/bookings/"+other+"/cancel", url.Values{"for": {"customer"},
			"reason": {"timing_no_longer_works"}, "note": {"Kunden mejlade supporten."}, "confirm": {"yes"}})
		if p.Status != http.StatusSeeOther {
			t.Fatalf("cancel for the customer: %d %s", p.Status, p.Body)
		}
		var reason string
		if err := db.R().QueryRowContext(context.Background(), `SELECT cancel_reason FROM bookings WHERE id = $1`, other).Scan(&reason); err != nil ||
			reason != "timing_no_longer_works" {
			t.Errorf("cancel reason %q (%v)", reason, err)
		}
		log := c.Do("GET", "/operator/audit?lang=en", nil)
		for _, w := range []string{"Operator log", "booking.cancelled", "booking.moved", "operator.signed_in", other} {
			if !strings.Contains(log.Body, w) {
				t.Errorf("the audit page lacks %q", w)
			}
		}
		if p := c.Do("GET", "/operator/bookings/bkg_nope", nil); p.Status != http.StatusNotFound {
			t.Errorf("an unknown booking: %d", p.Status)
		}
	})
}

func TestInviteRefusesABadOrTakenAddress(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newEnv(t, db)
		e.invite(t, operatorEmail)
		ctx := context.Background()
		if _, err := e.svc.Invite(ctx, operator.CLIActor("drift"), "Drift@Bokat.example"); !errors.Is(err, bokat.ErrConflict) {
			t.Errorf("a second account of the address: %v", err)
		}
		if _, err := e.svc.Invite(ctx, operator.CLIActor("drift"), "not an address"); !errors.Is(err, operator.ErrInvalid) {
			t.Errorf("a bad address: %v", err)
		}
		if ok, err := e.svc.Admits(ctx, "someone@bokat.example"); ok || err != nil {
			t.Errorf("an unknown address is admitted: %v %v", ok, err)
		}
		// The stored address is sealed: the row holds neither it nor its
		// normalised form.
		var stored string
		if err := db.R().QueryRowContext(ctx, `SELECT email FROM operator_users`).Scan(&stored); err != nil ||
			strings.Contains(stored, "bokat.example") {
			t.Errorf("stored address %q (%v)", stored, err)
		}
	})
}

// TestConsoleRefusesControlCharactersInPathValues: an id in a console
// page's path passes the text check the page's parameters pass, so a NUL
// or DEL is 400 on both engines before it reaches the store (on PostgreSQL
// a NUL would be an internal error), and nothing is written.
func TestConsoleRefusesControlCharactersInPathValues(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newEnv(t, db)
		e.invite(t, operatorEmail)
		id := e.book(t, "one")
		c := newClient(t, e.srv.URL)
		c.SignIn(e.sender, operatorEmail)
		for _, bad := range []string{id + "%00", "x%7Fy"} {
			for _, tc := range []struct {
				method, path string
				form         url.Values
			}{
				{"GET", "/operator/bookings/" + bad, nil},
				{"GET", "/operator/bookings/" + bad + "/move", nil},
				{"POST", "/operator/bookings/" + bad + "/cancel", url.Values{"reason": {"other"}, "confirm": {"yes"}}},
				{"GET", "/operator/providers/" + bad, nil},
				{"POST", "/operator/providers/" + bad + "/pause", nil},
				{"POST", "/operator/providers/prv_sthlm_vvs_1/tokens/" + bad + "/revoke", url.Values{"confirm": {"yes"}}},
				{"POST", "/operator/follow-ups/" + bad + "/note", url.Values{"note": {"Ringt"}}},
				{"POST", "/operator/partners/" + bad + "/rotate", nil},
				{"POST", "/operator/partners/" + bad + "/revoke", url.Values{"confirm": {"yes"}}},
				{"POST", "/operator/oauth-clients/" + bad + "/revoke", url.Values{"confirm": {"yes"}}},
			} {
				var p webtest.Response
				if tc.method == "GET" {
					p = c.Do("GET", tc.path, nil)
				} else {
					p = c.Post(tc.path, tc.form)
				}
				if p.Status != http.StatusBadRequest {
					t.Errorf("%s %s: %d, want 400", tc.method, tc.path, p.Status)
				}
			}
		}
		if types, _ := e.events(t, id); len(types) != 1 {
			t.Errorf("events of %s: %v, want only its confirmation", id, types)
		}
	})
}

// TestConsoleMovesAndCancelsTestBookingsOnTheirOwnersClock: a test
// booking's move page offers its own provider's times in the test realm,
// counted from its owner's test clock (ten days ahead of the server's);
// the move and the cancel write the booking's times on that clock, as the
// owner's own calls would, and the operator's audit on the server's, on
// each engine.
func TestConsoleMovesAndCancelsTestBookingsOnTheirOwnersClock(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		e := newEnv(t, db)
		op := e.invite(t, operatorEmail)
		sandbox := bokat.Principal{Kind: bokat.PrincipalPartner, ClientID: "pc_sandbox", Mode: bokat.ModeTest}
		// The provider the faucet search finds first joins the test realm.
		live := e.book(t, "live")
		prv, _ := e.bookedProvider(t, live)
		if err := e.exec(`UPDATE providers SET mode = 'test' WHERE id = $1`, prv); err != nil {
			t.Fatal(err)
		}
		if err := e.exec(`UPDATE supply_revision SET revision = revision + 1 WHERE id = 1`); err != nil {
			t.Fatal(err)
		}
		const ahead = 10 * 24 * time.Hour
		if _, err := db.AdvanceTestClock(ctx, sandbox.ClientID, "", e.clock.Now(), func(time.Duration) (time.Duration, error) {
			return ahead, nil
		}); err != nil {
			t.Fatal(err)
		}
		id := e.bookIn(t, bokat.WithTestClock(ctx, ahead), sandbox, "test")
		ownerNow := e.clock.Now().Add(ahead)
		slotOf := func() time.Time {
			t.Helper()
			var start int64
			if err := db.R().QueryRowContext(ctx, `SELECT slot_start_at FROM bookings WHERE id = $1`, id).Scan(&start); err != nil {
				t.Fatal(err)
			}
			return time.UnixMilli(start)
		}
		if booked := slotOf(); !booked.After(ownerNow) {
			t.Fatalf("the test booking is at %v, before its owner's now %v", booked, ownerNow)
		}

		c := newClient(t, e.srv.URL)
		c.SignIn(e.sender, operatorEmail)
		mv := c.Do("GET", "/operator/bookings/"+id+"/move?when=om+fyra+dagar", nil)
		if mv.Status != http.StatusOK || strings.Contains(mv.Body, "booked_provider_not_bookable") {
			t.Fatalf("the move page of a test booking: %d\n%s", mv.Status, mv.Body)
		}
		opt := regexpFind(t, mv.Body, `name="option" value="([^"]+)"`)
		p := c.Post("/operator/bookings/"+id+"/move", url.Values{"option": {opt}, "for": {"customer"},
			"note": {"Integratören bad om en annan tid."}, "agreed": {"yes"}})
		if p.Status != http.StatusSeeOther {
			t.Fatalf("move: %d %s\n%s", p.Status, p.Location, p.Body)
		}
		// "Om fyra dagar" on the owner's clock: four days after its now.
		if moved := slotOf(); moved.Before(ownerNow.Add(3 * 24 * time.Hour)) {
			t.Errorf("moved to %v, want four days after the owner's now %v", moved, ownerNow)
		}
		var occurred int64
		if err := db.R().QueryRowContext(ctx, `SELECT occurred_at FROM outbox_events WHERE booking_id = $1
			AND event_type = 'booking.rescheduled'`, id).Scan(&occurred); err != nil || !time.UnixMilli(occurred).Equal(ownerNow) {
			t.Errorf("the move's event at %v (%v), want the owner's now %v", time.UnixMilli(occurred), err, ownerNow)
		}

		p = c.Post("/operator/bookings/"+id+"/cancel", url.Values{"for": {"customer"}, "reason": {"timing_no_longer_works"},
			"note": {"Integratören bad oss avboka."}, "confirm": {"yes"}})
		if p.Status != http.StatusSeeOther {
			t.Fatalf("cancel: %d %s", p.Status, p.Body)
		}
		var cancelled int64
		if err := db.R().QueryRowContext(ctx, `SELECT cancelled_at FROM bookings WHERE id = $1`, id).Scan(&cancelled); err != nil ||
			!time.UnixMilli(cancelled).Equal(ownerNow) {
			t.Errorf("cancelled at %v (%v), want the owner's now %v", time.UnixMilli(cancelled), err, ownerNow)
		}
		a := e.audit(t, "booking", id)
		if len(a) != 2 || a[0].Action != operator.ActionBookingCancelled || a[1].Action != operator.ActionBookingMoved ||
			a[0].Actor != op.ID || !a[0].At.Equal(e.clock.Now()) || !a[1].At.Equal(e.clock.Now()) {
			t.Errorf("audit: %+v; want the move and the cancel at the server's now", a)
		}
	})
}
