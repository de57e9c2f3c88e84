package provider_test

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"bokat/internal/provider"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/web"
	"bokat/internal/web/webtest"
)

func TestSignInSignOutOverHTTP(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newPagesEnv(t, db)
		e.seed(t)
		b := e.browser(t)
		if p := b.Get("/provider/bookings"); p.Status != http.StatusSeeOther || p.Location != "/provider/sign-in" {
			t.Fatalf("signed out: %d %s", p.Status, p.Location)
		}
		p := b.Get("/provider/sign-in?lang=en")
		if p.Status != http.StatusOK || !strings.Contains(p.Body, `<html lang="en">`) ||
			!strings.Contains(p.Body, `name="lang" value="en"`) {
			t.Errorf("English sign-in page:\n%s", p.Body)
		}

		// An address without an account reads the same page, and no code
		// goes out.
		if p := b.Post("/provider/sign-in", url.Values{"email": {"okand@example.se"}}); p.Status != http.StatusSeeOther ||
			p.Location != "/provider/sign-in/code" {
			t.Errorf("unknown address: %d %s", p.Status, p.Location)
		}
		if n := e.sender.Count(); n != 0 {
			t.Errorf("%d codes were sent to an address without an account", n)
		}
		// Entering codes reads as for an account: attempts left, then a
		// dead code; none of them signs in.
		for left := 4; left >= 0; left-- {
			want := fmt.Sprintf("Du har %d försök kvar.", left)
			if left == 0 {
				want = "Koden har gått ut"
			}
			if p := b.Post("/provider/sign-in/code", url.Values{"code": {fmt.Sprintf("%08d", left)}}); p.Status != http.StatusBadRequest ||
				!strings.Contains(p.Body, want) {
				t.Errorf("code of an unknown address, %d left: %d\n%s", left, p.Status, p.Body)
			}
		}

		// A wrong code counts; the right one signs in.
		if p := b.Post("/provider/sign-in", url.Values{"email": {" Montor@VVS-ett.se "}, "lang": {"en"}}); p.Location != "/provider/sign-in/code?lang=en" {
			t.Fatalf("send code: %d %s", p.Status, p.Location)
		}
		if p := b.Post("/provider/sign-in/code", url.Values{"code": {"00000000"}}); p.Status != http.StatusBadRequest ||
			!strings.Contains(p.Body, "4 tries left") && !strings.Contains(p.Body, "4 försök kvar") {
			t.Errorf("wrong code: %d\n%s", p.Status, p.Body)
		}
		if p := b.Post("/provider/sign-in/code", url.Values{"code": {e.sender.Last(t, staffA)}, "lang": {"en"}}); p.Location != "/provider/?lang=en" {
			t.Fatalf("right code: %d %s", p.Status, p.Location)
		}
		if p := b.Get("/provider/bookings"); p.Status != http.StatusOK || !strings.Contains(p.Body, "bk_a_next") ||
			!strings.Contains(p.Body, "Inloggad som "+staffA) {
			t.Fatalf("bookings after sign-in: %d\n%s", p.Status, p.Body)
		}
		// A form without the browser's token is refused.
		if p := b.Do("POST", "/provider/sign-out", url.Values{"csrf_token": {"forged"}}); p.Status != http.StatusForbidden {
			t.Errorf("sign-out without the form token: %d", p.Status)
		}
		if p := b.Post("/provider/sign-out", nil); p.Status != http.StatusSeeOther || p.Location != "/provider/sign-in?signed_out=1" {
			t.Fatalf("sign out: %d %s", p.Status, p.Location)
		}
		if p := b.Get("/provider/bookings"); p.Status != http.StatusSeeOther {
			t.Errorf("bookings after sign-out: %d", p.Status)
		}
		var n int
		if err := db.R().QueryRowContext(t.Context(), `SELECT COUNT(*) FROM provider_sessions`).Scan(&n); err != nil || n != 0 {
			t.Errorf("%d sessions are left after sign-out (%v)", n, err)
		}
	})
}

