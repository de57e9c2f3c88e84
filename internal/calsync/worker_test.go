package calsync_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"bokat"
	"bokat/internal/booking"
	"bokat/internal/calsync"
	"bokat/internal/catalog"
	"bokat/internal/clocktest"
	"bokat/internal/notify"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/supply"
	"bokat/internal/webhook"
	"bokat/internal/webhook/webhooktest"
)

// feedServer is a real HTTPS server serving feeds by path, with ETag and
// Last-Modified validators, counting the requests of each path.
type feedServer struct {
	srv *httptest.Server
	mu  sync.Mutex
	// bodies by path; handlers replace a path's behaviour.
	bodies   map[string][]byte
	handlers map[string]http.HandlerFunc
	hits     map[string]int
	// conditional holds the validators of each path's last request.
	conditional map[string][2]string
	// dialled are the host:port pairs the feed client dialled.
	dialled []string
}

func newFeedServer(tb testing.TB) *feedServer {
	tb.Helper()
	fs := &feedServer{bodies: map[string][]byte{}, handlers: map[string]http.HandlerFunc{}, hits: map[string]int{},
		conditional: map[string][2]string{}}
	fs.srv = httptest.NewTLSServer(http.HandlerFunc(fs.serve))
	tb.Cleanup(fs.srv.Close)
	return fs
}

func (fs *feedServer) serve(w http.ResponseWriter, r *http.Request) {
	fs.mu.Lock()
	fs.hits[r.URL.Path]++
	fs.conditional[r.URL.Path] = [2]string{r.Header.Get("If-None-Match"), r.Header.Get("If-Modified-Since")}
	h, body := fs.handlers[r.URL.Path], fs.bodies[r.URL.Path]
	fs.mu.Unlock()
	if h != nil {
		h(w, r)
		return
	}
	if body == nil {
		http.NotFound(w, r)
		return
	}
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:8]) + `"`
	w.Header().Set("ETag", etag)
	w.Header().Set("Last-Modified", "Mon, 19 Oct 2026 12:00:00 GMT")
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", "text/calendar; charset=utf-8")
	w.Write(body)
}

func (fs *feedServer) set(path string, body []byte) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.bodies[path] = body
}

func (fs *feedServer) handle(path string, h http.HandlerFunc) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.handlers[path] = h
}

func (fs *feedServer) hitsOf(path string) int {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.hits[path]
}

// publicHost is the public name the tests give the feed server: the guard
// runs in production mode (https, port 443, public addresses only), and
// the test's dialler routes the public name's connections to the server.
const publicHost = "kalender.example.se"

// fetchConfig returns a production-mode fetch configuration whose resolver
// knows publicHost (a public address) and two names of private addresses.
func (fs *feedServer) fetchConfig() calsync.FetchConfig {
	resolver := webhooktest.NewResolver(publicHost+"=93.184.216.34", "metadata.example.se=169.254.169.254",
		"intranet.example.se=10.1.2.3")
	tlsConf := fs.srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	tlsConf.ServerName = "example.com" // the name in httptest's certificate
	return calsync.FetchConfig{
		Guard: webhook.NewGuard(resolver, false),
		TLS:   tlsConf,
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			fs.mu.Lock()
			fs.dialled = append(fs.dialled, addr)
			fs.mu.Unlock()
			if addr != publicHost+":443" {
				return nil, fmt.Errorf("the test network has no route to %s", addr)
			}
			var d net.Dialer
			return d.DialContext(ctx, network, fs.srv.Listener.Addr().String())
		},
		MaxBytes: 256 << 10,
	}
}

func feedURL(path string) string { return "https://" + publicHost + path }

// syncEnv is one store with a provider, a feed server and a worker on an
// injected clock.
type syncEnv struct {
	db     *sqlstore.DB
	clock  *clocktest.Clock
	server *feedServer
	feeds  *calsync.Feeds
	worker *calsync.Worker
	mail   string
}

const providerID = "prv_sync"

func newSyncEnv(t *testing.T, db *sqlstore.DB) *syncEnv {
	t.Helper()
	ctx := context.Background()
	e := &syncEnv{db: db, clock: clocktest.New(windowFrom), server: newFeedServer(t), mail: t.TempDir()}
	insertProvider(t, db, providerID, 30)
	fc := e.server.fetchConfig()
	e.feeds = calsync.NewFeeds(sqlstore.Bind[calsync.Tx](db), fc.Guard, e.clock.Now)
	e.worker = e.newWorker(t, db)
	_ = ctx
	return e
}

