package operator_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"bokat"
	"bokat/internal/catalog"
	"bokat/internal/operator"
	"bokat/internal/provider"
	"bokat/internal/schedule"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/supply"
)

// failProviderMessage marks a booking's provider message failed, as the
// notification worker does when the mail bounces.
func (e *env) failProviderMessage(t testing.TB, bookingID, why string) {
	t.Helper()
	if err := e.exec(`UPDATE notification_jobs SET status = 'failed', last_error = $2,
		updated_at = $3 WHERE booking_id = $1 AND recipient = 'provider'`, bookingID, why, e.clock.Now().UnixMilli()); err != nil {
		t.Fatal(err)
	}
}

// addFeed stores a subscribed calendar of the provider that last synced at
// synced and has failed since failing (zero: not failing).
func (e *env) addFeed(t testing.TB, providerID, id, label string, synced, failing time.Time) {
	t.Helper()
	var failed any
	errText := ""
	if !failing.IsZero() {
		failed, errText = failing.UnixMilli(), "HTTP 404 from the calendar"
	}
	if err := e.exec(`INSERT INTO calendar_feeds (id, provider_id, url_key_id, url_sealed,
		url_index, label, source, created_at, next_poll_at, last_synced_at, last_error, failing_since)
		VALUES ($1, $2, 'k', 'sealed', $1, $3, 'operator', $4, $4, $5, $6, $7)`, id, providerID, label, e.clock.Now().UnixMilli(),
		synced.UnixMilli(), errText, failed); err != nil {
		t.Fatal(err)
	}
}

// importNational imports a generated national supply of n providers from
// the seed.
func (e *env) importNational(tb testing.TB, n int, seed uint64) {
	tb.Helper()
	cat, err := catalog.Load()
	if err != nil {
		tb.Fatal(err)
	}
	var national bytes.Buffer
	if err := supply.Generate(&national, cat, supply.GenerateOptions{Providers: n, Seed: seed, From: schedule.NewDate(2026, 3, 2),
		National: true}); err != nil {
		tb.Fatal(err)
	}
	if _, err := supply.Import(context.Background(), sqlstore.Bind[supply.Tx](e.db), cat, "national.yaml", national.Bytes(),
		e.clock.Now()); err != nil {
		tb.Fatal(err)
	}
}

// exec runs a statement in a write transaction.
func (e *env) exec(q string, args ...any) error {
	return e.db.InTx(context.Background(), func(tx *sqlstore.Tx) error {
		_, err := tx.Q().ExecContext(context.Background(), q, args...)
		return err
	})
}

// bookedProvider is the provider of a booking.
func (e *env) bookedProvider(t testing.TB, bookingID string) (id, name string) {
	t.Helper()
	if err := e.db.R().QueryRowContext(context.Background(), `SELECT provider_id, provider_name FROM bookings WHERE id = $1`,
		bookingID).Scan(&id, &name); err != nil {
		t.Fatal(err)
	}
	return id, name
}

