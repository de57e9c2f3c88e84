package provider_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"

	"bokat"
	"bokat/internal/provider"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/supply"
	"bokat/internal/web/webtest"
)

// TestSupplyPagesInABrowser drives the supply pages in headless Chromium
// with scripts disabled, on each engine: a block refused over a booking, one
// accepted and removed, weekly hours, a closed date, a pause and its end, a
// price and the postcodes. Each write is
// checked in the store and in the next search; each page with axe-core,
// and photographed at phone and desktop width.
func TestSupplyPagesInABrowser(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := webtest.Chromium(t)
		e := newPagesEnv(t, db)
		e.seed(t)
		s := wireSupply(t, e.env, db)
		base := e.srv.URL
		check := webtest.Checker{TB: t, Ctx: ctx, Prefix: "provider-", Photograph: db.Engine() == sqlstore.SQLite}.Check
		owner := provider.User{ProviderID: providerA}

		webtest.Do(t, ctx, "open the sign-in page", chromedp.Navigate(base+"/provider/blocks"), chromedp.WaitVisible(chromedp.ID("email")))
		webtest.SignIn(t, ctx, e.sender, ownerA, chromedp.WaitVisible(chromedp.CSS("table.bookings")))

		webtest.Do(t, ctx, "open the blocks", chromedp.Navigate(base+"/provider/blocks"), chromedp.WaitVisible(chromedp.ID("block-submit")))
		check("blocks", "Blockerad tid", "Ingen tid är blockerad.", "Timmar en dag", "Hela dagar")
		webtest.Do(t, ctx, "block over a booking", chromedp.SetValue(chromedp.ID("from"), "2026-03-04"),
			chromedp.SetValue(chromedp.ID("start"), "10:00"), chromedp.SetValue(chromedp.ID("end"), "12:00"),
			chromedp.Click(chromedp.ID("block-submit")), chromedp.WaitVisible(chromedp.CSS("p.error")))
		check("blocks-refused", "Tiden kan inte blockeras: bokningen bk_a_next", "Visa bokning bk_a_next")
		if list, err := s.sup.Blocks(context.Background(), owner); err != nil || len(list) != 0 {
			t.Errorf("store: a refused block was stored: %+v %v", list, err)
		}
		if !s.offered(t, providerA, "113 45", "2026-03-05") {
			t.Fatal("search: no slot of A on Thursday before the block")
		}
		webtest.Do(t, ctx, "block a weekly day", chromedp.Click(chromedp.ID("kind-days")),
			chromedp.SetValue(chromedp.ID("from"), "2026-03-05"), chromedp.SetValue(chromedp.ID("start"), ""),
			chromedp.SetValue(chromedp.ID("end"), ""), chromedp.SetValue(chromedp.ID("weeks"), "2"),
			webtest.Type(chromedp.ID("block-note"), "Kurs"),
			chromedp.Click(chromedp.ID("block-submit")), chromedp.WaitVisible(chromedp.CSS("p.notice")))
		check("blocks-added", "Tiden är blockerad.", "Varje vecka, 2 veckor", "Kurs")
		if list, err := s.sup.Blocks(context.Background(), owner); err != nil || len(list) != 1 || list[0].Weeks != 2 || !list[0].WholeDays {
			t.Errorf("store: blocks %+v %v", list, err)
		}
		if s.offered(t, providerA, "113 45", "2026-03-05") || s.offered(t, providerA, "113 45", "2026-03-12") {
			t.Error("search: A is offered on a blocked day")
		}
		webtest.Do(t, ctx, "remove the block", chromedp.Click(chromedp.CSS(`form[action$="/remove"] button`)),
			chromedp.WaitVisible(chromedp.Search(`//p[@class="notice"][contains(., "borttagen")]`)))
		check("blocks-removed", "Blockeringen är borttagen.", "Ingen tid är blockerad.")
		if list, err := s.sup.Blocks(context.Background(), owner); err != nil || len(list) != 0 {
			t.Errorf("store: blocks after the removal: %+v %v", list, err)
		}
		if !s.offered(t, providerA, "113 45", "2026-03-05") || !s.offered(t, providerA, "113 45", "2026-03-12") {
			t.Error("search: A is not offered on the days a removed block held")
		}

		webtest.Do(t, ctx, "open the hours", chromedp.Navigate(base+"/provider/hours"), chromedp.WaitVisible(chromedp.ID("hours-submit")))
		check("hours", "Veckans arbetstider", "Måndag", "08:00-17:00", "Enskilda dagar", "Paus")
		webtest.Do(t, ctx, "set Wednesday's hours", chromedp.SetValue(chromedp.ID("hours_wednesday"), "10:00-12:00, 13:00-15:00"),
			chromedp.Click(chromedp.ID("hours-submit")), chromedp.WaitVisible(chromedp.CSS("p.notice")))
		check("hours-saved", "Arbetstiderna är sparade.")
		if v := webtest.Get(t, ctx, "Wednesday's field", chromedp.Value(chromedp.ID("hours_wednesday"))); v != "10:00-12:00, 13:00-15:00" {
			t.Errorf("Wednesday's field reads %q after saving", v)
		}
		stored := func() bokat.ProviderSupply {
			t.Helper()
			p, err := db.ReadProviderSupply(context.Background(), providerA)
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		if got := fmt.Sprint(supply.HoursEntries(stored().Hours)["wednesday"]); got != "[10:00-12:00 13:00-15:00]" {
			t.Errorf("store: Wednesday's hours %s", got)
		}
		if starts, _ := s.slots(t, providerA, "113 45", "2026-03-11"); len(starts) == 0 || starts[0] != "2026-03-11 10:00" {
			t.Errorf("search: A's slots on a Wednesday after the change: %v", starts)
		}
		webtest.Do(t, ctx, "refused hours", chromedp.SetValue(chromedp.ID("hours_friday"), "17:00-08:00"),
			chromedp.Click(chromedp.ID("hours-submit")), chromedp.WaitVisible(chromedp.CSS("p.error")))
		check("hours-refused", "Ändringen sparades inte.", "17:00-08:00")

		webtest.Do(t, ctx, "close a single date", chromedp.Navigate(base+"/provider/hours"), chromedp.WaitVisible(chromedp.ID("day-submit")),
			chromedp.SetValue(chromedp.ID("day-date"), "2026-03-09"), chromedp.Click(chromedp.ID("day-closed")),
			chromedp.Click(chromedp.ID("day-submit")), chromedp.WaitVisible(chromedp.CSS("p.notice")))
		check("hours-day-closed", "Dagen är sparad.")
		if days := stored().DayHours; len(days) != 1 || days[0].Day != "2026-03-09" || !days[0].Closed() {
			t.Errorf("store: single dates %+v, want 2026-03-09 closed", days)
		}
		if s.offered(t, providerA, "113 45", "2026-03-09") {
			t.Error("search: A is offered on the date it closed")
		}
		webtest.Do(t, ctx, "pause", chromedp.SetValue(chromedp.ID("until"), "2026-03-07"),
			chromedp.Click(chromedp.ID("pause-submit")), chromedp.WaitVisible(chromedp.ID("resume-submit")))
		check("hours-paused", "Pausen är sparad.")
		if until := stored().PausedUntil; until.IsZero() || s.offered(t, providerA, "113 45", "2026-03-05") {
			t.Errorf("store: paused until %v; search offers A during the pause: %v", until, s.offered(t, providerA, "113 45", "2026-03-05"))
		}
		// The pause's notice is on the page already: wait for the resume
		// button to go, as it does once no pause is stored.
		webtest.Do(t, ctx, "resume", chromedp.Click(chromedp.ID("resume-submit")),
			chromedp.WaitNotPresent(chromedp.ID("resume-submit")))
		if until := stored().PausedUntil; !until.IsZero() || !s.offered(t, providerA, "113 45", "2026-03-05") {
			t.Errorf("store: paused until %v after resuming; search offers A: %v", until, s.offered(t, providerA, "113 45", "2026-03-05"))
		}

		webtest.Do(t, ctx, "open the prices", chromedp.Navigate(base+"/provider/prices?lang=en"), chromedp.WaitVisible(chromedp.ID("prices-submit")))
		check("prices-en", "Prices", "Price (SEK)", "Faucet installation, standard", "Labour share (%)",
			"for the preliminary ROT/RUT estimate")
		if v := webtest.Get(t, ctx, "the faucet's price", chromedp.Value(chromedp.ID("price_vvs_install_faucet_standard"))); v != "1890" {
			t.Errorf("the faucet's price field reads %q, want 1890", v)
		}
		if v := webtest.Get(t, ctx, "the faucet's labour share", chromedp.Value(chromedp.ID("labour_vvs_install_faucet_standard"))); v != "80" {
			t.Errorf("the faucet's labour field reads %q, want 80 (the supply file's)", v)
		}
		webtest.Do(t, ctx, "change a price", chromedp.SetValue(chromedp.ID("price_vvs_install_faucet_standard"), "2190"),
			chromedp.SetValue(chromedp.ID("labour_vvs_install_faucet_standard"), "70"),
			chromedp.Click(chromedp.ID("prices-submit")), chromedp.WaitVisible(chromedp.CSS("p.notice")))
		check("prices-saved-en", "The prices are saved.")
		if offer, _ := stored().Service("vvs_install_faucet_standard"); offer.PriceSEK != 2190 || offer.Labour != bokat.StatedLabour(70) {
			t.Errorf("store: the faucet's price %d, labour %+v", offer.PriceSEK, offer.Labour)
		}
		if _, prices := s.slots(t, providerA, "113 45", "2026-03-06"); len(prices) == 0 || prices[0] != 2190 {
			t.Errorf("search: A's price after the change: %v", prices)
		}

		webtest.Do(t, ctx, "open the postcodes", chromedp.Navigate(base+"/provider/postcodes"), chromedp.WaitVisible(chromedp.ID("postcodes-submit")))
		check("postcodes", "Postnummer", "111\u00a000–118\u00a099")
		webtest.Do(t, ctx, "change the postcodes", chromedp.SetValue(chromedp.ID("postcodes"), "113\n116 45"),
			chromedp.Click(chromedp.ID("postcodes-submit")), chromedp.WaitVisible(chromedp.CSS("p.notice")))
		check("postcodes-saved", "Postnumren är sparade.", "113\u00a000–113\u00a099, 116\u00a045")
		if got := fmt.Sprint(supply.PostcodeEntries(stored().Postcodes)); got != "[113 11645]" {
			t.Errorf("store: postcodes %s", got)
		}
		if s.offered(t, providerA, "114 45", "2026-03-06") || !s.offered(t, providerA, "116 45", "2026-03-06") {
			t.Error("search: A's postcodes after the change")
		}
		got := e.audit(t, providerA)
		for _, want := range []string{"block.added block", "block.removed block", "supply.hours provider", "supply.day_hours provider",
			"supply.pause provider", "supply.prices provider", "supply.postcodes provider"} {
			if !contains(got, want) {
				t.Errorf("store: no audit %q in %v", want, got)
			}
		}
	})
}