func (e *syncEnv) newWorker(t *testing.T, db *sqlstore.DB) *calsync.Worker {
	t.Helper()
	mailer, err := notify.NewMailer(notify.MailerConfig{From: "Bokat <bokning@example.se>", Dir: e.mail, Now: e.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	lifecycle := newLifecycle(t, db, e.clock)
	w, err := calsync.NewWorker(calsync.Config{Store: sqlstore.Bind[calsync.Tx](db), Fetch: e.server.fetchConfig(),
		Now: e.clock.Now, OwnUIDDomain: "bokat.test", FollowUp: lifecycle, Mail: mailer})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func newLifecycle(t *testing.T, db *sqlstore.DB, clock *clocktest.Clock) *booking.Lifecycle {
	t.Helper()
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	l, err := booking.NewLifecycle(booking.LifecycleConfig{Store: sqlstore.Bind[booking.Tx](db), Catalog: cat, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func insertProvider(tb testing.TB, db *sqlstore.DB, id string, horizonDays int) {
	tb.Helper()
	err := db.InTx(context.Background(), func(tx *sqlstore.Tx) error {
		_, err := tx.Q().ExecContext(context.Background(), `INSERT INTO providers (id, name, email, active, min_notice_minutes,
			horizon_days, created_at, updated_at) VALUES ($1, 'Rör & Co', 'ror@example.se', TRUE, 60, $2, 0, 0)`, id, horizonDays)
		return err
	})
	if err != nil {
		tb.Fatalf("insert provider: %v", err)
	}
}

func (e *syncEnv) add(t *testing.T, path string, rule calsync.Rule) calsync.Feed {
	t.Helper()
	f, err := e.feeds.Add(context.Background(), providerID, feedURL(path), rule, calsync.SourceOperator)
	if err != nil {
		t.Fatalf("add %s: %v", path, err)
	}
	return f
}

func (e *syncEnv) round(t *testing.T) calsync.Round {
	t.Helper()
	r, err := e.worker.RunOnce(context.Background())
	if err != nil {
		t.Fatalf("round: %v", err)
	}
	return r
}

// busy returns the provider's active calendar entries as search reads
// them (the availability read), with the calendar revision.
func (e *syncEnv) busy(t *testing.T) ([]calsync.Interval, int64) {
	t.Helper()
	a, err := e.db.ReadAvailability(context.Background(), -1, -1, true, windowFrom.Add(-48*time.Hour), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []calsync.Interval
	for _, c := range a.Calendars {
		for i, sp := range c.Spans {
			if c.ProviderID == providerID && !c.Booking[i] {
				out = append(out, calsync.Interval{Start: time.UnixMilli(sp.Start).UTC(), End: time.UnixMilli(sp.End).UTC()})
			}
		}
	}
	return out, a.CalendarRevision
}

func (e *syncEnv) feed(t *testing.T, id string) calsync.Feed {
	t.Helper()
	fs, err := e.feeds.List(context.Background(), providerID)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		if f.ID == id {
			return f
		}
	}
	t.Fatalf("feed %s not listed", id)
	return calsync.Feed{}
}

// expected parses the testdata feeds as the worker does at the clock's
// time and merges their busy times.
func expected(t *testing.T, now time.Time, files map[string]calsync.Rule) []calsync.Interval {
	t.Helper()
	y, m, d := now.In(stockholm()).Date()
	from := time.Date(y, m, d, 0, 0, 0, 0, stockholm())
	to := now.Add(37 * 24 * time.Hour)
	var all []calsync.Interval
	for name, rule := range files {
		p, err := calsync.Parse(readFeed(t, name), calsync.ParseOptions{From: from, To: to, Rule: rule, OwnUIDDomain: "bokat.test"})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, p.Busy...)
	}
	slices.SortFunc(all, func(a, b calsync.Interval) int {
		if c := a.Start.Compare(b.Start); c != 0 {
			return c
		}
		return a.End.Compare(b.End)
	})
	return all
}

func stockholm() *time.Location {
	loc, err := time.LoadLocation("Europe/Stockholm")
	if err != nil {
		panic(err)
	}
	return loc
}

func contains(busy []calsync.Interval, x calsync.Interval) bool {
	return slices.ContainsFunc(busy, func(b calsync.Interval) bool { return b.Start.Equal(x.Start) && b.End.Equal(x.End) })
}

// TestSyncGoogleOutlookICloud polls three feeds in the shapes the three
// calendar services export, over a real HTTPS server through the
// production guard: their busy times reach the calendar search reads and
// move the calendar revision; the next round, answered 304, writes no
// calendar row; a changed feed replaces its busy times atomically.
func TestSyncGoogleOutlookICloud(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newSyncEnv(t, db)
		for _, name := range []string{"google.ics", "outlook.ics", "icloud.ics"} {
			e.server.set("/"+name, readFeed(t, name))
		}
		google := e.add(t, "/google.ics", calsync.RuleAllDayBusy)
		e.add(t, "/outlook.ics", "")
		e.add(t, "/icloud.ics", calsync.RuleBusyOnly)
		_, rev0 := e.busy(t)

		r := e.round(t)
		if r.Polled != 3 || r.Changed != 3 || r.Failed != 0 {
			t.Fatalf("first round = %+v, want 3 feeds polled and changed", r)
		}
		got, rev1 := e.busy(t)
		want := expected(t, e.clock.Now(), map[string]calsync.Rule{"google.ics": calsync.RuleAllDayBusy,
			"outlook.ics": calsync.RuleBusyOnly, "icloud.ics": calsync.RuleBusyOnly})
		if g, w := formatBusy(got), formatBusy(want); g != w {
			t.Fatalf("busy in the calendar =\n%s\nwant\n%s", g, w)
		}
		for _, x := range append(append(slices.Clone(googleBusy), googleHoliday), append(outlookBusy, icloudBusy...)...) {
			if !contains(got, x) {
				t.Errorf("busy %v–%v missing from the calendar", x.Start, x.End)
			}
		}
		if rev1 <= rev0 {
			t.Errorf("calendar revision %d after the sync, want past %d", rev1, rev0)
		}
		if f := e.feed(t, google.ID); !f.LastSyncedAt.Equal(e.clock.Now()) || f.LastError != "" || f.BusyCount != len(googleBusy)+2 {
			t.Errorf("google feed after sync = synced %v, error %q, busy %d", f.LastSyncedAt, f.LastError, f.BusyCount)
		}

		// Not due again before the interval; then answered 304: nothing
		// written to the calendar.
		if r := e.round(t); r.Polled != 0 {
			t.Fatalf("round before the interval polled %d feeds", r.Polled)
		}
		e.clock.Advance(calsync.DefaultInterval)
		r = e.round(t)
		if r.Polled != 3 || r.Unchanged != 3 || r.Rows != 0 {
			t.Fatalf("round after the interval = %+v, want 3 unchanged and no row", r)
		}
		if _, rev := e.busy(t); rev != rev1 {
			t.Errorf("calendar revision moved on a 304: %d, want %d", rev, rev1)
		}
		if n := e.server.hitsOf("/google.ics"); n != 2 {
			t.Errorf("google feed requested %d times, want 2", n)
		}
		e.server.mu.Lock()
		validators := e.server.conditional["/google.ics"]
		e.server.mu.Unlock()
		if validators[0] == "" || validators[1] != "Mon, 19 Oct 2026 12:00:00 GMT" {
			t.Errorf("second poll sent If-None-Match %q, If-Modified-Since %q; want both", validators[0], validators[1])
		}

		// The provider deletes the moved instance: the next round drops it.
		e.server.set("/google.ics", []byte(strings.Replace(string(readFeed(t, "google.ics")),
			"STATUS:CONFIRMED\r\nSUMMARY:Fast kund (flyttad till onsdag)", "STATUS:CANCELLED\r\nSUMMARY:Fast kund (flyttad till onsdag)", 1)))
		e.clock.Advance(calsync.DefaultInterval)
		r = e.round(t)
		if r.Changed != 1 || r.Unchanged != 2 || r.Rows != 1 {
			t.Fatalf("round after the change = %+v, want 1 changed (1 row) and 2 unchanged", r)
		}
		got, rev2 := e.busy(t)
		if contains(got, googleBusy[1]) || rev2 <= rev1 {
			t.Errorf("cancelled instance still busy (%v) or revision %d not past %d", contains(got, googleBusy[1]), rev2, rev1)
		}

		// Removing a feed frees its busy times at once.
		if err := e.feeds.Remove(context.Background(), providerID, google.ID); err != nil {
			t.Fatal(err)
		}
		got, _ = e.busy(t)
		if contains(got, googleBusy[0]) || contains(got, googleHoliday) {
			t.Error("the removed feed's busy times are still in the calendar")
		}
	})
}

// TestSyncRefusesHostileAnswers: a feed past the size cap and redirects to
// private addresses fail the poll, keep the feed's last busy times, and
// never reach the private address.
func TestSyncRefusesHostileAnswers(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newSyncEnv(t, db)
		e.server.set("/grows.ics", readFeed(t, "icloud.ics"))
		grows := e.add(t, "/grows.ics", "")
		e.server.handle("/metadata.ics", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "https://metadata.example.se/latest/meta-data/", http.StatusFound)
		})
		e.server.handle("/intranet.ics", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://10.1.2.3/kalender.ics", http.StatusMovedPermanently)
		})
		e.server.handle("/loop.ics", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/loop.ics", http.StatusFound)
		})
		meta := e.add(t, "/metadata.ics", "")
		intra := e.add(t, "/intranet.ics", "")
		loop := e.add(t, "/loop.ics", "")
		if r := e.round(t); r.Changed != 1 || r.Failed != 3 {
			t.Fatalf("first round = %+v, want 1 changed and 3 failed", r)
		}
		if f := e.feed(t, loop.ID); f.LastError != "more than 3 redirects" || e.server.hitsOf("/loop.ics") != 4 {
			t.Errorf("redirect loop: error %q after %d requests, want 4 requests", f.LastError, e.server.hitsOf("/loop.ics"))
		}
		before, _ := e.busy(t)
		for _, f := range []calsync.Feed{e.feed(t, meta.ID), e.feed(t, intra.ID)} {
			if !strings.HasPrefix(f.LastError, "redirect refused") || !f.LastSyncedAt.IsZero() || !f.FailingSince.Equal(e.clock.Now()) {
				t.Errorf("feed %s: error %q, synced %v, failing since %v", f.ID, f.LastError, f.LastSyncedAt, f.FailingSince)
			}
			if strings.Contains(f.LastError, ".ics") {
				t.Errorf("the error %q quotes the address", f.LastError)
			}
		}
		for _, a := range e.server.dialled {
			if a != publicHost+":443" {
				t.Errorf("the client dialled %s", a)
			}
		}

		// The feed grows past the cap: the poll fails, the busy times stay.
		big := strings.Replace(string(readFeed(t, "icloud.ics")), "END:VCALENDAR", "X-PADDING:"+strings.Repeat("x", 300<<10)+"\r\nEND:VCALENDAR", 1)
		e.server.set("/grows.ics", []byte(big))
		e.clock.Advance(calsync.DefaultInterval)
		if r := e.round(t); r.Failed != 4 || r.Rows != 0 {
			t.Fatalf("round of the grown feed = %+v, want 4 failed, no row", r)
		}
		if f := e.feed(t, grows.ID); !strings.Contains(f.LastError, "larger than 256 KiB") || f.BusyCount != len(icloudBusy) {
			t.Errorf("grown feed: error %q, busy %d", f.LastError, f.BusyCount)
		}
		if after, _ := e.busy(t); formatBusy(after) != formatBusy(before) {
			t.Errorf("busy times changed on a failed poll:\n%s\nwas\n%s", formatBusy(after), formatBusy(before))
		}
	})
}

