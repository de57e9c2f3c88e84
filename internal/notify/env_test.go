package notify_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	dto "github.com/prometheus/client_model/go"

	"bokat"
	"bokat/internal/catalog"
	"bokat/internal/clocktest"
	"bokat/internal/followup"
	"bokat/internal/logtest"
	"bokat/internal/notify"
	"bokat/internal/notify/notifytest"
	"bokat/internal/sqlstore"
	"bokat/internal/telemetry"
)

// followUps records booking.provider_action_required requests.
type followUps struct {
	mu       sync.Mutex
	bookings []string
	fail     error
}

func (f *followUps) ProviderActionRequired(_ context.Context, bookingID string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return f.fail
	}
	f.bookings = append(f.bookings, bookingID)
	return nil
}

func (f *followUps) got() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.bookings...)
}

// Distinctive contact data: none of it may ever appear in a log.
const (
	customerName  = "Ingrid Zetterqvist-Blom"
	customerEmail = "ingrid.zq.7731@kund.example"
	customerPhone = "+46 70 555 19 84"
	providerEmail = "jobb.4471@rormokare.example"
	providerPhone = "+46 8 555 602 77"
	streetAddress = "Hornsgatan 172, 117 28 Stockholm"
)

// sampleBooking is a confirmed booking on Monday 2 March 2026, 09:00–11:00
// Stockholm time (08:00–10:00 UTC).
func sampleBooking(locale string) notify.Booking {
	return notify.Booking{
		ID:             "bk_" + uuid.NewString()[:8],
		Status:         "confirmed",
		ServiceLabelSV: "Byte av köksblandare",
		ServiceLabelEN: "Kitchen faucet replacement",
		ProviderName:   "Rörkraft Söder AB",
		ProviderEmail:  providerEmail,
		ProviderPhone:  providerPhone,
		CustomerName:   customerName,
		CustomerEmail:  customerEmail,
		CustomerPhone:  customerPhone,
		ServiceAddress: streetAddress,
		SlotStart:      time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC),
		SlotEnd:        time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC),
		PriceSEK:       1495,
		TermsVersion:   "fixed_price_terms_v1:vvs_install_faucet_standard",
		TermsURL:       "https://bokat.example/terms/vvs_install_faucet_standard",
		Locale:         locale,
		ConfirmedAt:    time.Date(2026, 2, 27, 14, 3, 0, 0, time.UTC),
	}
}

// env is a worker on a real store, sending through a real SMTP server.
type env struct {
	db       *sqlstore.DB
	clk      *clocktest.Clock
	smtp     *notifytest.Server
	bookings *notifytest.TableBookings
	requests *followup.Service
	follow   *followUps
	metrics  *telemetry.Metrics
	logs     *logtest.Buffer
	worker   *notify.Worker
	mailer   *notify.Mailer
}

const organizer = "bokning@bokat.example"

// uidDomain qualifies invitation UIDs: the host of the service's base URL
// (as in the provider calendar feed), deliberately not the sender's domain.
const uidDomain = "api.bokat.example"

func newEnv(tb testing.TB, db *sqlstore.DB) *env {
	tb.Helper()
	e := &env{
		db:   db,
		clk:  clocktest.New(time.Date(2026, 2, 27, 14, 5, 0, 0, time.UTC)),
		smtp: notifytest.NewServer(tb, notifytest.Options{}),
		logs: &logtest.Buffer{},
	}
	e.bookings = notifytest.NewTableBookings(tb, db)
	cat, err := catalog.Load()
	if err != nil {
		tb.Fatal(err)
	}
	e.requests = followup.New(sqlstore.Bind[followup.Tx](db), cat, e.clk.Now, nil)
	e.follow = &followUps{}
	e.metrics = telemetry.NewMetrics(e.clk.Now)
	log := slog.New(slog.NewJSONHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e.mailer, err = notify.NewMailer(notify.MailerConfig{
		SMTPURL: e.smtp.URL(false), From: "Bokat <" + organizer + ">", Logger: log, Now: e.clk.Now,
		TLSConfig: e.smtp.ClientTLS(), Timeout: time.Minute,
	})
	if err != nil {
		tb.Fatal(err)
	}
	e.worker, err = notify.NewWorker(notify.WorkerConfig{
		Store: e.bookings.Store(), Bookings: e.bookings, Requests: e.requests, FollowUp: e.follow, Sender: e.mailer, Organizer: e.mailer.FromAddress(),
		UIDDomain: uidDomain,
		Logger:    log, Now: e.clk.Now, Outcomes: e.metrics,
	})
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

// queue writes an outbox event and the customer and provider jobs for it,
// as the booking code does, inside a request context; it returns the job
// ids (customer, provider).
func (e *env) queue(tb testing.TB, bookingID string, ev bokat.EventType) (customerJob, providerJob string) {
	tb.Helper()
	ctx := bokat.WithRequestIDs(context.Background(), bokat.RequestIDs{
		APIRequestID: "0190d7a4-0000-7000-8000-00000000a11d", TraceID: "4bf92f3577b34da6a3ce929d0e0e4736"})
	customerJob, providerJob = notifytest.QueueJobs(tb, ctx, e.db, bookingID, ev, e.clk.Now)
	// Jobs queued later sort later.
	e.clk.Advance(time.Millisecond)
	return customerJob, providerJob
}

func (e *env) runOnce(tb testing.TB) int {
	tb.Helper()
	n, err := e.worker.RunOnce(context.Background())
	if err != nil {
		tb.Fatalf("RunOnce: %v", err)
	}
	return n
}

func (e *env) job(tb testing.TB, id string) notify.JobState {
	tb.Helper()
	s, err := e.db.NotificationJobState(context.Background(), id)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// counter reads a counter of the metrics registry by name and labels.
func counter(tb testing.TB, m *telemetry.Metrics, name string, labels map[string]string) float64 {
	tb.Helper()
	families, err := m.Registry().Gather()
	if err != nil {
		tb.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, metric := range f.GetMetric() {
			if matches(metric, labels) {
				return metric.GetCounter().GetValue()
			}
		}
	}
	return 0
}

func matches(m *dto.Metric, labels map[string]string) bool {
	n := 0
	for _, lp := range m.GetLabel() {
		if v, ok := labels[lp.GetName()]; ok {
			if v != lp.GetValue() {
				return false
			}
			n++
		}
	}
	return n == len(labels)
}

var errFollowUpDown = errors.New("outbox unavailable")

// assertCleanLogs fails when the captured log holds any contact data, and
// checks that notification log lines carry the originating request's ids.
func assertCleanLogs(tb testing.TB, logs string) {
	tb.Helper()
	for _, secret := range []string{customerName, customerEmail, customerPhone, providerEmail, providerPhone, streetAddress,
		"Zetterqvist", "ingrid.zq", "555 19 84", "Hornsgatan", notifytest.Password} {
		if strings.Contains(logs, secret) {
			tb.Errorf("the log holds %q", secret)
		}
	}
	if !strings.Contains(logs, `"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736"`) || !strings.Contains(logs, `"job_id":`) {
		tb.Errorf("notification log lines lack the job and trace ids:\n%s", logs)
	}
}