// TestPagesAuthorization: every provider page and team form × (own
// provider, another provider, a partner's API token, no credential) gives
// exactly the allowed answer. The pages take no bearer credential at all: a partner token is
// no session.
func TestPagesAuthorization(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newPagesEnv(t, db)
		e.seed(t)
		own, other, partner, none := e.browser(t), e.browser(t), e.browser(t), e.browser(t)
		own.SignIn(e.sender, ownerA)
		other.SignIn(e.sender, ownerB)
		staff := e.browser(t)
		staff.SignIn(e.sender, staffA)
		partner.Header.Set("Authorization", "Bearer bkp_partnertokenpartnertokenpartnertoken00")
		staffID := e.userID(t, providerA, staffA)
		waiting, err := e.svc.Invite(t.Context(), nil, providerA, "vantar@vvs-ett.se", provider.Staff)
		if err != nil {
			t.Fatal(err)
		}
		if p := staff.Post("/provider/team/invitations", url.Values{"email": {"ny@example.se"}}); p.Status != http.StatusForbidden {
			t.Errorf("staff invites: %d", p.Status)
		}
		if p := staff.Post("/provider/team/users/"+e.userID(t, providerA, ownerA)+"/remove", nil); p.Status != http.StatusForbidden {
			t.Errorf("staff removes the owner: %d", p.Status)
		}

		type want struct {
			status   int
			location string
			contains string
			lacks    string
		}
		signIn := want{status: http.StatusSeeOther, location: "/provider/sign-in"}
		for _, tc := range []struct {
			method, path string
			form         url.Values
			own, other   want
		}{
			{"GET", "/provider/", nil, want{status: 303, location: "/provider/bookings"}, want{status: 303, location: "/provider/bookings"}},
			{"GET", "/provider/bookings", nil, want{status: 200, contains: "bk_a_next", lacks: "bk_b_next"},
				want{status: 200, contains: "bk_b_next", lacks: "bk_a_next"}},
			{"GET", "/provider/bookings?view=past", nil, want{status: 200, contains: "bk_a_past", lacks: "bk_a_next"},
				want{status: 200, lacks: "bk_a_past"}},
			{"GET", "/provider/bookings/bk_a_next", nil, want{status: 200, contains: "test@example.se"},
				want{status: 404, lacks: "test@example.se"}},
			{"GET", "/provider/team", nil, want{status: 200, contains: staffA}, want{status: 200, lacks: staffA}},
			{"POST", "/provider/bookings/bk_a_next/flag", url.Values{"note": {"Fel adress"}},
				want{status: 303, location: "/provider/bookings/bk_a_next?done=flagged_notice"}, want{status: 404}},
			{"POST", "/provider/bookings/bk_a_next/acknowledge", nil, want{status: 303, location: "/provider/bookings/bk_a_next?done=acked_notice"},
				want{status: 404}},
			{"POST", "/provider/team/users/" + staffID + "/remove", nil, want{status: 303, location: "/provider/team?done=removed_notice"},
				want{status: 404}},
			{"POST", "/provider/bookings/bk_a_next/cancel", url.Values{"reason": {"illness"}, "confirm": {"yes"}},
				want{status: 303, location: "/provider/bookings/bk_a_next?done=cancelled_notice"}, want{status: 404}},
			{"POST", "/provider/bookings/bk_a_next/acknowledge", nil, want{status: 409}, want{status: 404}},
			{"POST", "/provider/team/invitations/" + waiting.ID + "/withdraw", nil,
				want{status: 303, location: "/provider/team?done=withdrawn_notice"}, want{status: 404}},
			{"POST", "/provider/team/invitations", url.Values{"email": {"ny@vvs.se"}}, want{status: 303}, want{status: 303}},
		} {
			for _, who := range []struct {
				name string
				b    *webtest.Client
				want want
			}{{"other", other, tc.other}, {"partner", partner, signIn}, {"none", none, signIn}, {"own", own, tc.own}} {
				var p webtest.Response
				if tc.method == "GET" {
					p = who.b.Get(tc.path)
				} else {
					form := url.Values{}
					for k, v := range tc.form {
						form[k] = v
					}
					p = who.b.Post(tc.path, form)
				}
				w := who.want
				if p.Status != w.status || w.location != "" && p.Location != w.location ||
					w.contains != "" && !strings.Contains(p.Body, w.contains) || w.lacks != "" && strings.Contains(p.Body, w.lacks) {
					t.Errorf("%s %s as %s: %d %q, want %d %q (containing %q, not %q)", tc.method, tc.path, who.name,
						p.Status, p.Location, w.status, w.location, w.contains, w.lacks)
				}
				if p.Status == http.StatusOK && p.Body != "" {
					if got := pageHeader(t, who.b, tc.path); got != web.ContentSecurityPolicy {
						t.Errorf("%s: CSP %q", tc.path, got)
					}
				}
			}
			// Whatever the others tried, each write happened once, by the
			// owner.
			switch {
			case strings.HasSuffix(tc.path, "/acknowledge"):
				if by, _, _ := e.acknowledged(t, "bk_a_next"); by != e.userID(t, providerA, ownerA) {
					t.Errorf("acknowledged by %q, want the owner", by)
				}
				if by, _, _ := e.acknowledged(t, "bk_b_next"); by != "" {
					t.Errorf("provider B's booking was acknowledged by %q", by)
				}
			case strings.HasSuffix(tc.path, "/cancel"):
				if types, _ := e.events(t, "bk_a_next"); len(types) != 2 || types[1] != "booking.cancelled" {
					t.Errorf("events of bk_a_next after the cancel: %v", types)
				}
				if types, _ := e.events(t, "bk_b_next"); len(types) != 0 {
					t.Errorf("provider B's booking has events %v", types)
				}
			case strings.HasSuffix(tc.path, "/flag"):
				if types, _ := e.events(t, "bk_a_next"); len(types) != 1 {
					t.Errorf("flag events of bk_a_next: %v, want one", types)
				}
				if types, _ := e.events(t, "bk_b_next"); len(types) != 0 {
					t.Errorf("provider B's booking has events %v", types)
				}
			case strings.HasSuffix(tc.path, "/withdraw"):
				if ok, err := e.svc.Admits(t.Context(), "vantar@vvs-ett.se"); err != nil || ok {
					t.Errorf("the withdrawn invitation still admits its address: %v %v", ok, err)
				}
			case strings.HasSuffix(tc.path, "/invitations"):
				// Each owner invited to its own provider: both invitations
				// are open, each in its own team.
				for _, c := range []struct{ b *webtest.Client }{{own}, {other}} {
					if p := c.b.Get("/provider/team"); !strings.Contains(p.Body, "ny@vvs.se") {
						t.Errorf("a team page lacks the invitation its owner made:\n%s", p.Body)
					}
				}
				var n int
				if err := db.R().QueryRowContext(t.Context(), `SELECT COUNT(DISTINCT provider_id) FROM provider_invitations
					WHERE invited_by <> 'operator' AND provider_id IN ($1, $2)`, providerA, providerB).Scan(&n); err != nil || n != 2 {
					t.Errorf("providers with an owner's invitation: %d (%v), want A and B", n, err)
				}
			case strings.HasSuffix(tc.path, "/remove"):
				if e.userID(t, providerA, staffA) != "" {
					t.Error("the staff member was not removed")
				}
			}
		}
		// Staff may not manage staff; a removed user's session is gone.
		if p := staff.Get("/provider/team"); p.Status != http.StatusSeeOther {
			t.Errorf("removed staff member's session: %d", p.Status)
		}
	})
}