// TestStaleFeedBlocksAndTellsOnce: a feed failing for the stale bound
// blocks its provider's whole horizon (search offers nothing direct, an
// option confirmed later is refused by revalidation), and the provider is
// e-mailed once; when the feed answers again its real busy times return.
func TestStaleFeedBlocksAndTellsOnce(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newSyncEnv(t, db)
		e.server.set("/cal.ics", readFeed(t, "outlook.ics"))
		f := e.add(t, "/cal.ics", "")
		e.round(t)
		e.server.handle("/cal.ics", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", 500) })
		for i := 0; i < 3; i++ { // failures at +1 h, +2 h, +3 h: not stale yet
			e.clock.Advance(calsync.DefaultInterval + 55*time.Minute)
			e.round(t)
		}
		if got, _ := e.busy(t); formatBusy(got) != formatBusy(expected(t, windowFrom, map[string]calsync.Rule{"outlook.ics": ""})) {
			t.Fatalf("a failing feed lost its busy times before it went stale:\n%s", formatBusy(got))
		}
		if fd := e.feed(t, f.ID); fd.LastError != "the server answered HTTP 500" || fd.Stale(e.clock.Now(), calsync.DefaultStaleAfter) {
			t.Fatalf("feed error %q, stale %v", fd.LastError, fd.Stale(e.clock.Now(), calsync.DefaultStaleAfter))
		}
		e.clock.Advance(4*time.Hour + 20*time.Minute) // 6 h 20 min since the first failure
		e.round(t)
		got, _ := e.busy(t)
		horizonEnd := e.clock.Now().Add(30 * 24 * time.Hour)
		if len(got) != 1 || got[0].Start.After(e.clock.Now()) || got[0].End.Before(horizonEnd) {
			t.Fatalf("stale feed's busy = \n%s want one block over the horizon", formatBusy(got))
		}
		// Confirmation's revalidation reads the same entries: a slot of an
		// option issued before the feed went stale is no longer free.
		slot := e.clock.Now().Add(48 * time.Hour)
		entries, err := db.BusyEntries(context.Background(), []string{providerID}, slot, slot.Add(time.Hour))
		if err != nil || len(entries) != 1 || entries[0].Kind != bokat.CalendarKindSynced {
			t.Fatalf("busy entries at a slot in the horizon = %+v, %v; want the synced block", entries, err)
		}
		e.clock.Advance(calsync.DefaultInterval)
		e.round(t)
		mails, _ := filepath.Glob(filepath.Join(e.mail, "*.eml"))
		if len(mails) != 1 {
			t.Fatalf("%d e-mails to the provider, want 1", len(mails))
		}
		if b, _ := os.ReadFile(mails[0]); !strings.Contains(string(b), "ror@example.se") || strings.Contains(string(b), "/cal.ics") {
			t.Errorf("stale e-mail not to the provider, or quoting the address:\n%s", b)
		}

		// The feed answers again: its busy times replace the block.
		e.server.handle("/cal.ics", nil)
		e.clock.Advance(calsync.DefaultInterval)
		if r := e.round(t); r.Changed != 1 {
			t.Fatalf("recovery round = %+v", r)
		}
		got, _ = e.busy(t)
		if len(got) == 1 || !contains(got, outlookBusy[2]) && e.clock.Now().Before(outlookBusy[2].End) {
			t.Errorf("busy after recovery =\n%s", formatBusy(got))
		}
		if fd := e.feed(t, f.ID); fd.LastError != "" || !fd.FailingSince.IsZero() {
			t.Errorf("recovered feed: error %q, failing since %v", fd.LastError, fd.FailingSince)
		}
	})
}

