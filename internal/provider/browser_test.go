package provider_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/web/webtest"
)

// TestPagesInABrowser drives every provider page flow in a real headless
// Chromium with page scripts disabled, on each engine: sign-in with the
// e-mailed code, the bookings lists, a booking's page, acknowledge, the
// language switch, inviting and removing staff, sign-out. Each write is
// checked in the store (and the cancel in the next search, which offers
// the freed time again); each page is checked with axe-core and
// photographed at phone and desktop width.
func TestPagesInABrowser(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := webtest.Chromium(t)
		e := newPagesEnv(t, db)
		e.seed(t)
		e.browser(t).SignIn(e.sender, staffA) // the staff member's invitation becomes an account
		s := wireSupply(t, e.env, db)
		base := e.srv.URL
		check := webtest.Checker{TB: t, Ctx: ctx, Prefix: "provider-", Photograph: db.Engine() == sqlstore.SQLite}.Check
		wantText := func(page, text string, want ...string) { t.Helper(); webtest.WantText(t, page, text, want...) }

		webtest.Do(t, ctx, "open the bookings signed out", chromedp.Navigate(base+"/provider/bookings"),
			chromedp.WaitVisible(chromedp.ID("email")))
		wantText("sign-in", check("sign-in"), "Logga in", "E-postadress", "Skicka kod", "English")
		webtest.Do(t, ctx, "ask for a code", webtest.Type(chromedp.ID("email"), ownerA),
			chromedp.Click(chromedp.CSS("main button[type=submit]")), chromedp.WaitVisible(chromedp.ID("code")))
		wantText("code", check("code"), "Ange koden", "8 siffror", "Skicka en ny kod")
		webtest.Do(t, ctx, "enter the code", webtest.Type(chromedp.ID("code"), e.sender.Last(t, ownerA)),
			chromedp.Click(chromedp.CSS("main button[type=submit]")), chromedp.WaitVisible(chromedp.CSS("table.bookings")))
		wantText("bookings", check("bookings"), "Kommande bokningar", "Ny – inte kvitterad", "11345")
		if text := webtest.Text(t, ctx); strings.Contains(text, "bk_b_next") {
			t.Error("the list shows another provider's booking")
		}

		webtest.Do(t, ctx, "open the booking", chromedp.Click(chromedp.CSS("table.bookings a")),
			chromedp.WaitVisible(chromedp.ID("acknowledge")))
		wantText("booking", check("booking"), "Bokning bk_a_next", "Kunden", "Test", "test@example.se",
			"Testgatan 1", "Varje visning loggas", "Kvittera bokningen")
		webtest.Do(t, ctx, "acknowledge", chromedp.Click(chromedp.ID("acknowledge")),
			chromedp.WaitVisible(chromedp.CSS("p.notice")))
		wantText("acknowledged booking", check("booking-acknowledged"), "Bokningen är kvitterad.", "Kvitterad", ownerA)
		ownerID := e.userID(t, providerA, ownerA)
		if by, at, status := e.acknowledged(t, "bk_a_next"); by != ownerID || !at.Equal(e.clock.Now()) || status != "sent" {
			t.Errorf("store: acknowledged by %q at %v, status %q; want %s at %v, sent", by, at, status, ownerID, e.clock.Now())
		}
		if got := e.audit(t, providerA); !contains(got, "booking.contact_opened booking") || !contains(got, "booking.acknowledged booking") {
			t.Errorf("audit: %q", got)
		}

		webtest.Do(t, ctx, "flag a problem", webtest.Type(chromedp.ID("note"), "Porten har ny kod.\nRing mig."),
			chromedp.Click(chromedp.ID("flag-submit")),
			chromedp.WaitVisible(chromedp.Search(`//p[@class="notice"][contains(., "Operatören har fått")]`)))
		wantText("flagged booking", check("booking-flagged"), "Operatören har fått ditt meddelande.")
		if types, _ := e.events(t, "bk_a_next"); len(types) != 1 || types[0] != "booking.provider_action_required" {
			t.Errorf("store: events after the flag: %v", types)
		}
		// The page after the flag opened the contact again: the flag is the
		// entry before.
		if entries, err := e.st.ProviderAudit(context.Background(), providerA, 2); err != nil || len(entries) != 2 ||
			entries[1].Action != "booking.flagged" || entries[1].Note != "Porten har ny kod.\nRing mig." {
			t.Errorf("store: audit after the flag: %+v %v", entries, err)
		}

		starts, _ := s.slots(t, providerA, "113 45", "2026-03-04")
		if slices.Contains(starts, "2026-03-04 09:00") {
			t.Fatalf("search offers the booked time: %v", starts)
		}
		webtest.Do(t, ctx, "cancel", chromedp.SetValue(chromedp.ID("reason"), "cannot_do_job"),
			webtest.Type(chromedp.ID("cancel-notes"), "Reservdelen finns inte."),
			chromedp.Click(chromedp.ID("cancel-confirm")), chromedp.Click(chromedp.ID("cancel-submit")),
			chromedp.WaitVisible(chromedp.Search(`//p[@class="notice"][contains(., "avbokad")]`)))
		wantText("cancelled booking", check("booking-cancelled"), "Bokningen är avbokad.", "Avbokad",
			"Bokningen är avbokad: kundens uppgifter visas inte.")
		if text := webtest.Text(t, ctx); strings.Contains(text, "test@example.se") || strings.Contains(text, "Avboka bokningen") {
			t.Errorf("a cancelled booking shows its customer or a cancel form:\n%s", text)
		}
		if types, payloads := e.events(t, "bk_a_next"); len(types) != 2 || types[1] != "booking.cancelled" ||
			!strings.Contains(payloads[1], `"reason":"provider_cancelled"`) {
			t.Errorf("store: events after the cancel: %v %v", types, payloads)
		}
		if starts, _ := s.slots(t, providerA, "113 45", "2026-03-04"); !slices.Contains(starts, "2026-03-04 09:00") {
			t.Errorf("search: the cancelled booking's time is not offered again: %v", starts)
		}

		webtest.Do(t, ctx, "switch to English", chromedp.Click(chromedp.CSS("p.lang a")),
			chromedp.WaitVisible(chromedp.CSS(`html[lang=en]`)))
		webtest.Do(t, ctx, "past bookings, in English", chromedp.Click(chromedp.CSS(`nav.main li:nth-child(2) a`)),
			chromedp.WaitVisible(chromedp.CSS("table.bookings")))
		wantText("past bookings", check("past-en"), "Past bookings", "Saturday 28 February 2026")
		wantText("past bookings' header", webtest.Get(t, ctx, "read the header", chromedp.Text(chromedp.CSS("header.site"))),
			"Bookings", "Past", "Team", "Signed in as "+ownerA, "Sign out")
		if url := webtest.Get(t, ctx, "location", chromedp.Location()); !strings.Contains(url, "lang=en") {
			t.Errorf("the language was not kept across a link: %s", url)
		}

		webtest.Do(t, ctx, "open the team page", chromedp.Navigate(base+"/provider/team"),
			chromedp.WaitVisible(chromedp.ID("email")))
		wantText("team", check("team"), "Personal", "Konton", ownerA, staffA, "Ägare", "Bjud in personal")
		webtest.Do(t, ctx, "invite staff", webtest.Type(chromedp.ID("email"), "ny@vvs-ett.se"),
			chromedp.Click(chromedp.CSS(`form[action="/provider/team/invitations"] button`)),
			chromedp.WaitVisible(chromedp.CSS("p.notice")))
		wantText("team after invite", check("team-invited"), "Inbjudan är skapad", "Väntande inbjudningar", "ny@vvs-ett.se")
		if mails := e.mail.to("ny@vvs-ett.se"); len(mails) != 1 || !strings.Contains(mails[0].Text, "http://127.0.0.1/provider/sign-in") ||
			!strings.Contains(mails[0].Subject, "Du är inbjuden") {
			t.Errorf("invitation e-mails: %+v", mails)
		}
		if ok, err := e.svc.Admits(context.Background(), "ny@vvs-ett.se"); err != nil || !ok {
			t.Errorf("store: the invited address is not admitted: %v %v", ok, err)
		}
		webtest.Do(t, ctx, "open the team page again", chromedp.Navigate(base+"/provider/team"),
			chromedp.WaitVisible(chromedp.ID("email")))
		webtest.Do(t, ctx, "remove the staff member", chromedp.Click(chromedp.CSS(`form[action$="/remove"] button`)),
			chromedp.WaitVisible(chromedp.CSS("p.notice")))
		wantText("team after removal", webtest.Text(t, ctx), "Kontot är borttaget.")
		if id := e.userID(t, providerA, staffA); id != "" {
			t.Errorf("store: the staff member %s is still active", id)
		}

		webtest.Do(t, ctx, "sign out", chromedp.Click(chromedp.CSS("header.site button")),
			chromedp.WaitVisible(chromedp.Search(`//p[@class="notice"][contains(., "utloggad")]`)))
		wantText("signed out", check("signed-out"), "Du är utloggad.", "Logga in")
		var n int
		if err := db.R().QueryRowContext(context.Background(), `SELECT COUNT(*) FROM provider_sessions WHERE user_id = $1`,
			ownerID).Scan(&n); err != nil || n != 0 {
			t.Errorf("store: %d sessions of the owner after sign-out (%v)", n, err)
		}
		webtest.Do(t, ctx, "bookings after sign-out", chromedp.Navigate(base+"/provider/bookings"),
			chromedp.WaitVisible(chromedp.ID("email")))
	})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