func pageHeader(t *testing.T, b *webtest.Client, path string) string {
	t.Helper()
	return b.Get(path).Header.Get("Content-Security-Policy")
}

// TestBookingsPageLinksToLaterBookings: a provider with more upcoming
// bookings than one page shows reaches every one of them by the page's
// link to the later ones, in the page's language; the last page has no
// such link, and another provider's booking as the cursor is not found.
func TestBookingsPageLinksToLaterBookings(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newPagesEnv(t, db)
		e.seed(t) // one upcoming booking of A
		start := e.clock.Now().Add(72 * time.Hour)
		for i := range 250 {
			s := start.Add(time.Duration(i) * 3 * time.Hour)
			sqlstoretest.InsertBookingEntry(t, db, providerA, fmt.Sprintf("bk_many_%03d", i), s, s.Add(2*time.Hour))
		}
		b := e.browser(t)
		b.SignIn(e.sender, ownerA)
		seen := map[string]bool{}
		path := "/provider/bookings?lang=en"
		for pages := 1; ; pages++ {
			p := b.Get(path)
			if p.Status != http.StatusOK {
				t.Fatalf("page %d (%s): %d\n%s", pages, path, p.Status, p.Body)
			}
			for _, m := range bookingLinkRe.FindAllStringSubmatch(p.Body, -1) {
				if seen[m[1]] {
					t.Errorf("page %d repeats %s", pages, m[1])
				}
				seen[m[1]] = true
			}
			more := moreLinkRe.FindStringSubmatch(p.Body)
			if more == nil {
				if pages != 2 {
					t.Errorf("%d pages, want 2 of at most 200 bookings", pages)
				}
				break
			}
			if pages == 2 {
				t.Fatal("the last page links to later bookings")
			}
			path = html.UnescapeString(more[1])
			if !strings.Contains(path, "lang=en") || !strings.Contains(p.Body, "Later bookings") {
				t.Errorf("the link to later bookings leaves English: %s", more[0])
			}
		}
		if len(seen) != 251 || seen["bk_b_next"] {
			t.Errorf("the pages showed %d bookings (B's among them: %v), want A's 251", len(seen), seen["bk_b_next"])
		}
		if p := b.Get("/provider/bookings?after=bk_b_next"); p.Status != http.StatusNotFound {
			t.Errorf("another provider's booking as the cursor: %d, want 404", p.Status)
		}
	})
}