// TestConflictRaisedOnce: a synced busy time over a confirmed booking is
// stored (no constraint fails) and raises booking.provider_action_required
// with reason calendar_conflict once, however often the feed changes.
func TestConflictRaisedOnce(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newSyncEnv(t, db)
		// A booking on 22 Oct 12:30–13:30Z, under the dentist 12:00–13:00Z.
		sqlstoretest.InsertBookingEntry(t, db, providerID, "bkg_conflict", outlookBusy[0].Start.Add(30*time.Minute),
			outlookBusy[0].End.Add(30*time.Minute))
		e.server.set("/cal.ics", readFeed(t, "outlook.ics"))
		e.add(t, "/cal.ics", "")
		if r := e.round(t); r.Changed != 1 || r.Raised != 1 {
			t.Fatalf("round = %+v, want the feed synced and 1 conflict raised", r)
		}
		got, _ := e.busy(t)
		if !contains(got, outlookBusy[0]) {
			t.Fatal("the busy time over the booking was not stored")
		}
		e.server.set("/cal.ics", []byte(strings.Replace(string(readFeed(t, "outlook.ics")), "SUMMARY:Tandläkare", "SUMMARY:Tandläkaren", 1)))
		e.clock.Advance(calsync.DefaultInterval)
		if r := e.round(t); r.Changed != 1 || r.Raised != 0 {
			t.Fatalf("second round = %+v, want no second event", r)
		}
		var n int
		var payload string
		err := db.R().QueryRowContext(context.Background(), `SELECT COUNT(*), MAX(payload) FROM outbox_events
			WHERE booking_id = 'bkg_conflict' AND event_type = $1`, string(bokat.EventBookingProviderActionRequired)).Scan(&n, &payload)
		if err != nil {
			t.Fatal(err)
		}
		if n != 1 || !strings.Contains(payload, `"reason":"calendar_conflict"`) {
			t.Errorf("%d provider_action_required events, payload %s; want 1 with reason calendar_conflict", n, payload)
		}
		conflicts, err := e.feeds.Conflicts(context.Background(), providerID)
		if err != nil || len(conflicts) != 1 || conflicts[0].BookingID != "bkg_conflict" || conflicts[0].RaisedAt.IsZero() {
			t.Errorf("conflicts on the provider's page = %+v, %v", conflicts, err)
		}
	})
}

