package provider_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"bokat/internal/provider"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/web/webtest"
)

// FuzzPageForms posts arbitrary values to every provider form (the
// calendars' too, feeds on loopback allowed as in development; and reads
// the pages with arbitrary parameters) as a signed-in owner, on SQLite: no
// input gets a server error, and a request that is refused (anything but a
// redirect after a write) leaves no audit row and no event behind, so
// nothing is half-written.
func FuzzPageForms(f *testing.F) {
	// No limiter: the clock stands still, so a page budget would run out
	// for good after its quota.
	db := sqlstoretest.Open(f, sqlstore.SQLite)
	e := newPagesEnv(f, db, func(c *provider.PagesConfig) { c.Limiter = nil }, withCalendars(f, db))
	e.seed(f)
	owner := e.browser(f)
	owner.SignIn(e.sender, ownerA)
	staff := e.browser(f)
	staff.SignIn(e.sender, staffA)
	staffID := e.userID(f, providerA, staffA)
	for _, seed := range []struct {
		op      uint8
		a, b, c string
	}{
		{0, "bk_a_next", "Fel adress", ""}, {0, "bk_a_next", "x", ""}, {0, "bk_b_next", "Fel", ""},
		{0, "bk_a_next", "rad ett\r\nrad två", ""}, {0, "bk_a_next", "\x00\x01", ""},
		{1, "bk_a_next", "illness", "yes"}, {1, "bk_a_next", "bored", "yes"}, {1, "bk_a_next", "illness", "no"},
		{2, "ny@example.se", "", ""}, {2, "not an address", "", ""}, {2, ownerA, "", ""},
		{3, staffID, "", ""}, {3, "pu_nobody", "", ""}, {4, "pi_nobody", "", ""},
		{5, "bk_a_next", "", ""}, {5, "../../etc/passwd", "", ""}, {6, "bk_a_next", "", ""}, {6, "%zz", "", ""},
		{7, "past", "", ""}, {7, "\xff", "", ""},
		{8, "http://127.0.0.1:9/hemlig/a.ics", "busy_only", ""}, {8, "webcal://127.0.0.1/b.ics", "", ""},
		{8, "ftp://127.0.0.1/c.ics", "everything", ""}, {8, "http://127.0.0.1:9/d.ics", "sometimes", ""},
		{9, "cfd_nobody", "everything", ""}, {9, "../x", "", ""}, {10, "cfd_nobody", "", ""}, {10, "%zz", "", ""},
	} {
		f.Add(seed.op, seed.a, seed.b, seed.c)
	}
	f.Fuzz(func(t *testing.T, op uint8, a, b, c string) {
		br := owner.For(t)
		auditBefore, eventsBefore := e.counts(t)
		var p webtest.Response
		switch op % 11 {
		case 0:
			p = br.Post("/provider/bookings/"+url.PathEscape(a)+"/flag", url.Values{"note": {b}})
		case 1:
			p = br.Post("/provider/bookings/"+url.PathEscape(a)+"/cancel", url.Values{"reason": {b}, "confirm": {c}, "cancel_notes": {a}})
		case 2:
			p = br.Post("/provider/team/invitations", url.Values{"email": {a}})
		case 3:
			p = br.Post("/provider/team/users/"+url.PathEscape(a)+"/remove", nil)
		case 4:
			p = br.Post("/provider/team/invitations/"+url.PathEscape(a)+"/withdraw", nil)
		case 5:
			p = br.Post("/provider/bookings/"+url.PathEscape(a)+"/acknowledge", nil)
		case 6:
			p = br.Get("/provider/bookings/" + url.PathEscape(a))
		case 7:
			p = br.Get("/provider/bookings?view=" + url.QueryEscape(a) + "&lang=" + url.QueryEscape(b))
		case 8:
			p = br.Post("/provider/calendars", url.Values{"url": {a}, "rule": {b}})
		case 9:
			p = br.Post("/provider/calendars/"+url.PathEscape(a)+"/rule", url.Values{"rule": {b}})
		case 10:
			p = br.Post("/provider/calendars/"+url.PathEscape(a)+"/remove", nil)
		}
		o := op % 11
		if p.Status >= 500 {
			t.Fatalf("op %d (%q, %q, %q): %d\n%s", o, a, b, c, p.Status, p.Body)
		}
		if auditAfter, eventsAfter := e.counts(t); p.Status != http.StatusSeeOther && (o < 6 || o > 7) &&
			(auditAfter != auditBefore || eventsAfter != eventsBefore) {
			t.Fatalf("op %d (%q, %q, %q) was refused with %d but wrote %d audit rows and %d events", o, a, b, c,
				p.Status, auditAfter-auditBefore, eventsAfter-eventsBefore)
		}
	})
}

// counts returns the number of audit rows of writes (a page that shows a
// booking's customer records an opening, which is no write) and of outbox
// events.
func (e *pagesEnv) counts(t testing.TB) (audit, events int) {
	t.Helper()
	err := e.db.R().QueryRowContext(context.Background(), `SELECT (SELECT COUNT(*) FROM provider_audit WHERE action <> 'booking.contact_opened'),
		(SELECT COUNT(*) FROM outbox_events)`).Scan(&audit, &events)
	if err != nil {
		t.Fatal(err)
	}
	return audit, events
}