// TestConsoleProviderPageReadsOneProviderAtTheConfiguredStaleBound: one
// provider's health holds that provider's calendars only, an unknown one is
// not found, and a calendar is stale after the console's configured bound
// (serve's --calendar-stale-after), not the default, on each engine.
func TestConsoleProviderPageReadsOneProviderAtTheConfiguredStaleBound(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		e := newEnv(t, db, func(c *operator.PagesConfig) { c.CalendarStaleAfter = 12 * time.Hour })
		all, _, err := e.svc.FindProviders(ctx, operator.ProviderFilter{}, operator.ProvidersShown)
		if err != nil || len(all) < 2 {
			t.Fatalf("providers: %d, %v", len(all), err)
		}
		a, b := all[0].ID, all[1].ID
		now := e.clock.Now()
		e.addFeed(t, a, "cfd_a", "a.example.se", now.Add(-8*time.Hour), now.Add(-7*time.Hour))
		e.addFeed(t, b, "cfd_b", "b.example.se", now.Add(-time.Hour), time.Time{})
		feeds := func(h operator.ProviderHealth) string {
			var out []string
			for _, f := range h.Feeds {
				out = append(out, fmt.Sprintf("%s stale=%v", f.ID, f.Stale))
			}
			return strings.Join(out, ", ")
		}
		h, err := e.svc.Provider(ctx, a)
		if err != nil || h.ID != a || feeds(h) != "cfd_a stale=false" {
			t.Fatalf("provider %s: %+v, %v; want its own calendar, failing 7 h and not stale under a 12 h bound", a, h, err)
		}
		if h, err := e.svc.Provider(ctx, b); err != nil || feeds(h) != "cfd_b stale=false" {
			t.Fatalf("provider %s: %+v, %v; want its own calendar only", b, h, err)
		}
		if _, err := e.svc.Provider(ctx, "prv_nobody"); !errors.Is(err, bokat.ErrNotFound) {
			t.Errorf("an unknown provider: %v, want not found", err)
		}
		e.clock.Advance(5 * time.Hour)
		if h, err := e.svc.Provider(ctx, a); err != nil || feeds(h) != "cfd_a stale=true" {
			t.Errorf("provider %s failing 12 h: %+v, %v; want stale", a, h, err)
		}
		all, _, err = e.svc.FindProviders(ctx, operator.ProviderFilter{}, operator.ProvidersShown)
		if err != nil || len(all) < 2 || all[0].ID != a || feeds(all[0]) != "cfd_a stale=true" || feeds(all[1]) != "cfd_b stale=false" {
			t.Errorf("every provider: %v; want each with its own calendar", err)
		}
		// Only a's calendar is failing: of the two, only a needs attention.
		attention, n, err := e.svc.FindProviders(ctx, operator.ProviderFilter{Attention: true}, operator.ProvidersShown)
		if err != nil || n != len(attention) || !slices.ContainsFunc(attention, func(h operator.ProviderHealth) bool { return h.ID == a }) ||
			slices.ContainsFunc(attention, func(h operator.ProviderHealth) bool { return h.ID == b }) {
			t.Errorf("providers that need attention: %d of %d (%v); want a and not b", len(attention), n, err)
		}
	})
}

// TestConsoleFindsProvidersAmongMany: the providers page lists at most
// ProvidersShown providers and says how many matched; its search narrows the
// list by a part of a name or id (any case), with the attention filter too.
func TestConsoleFindsProvidersAmongMany(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newEnv(t, db)
		e.invite(t, operatorEmail)
		e.importNational(t, 120, 3)
		all, matched, err := e.svc.FindProviders(context.Background(), operator.ProviderFilter{}, 1000)
		if err != nil || len(all) <= operator.ProvidersShown || matched != len(all) {
			t.Fatalf("%d providers (%v), want more than a page", len(all), err)
		}
		c := newClient(t, e.srv.URL)
		c.SignIn(e.sender, operatorEmail)
		rows := func(body string) int { return strings.Count(body, `href="/operator/providers/prv_`) }

		page := c.Do("GET", "/operator/providers", nil)
		if n := rows(page.Body); page.Status != http.StatusOK || n != operator.ProvidersShown ||
			!strings.Contains(page.Body, fmt.Sprintf("Visar de %d första av %d.", operator.ProvidersShown, len(all))) {
			t.Fatalf("the whole list: %d, %d rows, want %d and the count of all %d", page.Status, n, operator.ProvidersShown, len(all))
		}
		one := all[len(all)-1] // past the first page
		for _, q := range []string{one.ID, strings.ToUpper(one.Name), strings.ToLower(one.Name)} {
			found := c.Do("GET", "/operator/providers?q="+url.QueryEscape(q), nil)
			if rows(found.Body) < 1 || !strings.Contains(found.Body, `href="/operator/providers/`+one.ID+`"`) ||
				strings.Contains(found.Body, `id="capped"`) {
				t.Errorf("search %q: %d rows, want %s among them and no cap", q, rows(found.Body), one.ID)
			}
		}
		// A search over 100 bytes is cut there, never inside a letter.
		long := c.Do("GET", "/operator/providers?q="+url.QueryEscape("a"+strings.Repeat("ö", 60)), nil)
		if !utf8.ValidString(long.Body) || !strings.Contains(long.Body, `value="a`+strings.Repeat("ö", 49)+`"`) {
			t.Errorf("a long search: the page is not valid UTF-8 or lacks the search cut at 99 bytes")
		}
		if none := c.Do("GET", "/operator/providers?q=finns-inte", nil); rows(none.Body) != 0 || !strings.Contains(none.Body, "Inga hantverkare här.") {
			t.Errorf("a search finding nothing: %d rows", rows(none.Body))
		}
		if attention := c.Do("GET", "/operator/providers?attention=1&q="+url.QueryEscape(one.ID), nil); rows(attention.Body) != 0 ||
			!strings.Contains(attention.Body, `name="attention" value="1"`) {
			t.Errorf("search among those that need attention (none): %d rows", rows(attention.Body))
		}
	})
}