// TestDevelopmentFeedOnLoopback: with the guard's AllowPrivate (the
// development flag --webhook-allow-private) a feed may live on http on a
// loopback address; without it the same address is refused when added.
func TestDevelopmentFeedOnLoopback(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(readFeed(t, "icloud.ics"))
	}))
	t.Cleanup(srv.Close)
	db := sqlstoretest.Open(t, sqlstore.SQLite)
	insertProvider(t, db, providerID, 30)
	clock := clocktest.New(windowFrom)
	store := sqlstore.Bind[calsync.Tx](db)
	prod := calsync.NewFeeds(store, webhook.NewGuard(webhooktest.NewResolver(), false), clock.Now)
	_, err := prod.Add(context.Background(), providerID, srv.URL+"/hem.ics", "", calsync.SourceOperator)
	var be *bokat.Error
	if !errors.As(err, &be) || be.Code != bokat.CodeValidationFailed || !slices.Contains(be.Issues, "url: the URL must use https") {
		t.Fatalf("production accepted %s: %v", srv.URL, err)
	}
	guard := webhook.NewGuard(webhooktest.NewResolver(), true)
	if _, err = calsync.NewFeeds(store, guard, clock.Now).Add(context.Background(), providerID, srv.URL+"/hem.ics", "",
		calsync.SourceOperator); err != nil {
		t.Fatal(err)
	}
	w, err := calsync.NewWorker(calsync.Config{Store: store, Fetch: calsync.FetchConfig{Guard: guard}, Now: clock.Now,
		Interval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := w.RunOnce(context.Background()); err != nil || r.Changed != 1 {
		t.Fatalf("round = %+v, %v", r, err)
	}
}

// TestTwoWorkersShareFeeds runs two workers, each with its own store
// connection (two serve processes' wirings), on one database and one
// injected clock: in each interval every feed is polled exactly once.
func TestTwoWorkersShareFeeds(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newSyncEnv(t, db)
		v := sqlstoretest.Vault(t)
		dbs := []*sqlstore.DB{sqlstoretest.Reopen(t, db, v), sqlstoretest.Reopen(t, db, v)}
		adder := calsync.NewFeeds(sqlstore.Bind[calsync.Tx](dbs[0]), e.server.fetchConfig().Guard, e.clock.Now)
		const feeds = 24
		for i := range 3 {
			insertProvider(t, db, fmt.Sprintf("prv_%d", i), 30)
		}
		for i := range feeds {
			path := fmt.Sprintf("/f%02d.ics", i)
			e.server.set(path, readFeed(t, "icloud.ics"))
			provider := fmt.Sprintf("prv_%d", i%3)
			if _, err := adder.Add(context.Background(), provider, feedURL(path), "", calsync.SourceSupply); err != nil {
				t.Fatal(err)
			}
		}
		workers := []*calsync.Worker{e.newWorker(t, dbs[0]), e.newWorker(t, dbs[1])}
		for interval := 1; interval <= 3; interval++ {
			var (
				wg     sync.WaitGroup
				rounds [2]calsync.Round
				errs   [2]error
			)
			for i, w := range workers {
				wg.Go(func() { rounds[i], errs[i] = w.RunOnce(context.Background()) })
			}
			wg.Wait()
			if errs[0] != nil || errs[1] != nil {
				t.Fatalf("interval %d: %v, %v", interval, errs[0], errs[1])
			}
			if n := rounds[0].Polled + rounds[1].Polled; n != feeds {
				t.Errorf("interval %d: %d polls (%d + %d), want %d", interval, n, rounds[0].Polled, rounds[1].Polled, feeds)
			}
			for i := range feeds {
				if n := e.server.hitsOf(fmt.Sprintf("/f%02d.ics", i)); n != interval {
					t.Errorf("interval %d: feed %d requested %d times, want %d", interval, i, n, interval)
				}
			}
			e.clock.Advance(calsync.DefaultInterval)
		}
	})
}

// TestSubscribeSupply applies a supply file's calendars: new ones are
// added (sealed), known ones kept, refused ones reported by position.
func TestSubscribeSupply(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newSyncEnv(t, db)
		providers := []bokat.ProviderSupply{{Provider: bokat.Provider{ID: providerID}, Calendars: []bokat.CalendarSubscription{
			{URL: feedURL("/a.ics")},
			{URL: "webcal://" + publicHost + "/b.ics", Rule: string(calsync.RuleAllDayBusy)},
			{URL: "https://metadata.example.se/c.ics"},
		}}}
		res, err := e.feeds.ApplySupply(context.Background(), providers)
		if err != nil {
			t.Fatal(err)
		}
		if res.Added != 2 || res.Kept != 0 || len(res.Refused) != 1 || !strings.HasPrefix(res.Refused[0], providerID+" calendars[2]: url: ") ||
			strings.Contains(res.Refused[0], "c.ics") || len(res.Changes) != 1 || len(res.Changes[0].Added) != 2 ||
			res.Changes[0].Added[0].URL != "" || res.Changes[0].Added[1].Label != publicHost {
			t.Fatalf("first subscription = %+v", res)
		}
		if res, err = e.feeds.ApplySupply(context.Background(), providers); err != nil || res.Added != 0 || res.Kept != 2 || res.Changed() {
			t.Fatalf("second subscription = %+v, %v; want 2 kept", res, err)
		}
		feeds, err := e.feeds.List(context.Background(), providerID)
		if err != nil || len(feeds) != 2 || feeds[1].URL != feedURL("/b.ics") || feeds[1].Rule != calsync.RuleAllDayBusy ||
			feeds[0].Source != calsync.SourceSupply {
			t.Fatalf("feeds = %+v, %v", feeds, err)
		}
		var sealed string
		if err := db.R().QueryRowContext(context.Background(), `SELECT url_sealed FROM calendar_feeds WHERE id = $1`, feeds[0].ID).
			Scan(&sealed); err != nil || strings.Contains(sealed, "a.ics") || sealed == "" {
			t.Errorf("stored address %q (%v), want it sealed", sealed, err)
		}
	})
}

