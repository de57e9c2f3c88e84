package httpapi

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"bokat"
	"bokat/internal/notify"
	"bokat/internal/notify/notifytest"
	"bokat/internal/ratelimit"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/telemetry"
)

// TestLogsCarryNoContactDataOrSecrets runs a flow through the API and the
// notification worker, with delivery failures whose server replies echo the
// recipient, and a sign-in code, all logging into one buffer, then searches
// the log for every distinctive personal value and secret used.
func TestLogsCarryNoContactDataOrSecrets(t *testing.T) {
	t.Parallel()
	const (
		name          = "Märta Quistgaard-Lindholm"
		email         = "marta.qlx.5521@kundpost.example"
		phone         = "+46 73 555 48 21"
		address       = "Vindragarvägen 9, 117 50 Stockholm"
		providerEmail = "uppdrag.9930@elfirma.example"
		providerPhone = "+46 31 555 770 12"
		signInCode    = "590317"
		traceparent   = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	)
	clk := newTestClock()
	db := sqlstoretest.Open(t, sqlstore.SQLite)
	m := telemetry.NewMetrics(clk.Now)
	e := newTestEnv(t, db, withLimits(ratelimit.NewMemory(ratelimit.MemoryOptions{Now: clk.Now}), smallLimits(2, 2, 2)),
		withMetrics(m), classRoutes())
	log := e.srv.log

	// API traffic: valid, invalid and rate-limited credentials.
	bad := "bkp_" + strings.Repeat("Z", 43)
	for i := 0; i < 3; i++ {
		e.do(request{Method: "GET", Path: "/v1/bookings/b1", Header: map[string]string{"Authorization": "Bearer " + e.token, "traceparent": traceparent}, NoValidate: true})
	}
	e.do(request{Method: "GET", Path: "/v1/bookings/b1", Header: bearer(bad), NoValidate: true})
	e.do(request{Method: "GET", Path: "/v1/bookings/b1", Header: map[string]string{"X-Service-Requests-Token": bad}, NoValidate: true})
	e.do(request{Method: "GET", Path: "/readyz", NoValidate: true})
	e.do(request{Method: "GET", Path: "/metrics", NoValidate: true})

	// Notifications: the customer's goes through, the provider's is refused
	// with a reply that repeats the address and phone number.
	srv := notifytest.NewServer(t, notifytest.Options{})
	mailer, err := notify.NewMailer(notify.MailerConfig{SMTPURL: srv.URL(false), From: "Bokat <bokning@bokat.example>",
		TLSConfig: srv.ClientTLS(), Logger: log, Now: clk.Now, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	bookings := notifytest.NewTableBookings(t, db)
	b := notify.Booking{ID: "bk_logtest", Status: "confirmed", ServiceLabelSV: "Byte av elcentral", ProviderName: "Elfirman AB",
		ProviderEmail: providerEmail, ProviderPhone: providerPhone, CustomerName: name, CustomerEmail: email, CustomerPhone: phone,
		ServiceAddress: address, SlotStart: clk.Now().Add(48 * time.Hour), SlotEnd: clk.Now().Add(50 * time.Hour), PriceSEK: 2400, Locale: "sv-SE"}
	bookings.Put(t, b)
	w, err := notify.NewWorker(notify.WorkerConfig{Store: bookings.Store(), Bookings: bookings, Sender: mailer, Organizer: mailer.FromAddress(), UIDDomain: "api.bokat.example",
		Logger: log, Now: clk.Now, Outcomes: m, Backoff: []time.Duration{time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := bokat.WithRequestIDs(context.Background(), bokat.RequestIDs{APIRequestID: "0190d7a4-0000-7000-8000-0000000000aa", TraceID: "0af7651916cd43dd8448eb211c80319c"})
	notifytest.QueueJobs(t, ctx, db, b.ID, bokat.EventBookingConfirmed, clk.Now)
	srv.Reject(&smtp.SMTPError{Code: 452, EnhancedCode: smtp.EnhancedCode{4, 2, 2}, Message: "mailbox " + providerEmail + " full; call " + providerPhone})
	if _, err := w.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Minute)
	srv.Reject(&smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such user " + email})
	if _, err := w.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	srv.Reject(nil)
	if err := mailer.SendSignInCode(context.Background(), email, signInCode, "sv-SE"); err != nil {
		t.Fatal(err)
	}

	logs := e.logs.String()
	for _, secret := range []string{name, "Quistgaard", email, "marta.qlx", phone, "555 48 21", address, "Vindragarvägen",
		providerEmail, providerPhone, "555 770 12", e.token, e.token[4:], bad, signInCode, notifytest.Password} {
		if strings.Contains(logs, secret) {
			t.Errorf("the log holds %q", secret)
		}
	}
	// The log is still useful: ids tie requests and jobs together.
	for _, want := range []string{
		`"trace_id":"0af7651916cd43dd8448eb211c80319c"`,
		`"route":"/v1/bookings/{booking_id}"`,
		`"status":429`,
		`"msg":"notification attempt failed; retry scheduled"`,
		`"msg":"notification failed for good"`,
		`"error":"smtp: sending SMTP RCPT TO command: 550 5.1.1"`,
		`"booking_id":"bk_logtest"`,
		`"kind":"sign_in_code"`,
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("the log lacks %s", want)
		}
	}
	if testing.Verbose() {
		t.Log(logs)
	}
}