// TestConsoleShowsProvidersHealthAndActsOnThem reads the providers' health
// (people, message failures, calendar sync) and pauses, resumes and
// invites through the console, on each engine, with the audit rows of
// both sides.
func TestConsoleShowsProvidersHealthAndActsOnThem(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newEnv(t, db)
		op := e.invite(t, operatorEmail)
		id := e.book(t, "health")
		prv, name := e.bookedProvider(t, id)
		e.failProviderMessage(t, id, "550 mailbox unavailable")
		now := e.clock.Now()
		e.addFeed(t, prv, "cfd_stale", "calendar.example.se", now.Add(-10*time.Hour), now.Add(-7*time.Hour))
		e.addFeed(t, prv, "cfd_fine", "ok.example.se", now.Add(-time.Hour), time.Time{})
		c := newClient(t, e.srv.URL)
		c.SignIn(e.sender, operatorEmail)

		all := c.Do("GET", "/operator/providers", nil)
		attention := c.Do("GET", "/operator/providers?attention=1", nil)
		if all.Status != http.StatusOK || attention.Status != http.StatusOK {
			t.Fatalf("providers: %d %d", all.Status, attention.Status)
		}
		if strings.Count(all.Body, `href="/operator/providers/prv_`) < 5 {
			t.Errorf("the list shows fewer than the demo's providers:\n%s", all.Body)
		}
		if n := strings.Count(attention.Body, `href="/operator/providers/prv_`); n != 1 || !strings.Contains(attention.Body, name) ||
			!strings.Contains(attention.Body, "1 av 2 inaktuella") {
			t.Errorf("providers that need attention (%d):\n%s", n, attention.Body)
		}
		page := c.Do("GET", "/operator/providers/"+prv, nil)
		for _, w := range []string{name, "550 mailbox unavailable", "calendar.example.se", "inaktuell", "HTTP 404 from the calendar",
			"ok.example.se", "aldrig", "Aktiv"} {
			if !strings.Contains(page.Body, w) {
				t.Errorf("the provider's page lacks %q", w)
			}
		}
		if p := c.Do("GET", "/operator/providers/prv_nobody", nil); p.Status != http.StatusNotFound {
			t.Errorf("an unknown provider: %d", p.Status)
		}

		for _, until := range []string{"2026-03-02", "2020-01-01", "soon"} {
			if p := c.Post("/operator/providers/"+prv+"/pause", url.Values{"until": {until}, "note": {"Semester."}}); p.Status != http.StatusBadRequest {
				t.Errorf("pause until %s: %d", until, p.Status)
			}
		}
		p := c.Post("/operator/providers/"+prv+"/pause", url.Values{"until": {"2026-03-16"}, "note": {"Semester enligt mejl."}})
		if p.Status != http.StatusSeeOther {
			t.Fatalf("pause: %d\n%s", p.Status, p.Body)
		}
		var paused int64
		if err := db.R().QueryRowContext(context.Background(), `SELECT paused_until FROM providers WHERE id = $1`, prv).Scan(&paused); err != nil ||
			paused == 0 {
			t.Errorf("paused until %d (%v)", paused, err)
		}
		if page := c.Do("GET", "/operator/providers/"+prv, nil); !strings.Contains(page.Body, "Pausad till 2026-03-1") {
			t.Errorf("the paused provider's page:\n%s", page.Body)
		}
		if p := c.Post("/operator/providers/"+prv+"/pause", url.Values{"resume": {"yes"}, "note": {"Tillbaka."}}); p.Status != http.StatusSeeOther {
			t.Fatalf("resume: %d", p.Status)
		}
		if err := db.R().QueryRowContext(context.Background(), `SELECT paused_until FROM providers WHERE id = $1`, prv).Scan(&paused); err != nil ||
			paused != 0 {
			t.Errorf("after the resume: paused until %d (%v)", paused, err)
		}

		p = c.Post("/operator/providers/"+prv+"/invite", url.Values{"email": {"ny@hantverkare.example"}, "role": {"owner"}})
		if p.Status != http.StatusSeeOther {
			t.Fatalf("invite: %d\n%s", p.Status, p.Body)
		}
		ctx := context.Background()
		invs, err := sqlstore.Bind[provider.Tx](db).OpenInvitations(ctx, prv, e.clock.Now())
		if err != nil || len(invs) != 1 || invs[0].Email != "ny@hantverkare.example" || invs[0].Role != provider.Owner ||
			invs[0].InvitedBy != provider.OperatorActor {
			t.Errorf("invitations: %+v %v", invs, err)
		}
		for _, form := range []url.Values{{"email": {"x@"}, "role": {"owner"}},
			{"email": {"y@hantverkare.example"}, "role": {"admin"}}} {
			if p := c.Post("/operator/providers/"+prv+"/invite", form); p.Status != http.StatusBadRequest && p.Status != http.StatusConflict {
				t.Errorf("invite %v: %d", form, p.Status)
			}
		}

		a := e.audit(t, "provider", prv)
		if len(a) != 3 || a[0].Action != operator.ActionProviderInvited || a[1].Action != operator.ActionProviderUnpaused ||
			a[2].Action != operator.ActionProviderPaused || a[2].Actor != op.ID || a[2].Details["change"] != "until=2026-03-16" {
			t.Errorf("operator audit of the provider: %+v", a)
		}
		pa, err := sqlstore.Bind[provider.Tx](db).ProviderAudit(ctx, prv, 10)
		if err != nil || len(pa) != 3 || pa[0].Action != provider.ActionInvited || pa[1].Action != provider.ActionPauseSet ||
			pa[1].Actor != provider.OperatorActor || pa[1].Note != "resumed" {
			t.Errorf("the provider's audit: %+v %v", pa, err)
		}
	})
}