var (
	bookingLinkRe = regexp.MustCompile(`href="/provider/bookings/(bk_[a-z0-9_]+)`)
	moreLinkRe    = regexp.MustCompile(`<p class="more"><a href="([^"]+)">`)
)

// TestSignInIsThrottled asks for sign-in codes until the provider door
// refuses: five per address and connection an hour with the product's
// limits (an address without an account reads the same), and, with the
// limiter off, the store's bound of codes per address an hour. A refusal
// sends nothing and says when to come back; an hour later codes go out
// again.
func TestSignInIsThrottled(t *testing.T) {
	for _, tc := range []struct {
		name    string
		limits  provider.Limits
		email   string
		allowed int
		sent    bool
	}{
		{"per address", provider.DefaultLimits(), ownerA, 5, true},
		{"per address without an account", provider.DefaultLimits(), "okand@example.se", 5, false},
		{"the store's bound", provider.Limits{}, ownerA, web.SendLimit, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
				e := newPagesEnv(t, db, func(c *provider.PagesConfig) { c.Limits = tc.limits })
				e.seed(t)
				b := e.browser(t)
				ask := func() webtest.Response {
					t.Helper()
					return b.Post("/provider/sign-in", url.Values{"email": {tc.email}})
				}
				for i := range tc.allowed {
					if p := ask(); p.Status != http.StatusSeeOther {
						t.Fatalf("code %d: %d\n%s", i+1, p.Status, p.Body)
					}
				}
				sent := e.sender.Count()
				if want := map[bool]int{true: tc.allowed, false: 0}[tc.sent]; sent != want {
					t.Errorf("%d codes sent, want %d", sent, want)
				}
				p := ask()
				if p.Status != http.StatusTooManyRequests || !strings.Contains(p.Body, "för många koder") {
					t.Errorf("code %d: %d, want 429 saying too many codes\n%s", tc.allowed+1, p.Status, p.Body)
				}
				if n := e.sender.Count(); n != sent {
					t.Errorf("the refused request sent a code (%d, before %d)", n, sent)
				}
				e.clock.Advance(time.Hour + time.Second)
				if p := ask(); p.Status != http.StatusSeeOther {
					t.Errorf("an hour later: %d\n%s", p.Status, p.Body)
				}
			})
		})
	}
}

// TestPagesRefuseControlCharactersInPathValues: an id in a page's path
// passes the same text check as the page's parameters, so a NUL or DEL is
// 400 on both engines before it reaches the store (on PostgreSQL a NUL
// would be an internal error), as the API answers such a path value.
func TestPagesRefuseControlCharactersInPathValues(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newPagesEnv(t, db)
		e.seed(t)
		own := e.browser(t)
		own.SignIn(e.sender, ownerA)
		for _, id := range []string{"bk_a_next%00", "bk%7Fa"} {
			for _, tc := range []struct {
				method, path string
				form         url.Values
			}{
				{"GET", "/provider/bookings/" + id, nil},
				{"POST", "/provider/bookings/" + id + "/flag", url.Values{"note": {"Fel adress"}}},
				{"POST", "/provider/bookings/" + id + "/acknowledge", nil},
				{"POST", "/provider/bookings/" + id + "/cancel", url.Values{"reason": {"illness"}, "confirm": {"yes"}}},
				{"POST", "/provider/team/users/" + id + "/remove", nil},
				{"POST", "/provider/team/invitations/" + id + "/withdraw", nil},
			} {
				var p webtest.Response
				if tc.method == "GET" {
					p = own.Get(tc.path)
				} else {
					p = own.Post(tc.path, tc.form)
				}
				if p.Status != http.StatusBadRequest {
					t.Errorf("%s %s: %d, want 400\n%s", tc.method, tc.path, p.Status, p.Body)
				}
			}
		}
		if types, _ := e.events(t, "bk_a_next"); len(types) != 0 {
			t.Errorf("events of bk_a_next: %v, want none", types)
		}
	})
}
