package operator_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"regexp"
	"sync"
	"testing"
	"time"

	"bokat"
	"bokat/internal/auth"
	"bokat/internal/booking"
	"bokat/internal/catalog"
	"bokat/internal/clocktest"
	"bokat/internal/credentials"
	"bokat/internal/idem"
	"bokat/internal/operator"
	"bokat/internal/ratelimit"
	"bokat/internal/sqlstore"
	"bokat/internal/supply"
	"bokat/internal/web/webtest"
)

// The console's tests run the real pages on a real store of each engine
// with the demo supply, through real HTTP and the real booking lifecycle.
// The only stand-in is the e-mail boundary: webtest.Codes keeps the codes
// it is asked to send.

const (
	operatorEmail = "drift@bokat.example"
	customerEmail = "greta@example.se"
)

var partner = bokat.Principal{Kind: bokat.PrincipalPartner, ClientID: "pc_console"}

type env struct {
	db     *sqlstore.DB
	clock  *clocktest.Clock
	st     sqlstore.Bound[operator.Tx]
	svc    *operator.Service
	search *booking.Search
	life   *booking.Lifecycle
	hasher *auth.Hasher
	sender *webtest.Codes
	srv    *httptest.Server
	woken  int
	mu     sync.Mutex
}

func newEnv(t testing.TB, db *sqlstore.DB, configure ...func(*operator.PagesConfig)) *env {
	t.Helper()
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	// A Monday morning in Stockholm.
	e := &env{db: db, clock: clocktest.New(time.Date(2026, 3, 2, 7, 0, 0, 0, time.UTC)), st: sqlstore.Bind[operator.Tx](db),
		sender: &webtest.Codes{}}
	if _, err := supply.Import(context.Background(), sqlstore.Bind[supply.Tx](db), cat, supply.DemoName, supply.Demo(), e.clock.Now()); err != nil {
		t.Fatal(err)
	}
	keys, err := booking.NewKeyring(booking.Key{ID: "k1", Secret: bytes.Repeat([]byte{7}, 32)})
	if err != nil {
		t.Fatal(err)
	}
	if e.search, err = booking.NewSearch(booking.Config{Catalog: cat, Store: db, Keys: keys, Now: e.clock.Now}); err != nil {
		t.Fatal(err)
	}
	if e.life, err = booking.NewLifecycle(booking.LifecycleConfig{Store: sqlstore.Bind[booking.Tx](db), Catalog: cat, Keys: keys,
		Now: e.clock.Now}); err != nil {
		t.Fatal(err)
	}
	if e.hasher, err = auth.NewHasher([]byte("operator-pages-test-pepper-0123456789")); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := operator.PagesConfig{
		BaseURL: "http://127.0.0.1", Store: e.st, Hasher: e.hasher, Sender: e.sender, Logger: log, Now: e.clock.Now,
		Wake:    func() { e.mu.Lock(); e.woken++; e.mu.Unlock() },
		Mover:   &operator.Mover{Search: e.search, Lifecycle: e.life},
		Limiter: ratelimit.NewMemory(ratelimit.MemoryOptions{Now: e.clock.Now}), Limits: operator.DefaultLimits(),
		Credentials: credentials.New(sqlstore.Bind[credentials.Tx](db), e.hasher, e.clock.Now), Catalog: cat,
	}
	for _, c := range configure {
		c(&cfg)
	}
	pages, err := operator.NewPages(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.svc = pages.Service()
	e.srv = httptest.NewServer(pages)
	t.Cleanup(e.srv.Close)
	return e
}

// book confirms the first option of a faucet job in 113 45 tomorrow for
// the partner, with customerEmail as the customer, and returns the
// booking id.
func (e *env) book(t testing.TB, key string) string {
	t.Helper()
	return e.bookIn(t, context.Background(), partner, key)
}

// bookIn is book for the principal, searching its realm at the clock ctx
// carries (a test owner's, bokat.WithTestClock).
func (e *env) bookIn(t testing.TB, ctx context.Context, partner bokat.Principal, key string) string {
	t.Helper()
	res, err := e.search.Search(ctx, booking.Query{VerticalID: "vvs", JobTypeID: "install_faucet", Postcode: "113 45",
		PreferredTimeText: "i morgon", Locale: "sv-SE", Mode: partner.Realm()})
	if err != nil || len(res.Options) == 0 {
		t.Fatalf("search: %v (%d options, %s)", err, len(res.Options), res.FallbackReason)
	}
	o := res.Options[0]
	in := booking.ConfirmInput{
		OptionID:         o.ID,
		Customer:         bokat.BookingContact{FirstName: "Greta", LastName: "Gåsfot", Phone: "+46701234567", Email: customerEmail},
		ServiceLocation:  booking.Location{Address: "Drottninggatan 1", Postcode: "113 45"},
		ConsentConfirmed: true, TermsAccepted: true, TermsVersion: o.Claims.TermsVersion, TermsAcceptedAt: o.Claims.IssuedAt,
	}
	out, _, err := e.life.Confirm(ctx, partner, in, idem.Key{Owner: partner.OwnerKey(), Operation: booking.OpConfirm, Key: key,
		Mode: partner.Realm()}, "fp-"+key,
		func(b bokat.Booking) (idem.Outcome, error) {
			raw, err := json.Marshal(booking.RecordOf(b))
			return idem.Outcome{Body: raw, ResourceID: b.ID}, err
		})
	if err != nil {
		t.Fatalf("confirm: %v", err)
	}
	return out.ResourceID
}

// events returns the types and payloads of a booking's events, oldest
// first.
func (e *env) events(t testing.TB, bookingID string) (types, payloads []string) {
	t.Helper()
	rows, err := e.db.R().QueryContext(context.Background(), `SELECT event_type, payload FROM outbox_events
		WHERE booking_id = $1 ORDER BY occurred_at, id`, bookingID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var ty, p string
		if err := rows.Scan(&ty, &p); err != nil {
			t.Fatal(err)
		}
		types, payloads = append(types, ty), append(payloads, p)
	}
	return types, payloads
}

// jobs counts a booking's notification jobs.
func (e *env) jobs(t testing.TB, bookingID string) int {
	t.Helper()
	var n int
	if err := e.db.R().QueryRowContext(context.Background(), `SELECT COUNT(*) FROM notification_jobs WHERE booking_id = $1`,
		bookingID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// audit returns the audit entries of an object, newest first.
func (e *env) audit(t testing.TB, kind, id string) []operator.AuditEntry {
	t.Helper()
	a, err := e.st.ConsoleAudit(context.Background(), kind, id, 100)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// invite makes the address an operator.
func (e *env) invite(t testing.TB, email string) operator.Operator {
	t.Helper()
	o, err := e.svc.Invite(context.Background(), operator.CLIActor("drift"), email)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// newClient is a plain HTTP client of the console with its own cookies
// that does not follow redirects.
func newClient(t testing.TB, base string) *webtest.Client {
	return webtest.NewClient(t, base, "/operator/sign-in")
}

// regexpFind returns the first group of the pattern's first match in s.
func regexpFind(tb testing.TB, s, pattern string) string {
	tb.Helper()
	m := regexp.MustCompile(pattern).FindStringSubmatch(s)
	if m == nil {
		tb.Fatalf("no %s in:\n%s", pattern, s)
	}
	return m[1]
}
