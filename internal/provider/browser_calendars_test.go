package provider_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"bokat/internal/calfeed"
	"bokat/internal/calsync"
	"bokat/internal/provider"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/web/webtest"
	"bokat/internal/webhook"
	"bokat/internal/webhook/webhooktest"
)

// calendarHost serves one provider's calendar as a real HTTP server on a
// loopback address (development's --webhook-allow-private lets a feed live
// there); fail makes it answer 500.
type calendarHost struct {
	srv  *httptest.Server
	mu   sync.Mutex
	body []byte
	fail bool
}

func newCalendarHost(t testing.TB) *calendarHost {
	h := &calendarHost{}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.fail || r.URL.Path != "/hemlig/7f3a9c/basic.ics" {
			http.Error(w, "no", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/calendar")
		w.Write(h.body)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *calendarHost) failing(on bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.fail = on
}

// icsEvents is a calendar of a busy event over [busyStart, busyStart+2h)
// and an event marked free a day later.
func icsEvents(busyStart time.Time) []byte {
	f := func(t time.Time) string { return t.UTC().Format("20060102T150405Z") }
	var b bytes.Buffer
	b.WriteString("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Google Inc//Google Calendar 70.9054//EN\r\n")
	fmt.Fprintf(&b, "BEGIN:VEVENT\r\nUID:tandlakare@google.com\r\nDTSTAMP:%s\r\nDTSTART:%s\r\nDTEND:%s\r\nSUMMARY:Tandläkare\r\nEND:VEVENT\r\n",
		f(busyStart), f(busyStart), f(busyStart.Add(2*time.Hour)))
	free := busyStart.Add(24 * time.Hour)
	fmt.Fprintf(&b, "BEGIN:VEVENT\r\nUID:fritt@google.com\r\nDTSTAMP:%s\r\nDTSTART:%s\r\nDTEND:%s\r\nSUMMARY:Kanske\r\nTRANSP:TRANSPARENT\r\nEND:VEVENT\r\n",
		f(busyStart), f(free), f(free.Add(time.Hour)))
	b.WriteString("END:VCALENDAR\r\n")
	return b.Bytes()
}

// withCalendars serves the calendars page in development mode (feeds on
// loopback allowed), with the provider's own Bokat feed for export.
func withCalendars(t testing.TB, db *sqlstore.DB) func(*provider.PagesConfig) {
	return func(c *provider.PagesConfig) {
		feed, err := calfeed.New(calfeed.Config{Key: bytes.Repeat([]byte{9}, calfeed.MinKeyBytes), Store: db,
			BaseURL: "http://127.0.0.1:8080", Now: c.Now})
		if err != nil {
			t.Fatal(err)
		}
		c.Calendars = provider.NewCalendars(provider.CalendarsConfig{Store: sqlstore.Bind[calsync.Tx](db),
			InTx: sqlstore.Bind[provider.CalendarTx](db).InTx, Guard: webhook.NewGuard(webhooktest.NewResolver(), true),
			ExportURL: feed.URL, Now: c.Now})
	}
}

// TestCalendarsPageInABrowser drives the calendars page in headless
// Chromium with scripts disabled, on each engine: an address refused in
// the page's language without being echoed, a feed added and listed by
// host with its sync result after the worker's round on the injected
// clock, the conflict it found with a confirmed booking (linked), a rule
// changed and seen by the next round, a failing feed's error in plain
// words and its stale warning, the removal. Each write is checked in the
// store and the audit; each page with axe-core, photographed at phone and
// desktop width.
func TestCalendarsPageInABrowser(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := webtest.Chromium(t)
		e := newPagesEnv(t, db, withCalendars(t, db))
		e.seed(t)
		host := newCalendarHost(t)
		host.body = icsEvents(e.clock.Now().Add(48*time.Hour + time.Hour)) // over bk_a_next's second hour
		secret := host.srv.URL + "/hemlig/7f3a9c/basic.ics"
		worker, err := calsync.NewWorker(calsync.Config{Store: sqlstore.Bind[calsync.Tx](db),
			Fetch: calsync.FetchConfig{Guard: webhook.NewGuard(webhooktest.NewResolver(), true)}, Now: e.clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		round := func(want func(calsync.Round) bool) {
			t.Helper()
			e.clock.Advance(6 * time.Minute) // past the poll interval
			r, err := worker.RunOnce(context.Background())
			if err != nil || !want(r) {
				t.Fatalf("sync round %+v, %v", r, err)
			}
		}
		feeds := func() []calsync.Feed {
			t.Helper()
			list, err := db.ProviderFeeds(context.Background(), providerA)
			if err != nil {
				t.Fatal(err)
			}
			return list
		}
		base := e.srv.URL
		checker := webtest.Checker{TB: t, Ctx: ctx, Prefix: "provider-", Photograph: db.Engine() == sqlstore.SQLite}
		check := func(name string, want ...string) string {
			t.Helper()
			text := checker.Check(name, want...)
			html := webtest.Get(t, ctx, "the page's markup", chromedp.Evaluate[string](`document.documentElement.outerHTML`))
			if strings.Contains(html, "7f3a9c") {
				t.Errorf("%s page shows the secret address", name)
			}
			return text
		}

		webtest.Do(t, ctx, "open the sign-in page", chromedp.Navigate(base+"/provider/calendars"), chromedp.WaitVisible(chromedp.ID("email")))
		webtest.SignIn(t, ctx, e.sender, ownerA, chromedp.WaitVisible(chromedp.CSS("table.bookings")))
		webtest.Do(t, ctx, "open the calendars from the navigation", chromedp.Click(chromedp.CSS(`nav a[href="/provider/calendars"]`)),
			chromedp.WaitVisible(chromedp.ID("calendar-submit")))
		check("calendars", "Kalendrar", "Ingen kalender är tillagd.", "Bara upptagen tid", "Heldagar är upptagna",
			"Bokats bokningar i din kalender")
		if v := webtest.Get(t, ctx, "the export address", chromedp.Value(chromedp.ID("export-url"))); !strings.HasPrefix(v, "http://127.0.0.1:8080/calendar/"+providerA+"/") {
			t.Errorf("the export address reads %q", v)
		}

		webtest.Do(t, ctx, "a refused address", webtest.Type(chromedp.ID("url"), "ftp://127.0.0.1/hemlig/7f3a9c/basic.ics"),
			chromedp.Click(chromedp.ID("calendar-submit")), chromedp.WaitVisible(chromedp.CSS("p.error")))
		check("calendars-refused", "Kalendern lades inte till.", "börjar med https:// eller webcal://")
		if len(feeds()) != 0 {
			t.Fatal("a refused address was stored")
		}

		webtest.Do(t, ctx, "add the calendar", webtest.Type(chromedp.ID("url"), secret),
			chromedp.Click(chromedp.ID("calendar-submit")), chromedp.WaitVisible(chromedp.CSS("p.notice")))
		check("calendars-added", "Kalendern är tillagd.", "127.0.0.1", "Inte läst ännu")
		list := feeds()
		if len(list) != 1 || list[0].URL != secret || list[0].Rule != calsync.RuleBusyOnly || list[0].Source != calsync.SourceProvider {
			t.Fatalf("store: feeds %+v", list)
		}
		feedID := list[0].ID

		round(func(r calsync.Round) bool { return r.Changed == 1 })
		webtest.Do(t, ctx, "see the sync", chromedp.Navigate(base+"/provider/calendars"), chromedp.WaitVisible(chromedp.ID("calendar-submit")))
		synced := stamp(e.clock.Now())
		check("calendars-synced", synced, "Upptagna tider", "Krockar med bokningar", "Bokning bk_a_next")
		if n := webtest.Get(t, ctx, "busy count", chromedp.Text(chromedp.CSS("#feed-"+feedID+" dl dd:nth-of-type(3)"))); n != "1" {
			t.Errorf("busy times shown after the first round: %q, want 1", n)
		}
		webtest.Do(t, ctx, "follow the conflict", chromedp.Click(chromedp.CSS(`#conflicts + p + ul a`)),
			chromedp.WaitVisible(chromedp.CSS("dl.facts")))
		if text := webtest.Text(t, ctx); !strings.Contains(text, "bk_a_next") {
			t.Errorf("the conflict's link does not lead to the booking:\n%s", text)
		}

		webtest.Do(t, ctx, "change the rule", chromedp.Navigate(base+"/provider/calendars?lang=en"),
			chromedp.WaitVisible(chromedp.ID("rule-"+feedID)), chromedp.SetValue(chromedp.ID("rule-"+feedID), "everything"),
			chromedp.Click(chromedp.ID("rule-submit-"+feedID)), chromedp.WaitVisible(chromedp.CSS("p.notice")))
		check("calendars-rule-en", "The rule is saved.", "Everything", "Conflicts with bookings")
		if list := feeds(); list[0].Rule != calsync.RuleEverything {
			t.Errorf("store: rule %s after the change", list[0].Rule)
		}
		round(func(r calsync.Round) bool { return r.Changed == 1 })
		if list := feeds(); list[0].BusyCount != 2 {
			t.Errorf("store: %d busy times under everything, want 2 (the free event too)", list[0].BusyCount)
		}

		host.failing(true)
		round(func(r calsync.Round) bool { return r.Failed == 1 })
		e.clock.Advance(calsync.DefaultStaleAfter)
		round(func(r calsync.Round) bool { return r.Failed == 1 })
		webtest.Do(t, ctx, "see the failure", chromedp.Navigate(base+"/provider/calendars"), chromedp.WaitVisible(chromedp.ID("calendar-submit")))
		check("calendars-stale", "kalenderns server svarade med ett fel", "tar Bokat inte emot direktbokningar hos er")

		webtest.Do(t, ctx, "remove the calendar", chromedp.Click(chromedp.ID("remove-"+feedID)), chromedp.WaitVisible(chromedp.CSS("p.notice")))
		check("calendars-removed", "Kalendern är borttagen.", "Ingen kalender är tillagd.")
		if len(feeds()) != 0 {
			t.Error("store: the feed is still there after removal")
		}
		got := e.audit(t, providerA)
		for _, want := range []string{"calendar.added calendar_feed", "calendar.rule calendar_feed", "calendar.removed calendar_feed"} {
			if !contains(got, want) {
				t.Errorf("store: no audit %q in %v", want, got)
			}
		}
	})
}

// stamp is an instant as the Swedish pages show it.
func stamp(t time.Time) string {
	loc, _ := time.LoadLocation("Europe/Stockholm")
	return t.In(loc).Format("2006-01-02 15:04")
}

// TestCalendarsPageRoles checks, over plain HTTP, that staff keep the
// provider's calendars as they keep its blocks but are not shown the
// export address, that another provider's user cannot touch A's feed, and
// that a form without its CSRF token writes nothing.
func TestCalendarsPageRoles(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newPagesEnv(t, db, withCalendars(t, db))
		e.seed(t)
		host := newCalendarHost(t)
		secret := host.srv.URL + "/hemlig/7f3a9c/basic.ics"

		staff := e.browser(t)
		staff.SignIn(e.sender, staffA)
		pg := staff.Get("/provider/calendars")
		if pg.Status != http.StatusOK || strings.Contains(pg.Body, "export-url") {
			t.Fatalf("staff's calendars page: %d, export shown: %v", pg.Status, strings.Contains(pg.Body, "export-url"))
		}
		form := url.Values{"csrf_token": {pg.CSRF(t)}, "url": {"webcal://" + strings.TrimPrefix(secret, "http://")}, "rule": {"all_day_busy"}}
		// webcal:// is read as https://, which the loopback server does not
		// speak; the address is still accepted (the sync reports the error).
		if p := staff.Do("POST", "/provider/calendars", form); p.Status != http.StatusSeeOther {
			t.Fatalf("staff adds a calendar: %d\n%s", p.Status, p.Body)
		}
		list, err := db.ProviderFeeds(context.Background(), providerA)
		if err != nil || len(list) != 1 || !strings.HasPrefix(list[0].URL, "https://127.0.0.1:") || list[0].Rule != calsync.RuleAllDayBusy {
			t.Fatalf("store after staff's add: %+v %v", list, err)
		}
		feedID := list[0].ID

		// The same address again is refused in the page's language.
		form.Set("csrf_token", staff.Get("/provider/calendars?lang=en").CSRF(t))
		if p := staff.Do("POST", "/provider/calendars?lang=en", form); p.Status != http.StatusBadRequest ||
			!strings.Contains(p.Body, "The calendar is already one of yours.") || strings.Contains(p.Body, "7f3a9c") {
			t.Errorf("a calendar added twice: %d\n%s", p.Status, p.Body)
		}

		other := e.browser(t)
		other.SignIn(e.sender, ownerB)
		tok := other.Get("/provider/calendars").CSRF(t)
		for _, path := range []string{"/provider/calendars/" + feedID + "/remove", "/provider/calendars/" + feedID + "/rule"} {
			if p := other.Do("POST", path, url.Values{"csrf_token": {tok}, "rule": {"everything"}}); p.Status != http.StatusNotFound {
				t.Errorf("another provider posts %s: %d", path, p.Status)
			}
		}
		if p := staff.Do("POST", "/provider/calendars/"+feedID+"/remove", url.Values{"csrf_token": {"forged"}}); p.Status != http.StatusForbidden {
			t.Errorf("a removal with a forged form token: %d", p.Status)
		}
		if list, _ := db.ProviderFeeds(context.Background(), providerA); len(list) != 1 || list[0].Rule != calsync.RuleAllDayBusy {
			t.Errorf("A's feed after refused writes: %+v", list)
		}
	})
}