// TestCalendarRemovedByHandStaysRemoved: a calendar removed by hand (as
// the provider's page, the provider API and the operator's command remove
// one) is left out by later imports of a file naming it, whoever added it;
// added again by hand, it counts again. A calendar the import itself
// removed comes back when a file names it again.
func TestCalendarRemovedByHandStaysRemoved(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		e := newSyncEnv(t, db)
		file := func(paths ...string) []bokat.ProviderSupply {
			p := bokat.ProviderSupply{Provider: bokat.Provider{ID: providerID}}
			for _, path := range paths {
				p.Calendars = append(p.Calendars, bokat.CalendarSubscription{URL: feedURL(path)})
			}
			return []bokat.ProviderSupply{p}
		}
		res, err := e.feeds.ApplySupply(ctx, file("/a.ics", "/b.ics"))
		if err != nil || res.Added != 2 {
			t.Fatalf("first file = %+v, %v", res, err)
		}
		own, err := e.feeds.Add(ctx, providerID, feedURL("/own.ics"), "", calsync.SourceProvider)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.feeds.Remove(ctx, providerID, res.Changes[0].Added[0].ID); err != nil {
			t.Fatal(err)
		}
		if err := e.feeds.Remove(ctx, providerID, own.ID); err != nil {
			t.Fatal(err)
		}

		// The file names a and the provider's own calendar, both removed
		// by hand: both are left out, nothing is written.
		res, err = e.feeds.ApplySupply(ctx, file("/a.ics", "/b.ics", "/own.ics"))
		if err != nil || res.Added != 0 || res.Kept != 1 || res.Dismissed != 2 || res.Changed() || len(res.Changes) != 1 ||
			!slices.Equal(res.Changes[0].Dismissed, []string{publicHost, publicHost}) {
			t.Fatalf("file naming the calendars removed by hand = %+v, %v; want both left out, b kept", res, err)
		}
		if got := feedPaths(t, e); !slices.Equal(got, []string{"/b.ics supply"}) {
			t.Fatalf("feeds after the import: %v, want b only", got)
		}

		// The import removes b itself; a later file naming it adds it again.
		if res, err = e.feeds.ApplySupply(ctx, file("/a.ics")); err != nil || res.Removed != 1 || res.Dismissed != 1 {
			t.Fatalf("file without b = %+v, %v; want b removed, a left out", res, err)
		}
		if res, err = e.feeds.ApplySupply(ctx, file("/a.ics", "/b.ics")); err != nil || res.Added != 1 || res.Dismissed != 1 {
			t.Fatalf("file naming b again = %+v, %v; want b added, a left out", res, err)
		}

		// a added again by hand counts again: the file keeps it, and a
		// removal by the import (the file no longer naming it) does not
		// touch the provider's own.
		if _, err := e.feeds.Add(ctx, providerID, feedURL("/a.ics"), "", calsync.SourceProvider); err != nil {
			t.Fatal(err)
		}
		if res, err = e.feeds.ApplySupply(ctx, file("/a.ics", "/b.ics")); err != nil || res.Kept != 2 || res.Dismissed != 0 || res.Changed() {
			t.Fatalf("file after a was added again = %+v, %v; want a and b kept, nothing left out", res, err)
		}
		if got := feedPaths(t, e); !slices.Equal(got, []string{"/b.ics supply", "/a.ics provider"}) {
			t.Fatalf("feeds after a was added again: %v", got)
		}
		if dismissed, err := db.FeedDismissed(ctx, providerID, feedURL("/a.ics")); err != nil || dismissed {
			t.Errorf("a is still recorded as removed by hand after it was added again: %v %v", dismissed, err)
		}
		if dismissed, err := db.FeedDismissed(ctx, providerID, feedURL("/own.ics")); err != nil || !dismissed {
			t.Errorf("own is not recorded as removed by hand: %v %v", dismissed, err)
		}
		// An import that raced the removal (it planned the address before)
		// still does not end the record: only a hand does.
		if err := db.InTx(ctx, func(tx *sqlstore.Tx) error {
			return tx.InsertFeed(ctx, calsync.Feed{ID: "cfd_raced", ProviderID: providerID, URL: feedURL("/own.ics"),
				Label: publicHost, Rule: calsync.RuleBusyOnly, Source: calsync.SourceSupply}, e.clock.Now())
		}); err != nil {
			t.Fatal(err)
		}
		if dismissed, err := db.FeedDismissed(ctx, providerID, feedURL("/own.ics")); err != nil || !dismissed {
			t.Errorf("a supply file's feed ended the record of own's removal by hand: %v %v", dismissed, err)
		}
	})
}