// TestProvidersThatNeedAttention: each reason a provider needs attention
// is read for the providers list on its own (inactive, paused, a message
// failed within the window, a calendar failing though not yet stale), a
// message that failed before the window is not one, and the list's count
// and rows follow, on each engine.
func TestProvidersThatNeedAttention(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		e := newEnv(t, db)
		old := e.book(t, "old")
		oldPrv, _ := e.bookedProvider(t, old)
		e.failProviderMessage(t, old, "550 long ago")
		e.clock.Advance(operator.FailureWindow + time.Hour)
		all, n, err := e.svc.FindProviders(ctx, operator.ProviderFilter{}, operator.ProvidersShown)
		if err != nil || n != len(all) || len(all) < 5 {
			t.Fatalf("providers: %d of %d, %v", len(all), n, err)
		}
		// A message that failed before the window is not a reason.
		if got, n, err := e.svc.FindProviders(ctx, operator.ProviderFilter{Attention: true}, operator.ProvidersShown); err != nil ||
			n != 0 || len(got) != 0 {
			t.Fatalf("providers that need attention after the window: %d (%v); want none", n, err)
		}
		// The demo's providers, other than the one with the old failure.
		var others []string
		for _, h := range all {
			if h.ID != oldPrv {
				others = append(others, h.ID)
			}
		}
		inactive, paused, failing, healthy := others[0], others[1], others[2], others[3]
		if err := e.exec(`UPDATE providers SET active = $2 WHERE id = $1`, inactive, false); err != nil {
			t.Fatal(err)
		}
		if err := e.exec(`UPDATE providers SET paused_until = $2 WHERE id = $1`, paused, e.clock.Now().Add(72*time.Hour).UnixMilli()); err != nil {
			t.Fatal(err)
		}
		now := e.clock.Now()
		e.addFeed(t, failing, "cfd_failing", "failing.example.se", now.Add(-2*time.Hour), now.Add(-time.Hour))
		e.addFeed(t, healthy, "cfd_healthy", "healthy.example.se", now.Add(-time.Hour), time.Time{})
		recent := e.book(t, "recent")
		recentPrv, _ := e.bookedProvider(t, recent)
		e.failProviderMessage(t, recent, "550 today")

		want := []string{inactive, paused, failing}
		if !slices.Contains(want, recentPrv) {
			want = append(want, recentPrv)
		}
		got, n, err := e.svc.FindProviders(ctx, operator.ProviderFilter{Attention: true}, operator.ProvidersShown)
		ids := make([]string, 0, len(got))
		for _, h := range got {
			ids = append(ids, h.ID)
		}
		slices.Sort(ids)
		slices.Sort(want)
		if err != nil || n != len(want) || !slices.Equal(ids, want) {
			t.Fatalf("providers that need attention: %v (%d matched, %v); want %v", ids, n, err, want)
		}
		// The limit cuts the rows, not the count.
		if got, n, err := e.svc.FindProviders(ctx, operator.ProviderFilter{Attention: true}, 2); err != nil || len(got) != 2 || n != len(want) {
			t.Errorf("limited to 2: %d rows of %d, %v", len(got), n, err)
		}
	})
}
