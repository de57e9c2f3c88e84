package provider_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"bokat/internal/auth"
	"bokat/internal/catalog"
	"bokat/internal/notify"
	"bokat/internal/provider"
	"bokat/internal/ratelimit"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/web/webtest"
)

// The page tests run the real pages on a real store through real HTTP. The
// only stand-in is the e-mail boundary: webtest.Codes keeps the sign-in
// codes, and a mailbox the invitations.

// mailbox is the e-mail boundary of invitations: it keeps the messages.
type mailbox struct {
	mu   sync.Mutex
	sent []notify.Message
}

func (m *mailbox) Send(_ context.Context, msg notify.Message) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sent = append(m.sent, msg)
	return nil
}

func (m *mailbox) to(email string) []notify.Message {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []notify.Message
	for _, msg := range m.sent {
		if msg.To == email {
			out = append(out, msg)
		}
	}
	return out
}

// pagesEnv is an env with the provider pages served on a loopback port.
type pagesEnv struct {
	*env
	sender *webtest.Codes
	mail   *mailbox
	srv    *httptest.Server
	st     sqlstore.Bound[provider.Tx]
	sup    *provider.Supply
}

// newPagesEnv serves the pages as serve does, with a change of the
// configuration from each of opts.
func newPagesEnv(t testing.TB, db *sqlstore.DB, opts ...func(*provider.PagesConfig)) *pagesEnv {
	t.Helper()
	e := &pagesEnv{env: newEnv(t, db), sender: &webtest.Codes{}, mail: &mailbox{}, st: sqlstore.Bind[provider.Tx](db)}
	hasher, err := auth.NewHasher([]byte("provider-pages-test-pepper-0123456789"))
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	e.sup = provider.NewSupply(sqlstore.Bind[provider.SupplyTx](db), cat, e.clock.Now, slog.New(slog.NewTextHandler(io.Discard, nil)))
	cfg := provider.PagesConfig{
		Supply:  e.sup,
		BaseURL: "http://127.0.0.1", Store: e.st, Hasher: hasher, Sender: e.sender, Mail: e.mail,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: e.clock.Now,
		Limiter: ratelimit.NewMemory(ratelimit.MemoryOptions{Now: e.clock.Now}), Limits: provider.DefaultLimits(),
	}
	for _, o := range opts {
		o(&cfg)
	}
	pages, err := provider.NewPages(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.srv = httptest.NewServer(pages)
	t.Cleanup(e.srv.Close)
	return e
}

// browser is a plain HTTP client of the provider pages with its own
// cookies that does not follow redirects.
func (e *pagesEnv) browser(t testing.TB) *webtest.Client {
	return webtest.NewClient(t, e.srv.URL, "/provider/sign-in")
}

// seed invites an owner and staff to provider A and an owner to B, and
// books one job with each provider, two days ahead.
func (e *pagesEnv) seed(t testing.TB) {
	t.Helper()
	ctx := context.Background()
	start := e.clock.Now().Add(48 * time.Hour)
	sqlstoretest.InsertBookingEntry(t, e.db, providerA, "bk_a_next", start, start.Add(2*time.Hour))
	sqlstoretest.InsertBookingEntry(t, e.db, providerA, "bk_a_past", start.Add(-96*time.Hour), start.Add(-94*time.Hour))
	sqlstoretest.InsertBookingEntry(t, e.db, providerB, "bk_b_next", start, start.Add(2*time.Hour))
	for _, inv := range []struct {
		provider, email string
		role            provider.Role
	}{{providerA, ownerA, provider.Owner}, {providerA, staffA, provider.Staff}, {providerB, ownerB, provider.Owner}} {
		if _, err := e.svc.Invite(ctx, nil, inv.provider, inv.email, inv.role); err != nil {
			t.Fatal(err)
		}
	}
}

const (
	ownerA = "agare@vvs-ett.se"
	staffA = "montor@vvs-ett.se"
	ownerB = "agare@vvs-tva.se"
)

// acknowledged reads who acknowledged a booking, from the store.
func (e *pagesEnv) acknowledged(t *testing.T, bookingID string) (by string, at time.Time, status string) {
	t.Helper()
	var ms *int64
	err := e.db.R().QueryRowContext(context.Background(), `SELECT provider_acknowledged_by, provider_acknowledged_at,
		provider_confirmation_status FROM bookings WHERE id = $1`, bookingID).Scan(&by, &ms, &status)
	if err != nil {
		t.Fatal(err)
	}
	if ms != nil {
		at = time.UnixMilli(*ms).UTC()
	}
	return by, at, status
}

// userID returns the id of the active account of the address.
func (e *pagesEnv) userID(t testing.TB, providerID, email string) string {
	t.Helper()
	users, err := e.st.ProviderUsers(context.Background(), providerID)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range users {
		if u.Email == email {
			return u.ID
		}
	}
	return ""
}