// TestSlowFeedHoldsOnlyItsSlot: with two polls at a time, a feed that
// answers only after every other feed was polled does not hold them up:
// the other slot goes on claiming. (Were feeds polled in batches, the slow
// feed would wait for feeds queued behind it until its time-out.)
func TestSlowFeedHoldsOnlyItsSlot(t *testing.T) {
	t.Parallel()
	db := sqlstoretest.Open(t, sqlstore.SQLite)
	e := newSyncEnv(t, db)
	const others = 6
	allPolled := make(chan struct{})
	var once sync.Once
	e.server.handle("/slow.ics", func(w http.ResponseWriter, r *http.Request) {
		<-allPolled
		w.Write(readFeed(t, "icloud.ics"))
	})
	e.add(t, "/slow.ics", "")
	for i := range others {
		path := fmt.Sprintf("/o%d.ics", i)
		e.server.handle(path, func(w http.ResponseWriter, r *http.Request) {
			w.Write(readFeed(t, "outlook.ics"))
			done := 0
			for j := range others {
				done += min(e.server.hitsOf(fmt.Sprintf("/o%d.ics", j)), 1)
			}
			if done == others {
				once.Do(func() { close(allPolled) })
			}
		})
		e.add(t, path, "")
	}
	fc := e.server.fetchConfig()
	fc.Timeout = 15 * time.Second // a fail-safe only: the slow feed answers once the others were polled
	w, err := calsync.NewWorker(calsync.Config{Store: sqlstore.Bind[calsync.Tx](db), Fetch: fc, Now: e.clock.Now, Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	r, err := w.RunOnce(context.Background())
	if err != nil || r.Polled != others+1 || r.Changed != others+1 {
		t.Fatalf("round = %+v, %v; want every feed synced, the slow one too", r, err)
	}
}

// TestSearchSeesSyncedBusyTime: with the demo supply, the first option a
// search offers is a free slot; once a provider's calendar feed says the
// provider is busy then, the next search (the same Search, its index
// refreshed by the calendar revision) no longer offers that slot.
func TestSearchSeesSyncedBusyTime(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		e := &syncEnv{db: db, clock: clocktest.New(windowFrom), server: newFeedServer(t), mail: t.TempDir()}
		cat, err := catalog.Load()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := supply.Import(ctx, sqlstore.Bind[supply.Tx](db), cat, supply.DemoName, supply.Demo(), e.clock.Now()); err != nil {
			t.Fatal(err)
		}
		keys, err := booking.ParseKeyring("k1:" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32)))
		if err != nil {
			t.Fatal(err)
		}
		search, err := booking.NewSearch(booking.Config{Catalog: cat, Store: db, Keys: keys, Now: e.clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		q := booking.Query{VerticalID: "vvs", JobTypeID: "install_faucet", Postcode: "11345", Locale: "sv-SE"}
		before, err := search.Search(ctx, q)
		if err != nil || len(before.Options) == 0 {
			t.Fatalf("search before the sync: %+v, %v", before, err)
		}
		first := before.Options[0]
		busy := fmt.Sprintf("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:tandlakare@example.se\r\nDTSTART:%s\r\nDTEND:%s\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
			first.Slot.Start.UTC().Format("20060102T150405Z"), first.Slot.End.UTC().Format("20060102T150405Z"))
		e.server.set("/busy.ics", []byte(busy))
		feeds := calsync.NewFeeds(sqlstore.Bind[calsync.Tx](db), e.server.fetchConfig().Guard, e.clock.Now)
		if _, err := feeds.Add(ctx, first.Provider.ID, feedURL("/busy.ics"), "", calsync.SourceOperator); err != nil {
			t.Fatal(err)
		}
		if r := e.newWorker(t, db); r != nil {
			if got, err := r.RunOnce(ctx); err != nil || got.Changed != 1 {
				t.Fatalf("sync: %+v, %v", got, err)
			}
		}
		after, err := search.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range after.Options {
			if o.Provider.ID == first.Provider.ID && o.Slot.Start.Before(first.Slot.End) && first.Slot.Start.Before(o.Slot.End) {
				t.Fatalf("search still offers %s at %v, inside the synced busy time", o.Provider.ID, o.Slot.Start)
			}
		}
	})
}

// TestResealFeedsAfterRotation: after the secret key rotates, feed
// addresses are re-sealed with the new key, so the old one can go.
func TestResealFeedsAfterRotation(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		insertProvider(t, db, providerID, 30)
		pepper, oldKey, newKey := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32), bytes.Repeat([]byte{3}, 32)
		withKeys := func(keys ...[]byte) *calsync.Feeds {
			store := sqlstoretest.Reopen(t, db, sqlstoretest.VaultWith(t, pepper, keys...))
			return calsync.NewFeeds(sqlstore.Bind[calsync.Tx](store), webhook.NewGuard(webhooktest.NewResolver(publicHost+"=93.184.216.34"), false), nil)
		}
		if _, err := withKeys(oldKey).Add(ctx, providerID, feedURL("/a.ics"), "", calsync.SourceOperator); err != nil {
			t.Fatal(err)
		}
		if _, err := withKeys(newKey).List(ctx, providerID); err == nil {
			t.Fatal("an address sealed with the old key opened without it")
		}
		rotated := sqlstoretest.Reopen(t, db, sqlstoretest.VaultWith(t, pepper, newKey, oldKey))
		if n, err := rotated.ResealFeeds(ctx); err != nil || n != 1 {
			t.Fatalf("re-seal = %d, %v; want 1", n, err)
		}
		if n, err := rotated.ResealFeeds(ctx); err != nil || n != 0 {
			t.Fatalf("second re-seal = %d, %v; want 0", n, err)
		}
		feeds, err := withKeys(newKey).List(ctx, providerID)
		if err != nil || len(feeds) != 1 || feeds[0].URL != feedURL("/a.ics") {
			t.Fatalf("feeds with the new key only = %+v, %v", feeds, err)
		}
	})
}

