package operator_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"bokat/internal/operator"
	"bokat/internal/provider"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/web/webtest"
)

// TestConsoleInABrowser drives the console's booking flows in a real
// headless Chromium with page scripts disabled, on each engine: sign-in
// with the e-mailed code, a search by the customer's e-mail, a booking's
// story, a move and a cancel on someone's behalf, the audit log, the
// language switch and sign-out. Each write is checked in the store; each
// page is checked with axe-core and photographed at phone and desktop
// width.
func TestConsoleInABrowser(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := webtest.Chromium(t)
		e := newEnv(t, db)
		op := e.invite(t, operatorEmail)
		id := e.book(t, "browser")
		prv, name := e.bookedProvider(t, id)
		request := e.request(t, "Storgatan 1, 981 31 Kiruna")
		e.failProviderMessage(t, id, "550 mailbox unavailable")
		e.addFeed(t, prv, "cfd_stale", "calendar.example.se", e.clock.Now().Add(-10*time.Hour), e.clock.Now().Add(-7*time.Hour))
		base := e.srv.URL
		check := webtest.Checker{TB: t, Ctx: ctx, Prefix: "operator-", Photograph: db.Engine() == sqlstore.SQLite}.Check
		wantText := func(page, text string, want ...string) { t.Helper(); webtest.WantText(t, page, text, want...) }

		webtest.Do(t, ctx, "open the console signed out", chromedp.Navigate(base+"/operator/bookings"),
			chromedp.WaitVisible(chromedp.ID("email")))
		wantText("sign-in", check("sign-in"), "Logga in", "driver Bokat", "Skicka kod")
		webtest.SignIn(t, ctx, e.sender, operatorEmail, chromedp.WaitVisible(chromedp.ID("q-email")))
		wantText("search", check("bookings"), "Hitta bokningar", "Kundens e-post")
		wantText("search's header", webtest.Get(t, ctx, "read the header", chromedp.Text(chromedp.CSS("header.site"))),
			"Bokningar", "Logg", "Inloggad som "+operatorEmail, "Logga ut")

		webtest.Do(t, ctx, "search by e-mail", webtest.Type(chromedp.ID("q-email"), customerEmail),
			chromedp.Click(chromedp.ID("search-submit")), chromedp.WaitVisible(chromedp.CSS("table.stack")))
		wantText("search results", check("bookings-found"), id, "Bekräftad", "Rör")

		webtest.Do(t, ctx, "open the booking", chromedp.Click(chromedp.CSS("table.stack a")),
			chromedp.WaitVisible(chromedp.ID("cancel-submit")))
		wantText("booking", check("booking"), "Bokning "+id, "Händelser", "booking.confirmed", "Meddelanden",
			"Till kunden", "Webhook-leveranser", "Inte kvitterad", "Avboka åt någon")
		if text := webtest.Text(t, ctx); strings.Contains(text, customerEmail) || strings.Contains(text, "Gåsfot") {
			t.Error("the booking's page shows the customer's contact data")
		}

		webtest.Do(t, ctx, "open the move page", chromedp.Click(chromedp.ID("move-link")),
			chromedp.WaitVisible(chromedp.ID("when")))
		webtest.Do(t, ctx, "ask for times in three days", webtest.Type(chromedp.ID("when"), "om tre dagar"),
			chromedp.Click(chromedp.ID("find-times")),
			// The first move page may list times already: wait for the answer
			// to the search (its value attribute), not for any option.
			chromedp.WaitVisible(chromedp.CSS(`#when[value="om tre dagar"]`)), chromedp.WaitVisible(chromedp.ID("opt-0")))
		wantText("move", check("move"), "Flytta bokning "+id, "Ny tid", "Kunden har godkänt")
		webtest.Do(t, ctx, "move for the customer", chromedp.Click(chromedp.ID("opt-0")), chromedp.Click(chromedp.ID("for-customer")),
			webtest.Type(chromedp.ID("move-note"), "Kunden ringde supporten."), chromedp.Click(chromedp.ID("agreed")),
			chromedp.Click(chromedp.ID("move-submit")),
			chromedp.WaitVisible(chromedp.Search(`//p[@class="notice"][contains(., "flyttad")]`)))
		wantText("moved booking", check("booking-moved"), "Bokningen är flyttad.", "booking.rescheduled", "booking.moved")
		if types, _ := e.events(t, id); len(types) != 2 || types[1] != "booking.rescheduled" {
			t.Errorf("store: events after the move: %v", types)
		}

		webtest.Do(t, ctx, "cancel for the customer", chromedp.Click(chromedp.ID("for-customer")),
			chromedp.SetValue(chromedp.ID("reason"), "booked_elsewhere"),
			webtest.Type(chromedp.ID("cancel-note"), "Kunden mejlade."), chromedp.Click(chromedp.ID("cancel-confirm")),
			chromedp.Click(chromedp.ID("cancel-submit")),
			chromedp.WaitVisible(chromedp.Search(`//p[@class="notice"][contains(., "avbokad")]`)))
		wantText("cancelled booking", check("booking-cancelled"), "Bokningen är avbokad.", "Avbokad", "booked_elsewhere",
			"booking.cancelled")
		if text := webtest.Text(t, ctx); strings.Contains(text, "Avboka åt någon") || strings.Contains(text, "Välj en ny tid") {
			t.Error("a cancelled booking offers a cancel or a move")
		}
		if a := e.audit(t, "booking", id); len(a) != 2 || a[0].Action != operator.ActionBookingCancelled ||
			a[1].Action != operator.ActionBookingMoved || a[0].Actor != op.ID {
			t.Errorf("store: audit of the booking: %+v", a)
		}

		webtest.Do(t, ctx, "switch to English", chromedp.Click(chromedp.CSS("p.lang a")),
			chromedp.WaitVisible(chromedp.CSS(`html[lang=en]`)))
		webtest.Do(t, ctx, "the providers, in English", chromedp.Click(chromedp.CSS(`nav.main a[href^="/operator/providers"]`)),
			chromedp.WaitVisible(chromedp.ID("attention")))
		wantText("providers", check("providers-en"), "Providers", "Failed messages (30 days)", name, "1 of 1 stale")
		webtest.Do(t, ctx, "find the booked provider", webtest.Type(chromedp.ID("q"), strings.ToLower(name)),
			chromedp.Click(chromedp.ID("search-submit")), chromedp.WaitVisible(chromedp.CSS(`input#q[value="`+strings.ToLower(name)+`"]`)))
		if n := webtest.Get(t, ctx, "the providers found", chromedp.Evaluate[int](`document.querySelectorAll("tbody tr").length`)); n != 1 {
			t.Errorf("the search for %q lists %d providers, want 1", strings.ToLower(name), n)
		}
		wantText("providers found", check("providers-found-en"), name, "1 of 1 stale")
		webtest.Do(t, ctx, "the booked provider", chromedp.Click(chromedp.CSS(`a[href^="/operator/providers/`+prv+`"]`)),
			chromedp.WaitVisible(chromedp.ID("pause-submit")))
		wantText("provider", check("provider-en"), name, "Calendar sync", "calendar.example.se", "stale", "550 mailbox unavailable",
			"Invite a person")
		webtest.Do(t, ctx, "pause the provider", chromedp.SetValue(chromedp.ID("until"), "2026-03-16"),
			webtest.Type(chromedp.ID("pause-note"), "Holiday, by e-mail."), chromedp.Click(chromedp.ID("pause-submit")),
			chromedp.WaitVisible(chromedp.Search(`//p[@class="notice"][contains(., "pause is saved")]`)))
		wantText("paused provider", check("provider-paused-en"), "Paused until 2026-03-1")
		if n := webtest.Get(t, ctx, "the resume button", chromedp.Evaluate[int](`document.querySelectorAll("#resume-submit").length`)); n != 1 {
			t.Errorf("the paused provider's page has %d resume buttons", n)
		}
		webtest.Do(t, ctx, "invite a person", webtest.Type(chromedp.ID("invite-email"), "ny@hantverkare.example"),
			chromedp.SetValue(chromedp.ID("role"), "staff"), chromedp.Click(chromedp.ID("invite-submit")),
			chromedp.WaitVisible(chromedp.Search(`//p[@class="notice"][contains(., "invitation is made")]`)))
		if ok, err := provider.NewService(sqlstore.Bind[provider.Tx](db), e.clock.Now, nil).Admits(context.Background(), "ny@hantverkare.example"); err != nil || !ok {
			t.Errorf("store: the invited person may not sign in: %v %v", ok, err)
		}

		webtest.Do(t, ctx, "the requests no provider covers", chromedp.Click(chromedp.CSS(`nav.main a[href^="/operator/follow-ups"]`)),
			chromedp.Click(chromedp.ID("uncovered")), chromedp.WaitVisible(chromedp.ID("note-"+request)))
		wantText("follow-ups", check("follow-ups-en"), "Follow-up requests to providers", request, "No provider covers the job here")
		webtest.Do(t, ctx, "note what was done", webtest.Type(chromedp.ID("note-"+request), "Called a plumber in Kiruna."),
			chromedp.Click(chromedp.CSS(`form[action*="`+request+`"] button`)),
			chromedp.WaitVisible(chromedp.Search(`//p[@class="notice"][contains(., "note is saved")]`)))
		wantText("follow-ups after the note", check("follow-ups-noted-en"), "What was done", "Called a plumber in Kiruna.")

		now := e.clock.Now().UnixMilli()
		if err := e.exec(`INSERT INTO webhook_endpoints (id, owner_client_id, url, event_types, signing_key_id, secret_key_id,
			secret_ciphertext, disabled_at, disabled_reason, created_at, updated_at)
			VALUES ('whe_down', 'pc_console', 'https://hooks.partner.example/in', 'booking.confirmed', 'whk_1', 'sk_1', 'sealed', $1,
			'too_many_failures', $1, $1)`, now); err != nil {
			t.Fatal(err)
		}
		if err := e.exec(`INSERT INTO partner_clients (id, name, token_hash, scopes, created_at) VALUES ('pc_console', 'Assistenten AB',
			'hash', 'bookings:read bookings:write', $1)`, now); err != nil {
			t.Fatal(err)
		}
		webtest.Do(t, ctx, "the failing webhooks", chromedp.Click(chromedp.CSS(`nav.main a[href^="/operator/webhooks"]`)),
			chromedp.WaitVisible(chromedp.CSS("table.stack")))
		wantText("webhooks", check("webhooks-en"), "Webhook receivers that fail", "hooks.partner.example", "too_many_failures")
		webtest.Do(t, ctx, "the partners", chromedp.Click(chromedp.CSS(`nav.main a[href^="/operator/partners"]`)),
			chromedp.WaitVisible(chromedp.ID("purge-submit")))
		wantText("partners", check("partners-en"), "Partners and OAuth clients", "Assistenten AB", "Last used", "never", "Rotate")

		webtest.Do(t, ctx, "the log, in English", chromedp.Click(chromedp.CSS(`nav.main a[href^="/operator/audit"]`)),
			chromedp.WaitVisible(chromedp.CSS("table.stack")))
		wantText("audit", check("audit-en"), "Operator log", "booking.cancelled", "booking.moved", "operator.signed_in",
			"provider.paused", "provider.user_invited", "follow_up.noted",
			"operator.invited")
		wantText("audit's header", webtest.Get(t, ctx, "read the header", chromedp.Text(chromedp.CSS("header.site"))),
			"Bookings", "Log", "Signed in as "+operatorEmail, "Sign out")

		webtest.Do(t, ctx, "sign out", chromedp.Click(chromedp.CSS("header.site button")),
			chromedp.WaitVisible(chromedp.Search(`//p[@class="notice"][contains(., "signed out")]`)))
		webtest.Do(t, ctx, "the console after sign-out", chromedp.Navigate(base+"/operator/audit"),
			chromedp.WaitVisible(chromedp.ID("email")))
	})
}