// TestFeedRemovedDuringPoll: a feed removed while a worker reads it is
// gone for good: the worker's outcome finds the lease lost and writes no
// busy time.
func TestFeedRemovedDuringPoll(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newSyncEnv(t, db)
		var f calsync.Feed
		e.server.handle("/gone.ics", func(w http.ResponseWriter, r *http.Request) {
			if err := e.feeds.Remove(r.Context(), providerID, f.ID); err != nil {
				t.Errorf("remove during the poll: %v", err)
			}
			w.Write(readFeed(t, "google.ics"))
		})
		f = e.add(t, "/gone.ics", "")
		if r := e.round(t); r.Polled != 1 || r.Failed != 1 || r.Rows != 0 {
			t.Fatalf("round = %+v, want the outcome refused", r)
		}
		if got, _ := e.busy(t); len(got) != 0 {
			t.Fatalf("busy times of a removed feed:\n%s", formatBusy(got))
		}
	})
}

// TestSupplyUnsubscribes: a calendar the supply file no longer names is
// unsubscribed at the next import with its busy times, in one transaction
// that moves the calendar revision, but only if a supply file added it: a
// calendar the provider added stays, even one a file named meanwhile.
func TestSupplyUnsubscribes(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		e := newSyncEnv(t, db)
		e.server.set("/a.ics", readFeed(t, "outlook.ics"))
		e.server.set("/b.ics", readFeed(t, "google.ics"))
		e.server.set("/own.ics", readFeed(t, "icloud.ics"))
		file := func(paths ...string) []bokat.ProviderSupply {
			p := bokat.ProviderSupply{Provider: bokat.Provider{ID: providerID}}
			for _, path := range paths {
				p.Calendars = append(p.Calendars, bokat.CalendarSubscription{URL: feedURL(path)})
			}
			return []bokat.ProviderSupply{p}
		}
		ids := func(fs []calsync.Feed) []string {
			var out []string
			for _, f := range fs {
				out = append(out, f.ID)
			}
			return out
		}
		res, err := e.feeds.ApplySupply(ctx, file("/a.ics", "/b.ics"))
		if err != nil || res.Added != 2 {
			t.Fatalf("first file = %+v, %v", res, err)
		}
		a, b := res.Changes[0].Added[0], res.Changes[0].Added[1]
		own, err := e.feeds.Add(ctx, providerID, feedURL("/own.ics"), "", calsync.SourceProvider)
		if err != nil {
			t.Fatal(err)
		}
		if r := e.round(t); r.Changed != 3 {
			t.Fatalf("round = %+v, want 3 feeds synced", r)
		}
		_, rev1 := e.busy(t)

		// The file drops b and names the provider's own calendar.
		res, err = e.feeds.ApplySupply(ctx, file("/a.ics", "/own.ics"))
		if err != nil || res.Added != 0 || res.Removed != 1 || res.Kept != 2 || len(res.Changes) != 1 ||
			!slices.Equal(ids(res.Changes[0].Removed), []string{b.ID}) || len(res.Changes[0].Own) != 0 {
			t.Fatalf("file without b = %+v, %v; want b removed, a and own kept", res, err)
		}
		got, rev2 := e.busy(t)
		if rev2 <= rev1 || contains(got, googleBusy[0]) || !contains(got, outlookBusy[0]) || !contains(got, icloudBusy[0]) {
			t.Fatalf("after b's removal: revision %d (was %d), busy\n%s\nwant b's busy times gone, the others kept", rev2, rev1, formatBusy(got))
		}

		// A file naming no calendar: a goes, the provider's own stays.
		res, err = e.feeds.ApplySupply(ctx, file())
		if err != nil || res.Removed != 1 || !slices.Equal(ids(res.Changes[0].Removed), []string{a.ID}) ||
			!slices.Equal(ids(res.Changes[0].Own), []string{own.ID}) || res.Changes[0].Own[0].URL != "" {
			t.Fatalf("file without calendars = %+v, %v; want a removed, own kept", res, err)
		}
		feeds, err := e.feeds.List(ctx, providerID)
		if err != nil || !slices.Equal(ids(feeds), []string{own.ID}) {
			t.Fatalf("feeds left = %v, %v; want the provider's own", ids(feeds), err)
		}
		got, rev3 := e.busy(t)
		want := expected(t, e.clock.Now(), map[string]calsync.Rule{"icloud.ics": ""})
		if rev3 <= rev2 || formatBusy(got) != formatBusy(want) {
			t.Fatalf("after a's removal: revision %d (was %d), busy\n%s\nwant the provider's own only\n%s", rev3, rev2, formatBusy(got), formatBusy(want))
		}
		if res, err = e.feeds.ApplySupply(ctx, file()); err != nil || res.Changed() {
			t.Fatalf("the same file again = %+v, %v; want nothing changed", res, err)
		}
		if _, rev := e.busy(t); rev != rev3 {
			t.Errorf("an unchanged file moved the calendar revision: %d, was %d", rev, rev3)
		}
	})
}
