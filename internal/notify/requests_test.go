package notify_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
	"github.com/google/uuid"

	"bokat"
	"bokat/internal/catalog"
	"bokat/internal/followup"
	"bokat/internal/idem"
	"bokat/internal/notify"
	"bokat/internal/notify/notifytest"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/supply"
)

// requestIDs are the ids of the API call that creates the test requests.
// The follow-up requests are the worker's source of request messages.
var _ notify.RequestSource = (*followup.Service)(nil)

var requestIDs = bokat.RequestIDs{APIRequestID: "0190d7a4-0000-7000-8000-00000000a11d", TraceID: "4bf92f3577b34da6a3ce929d0e0e4736"}

// demoProviders returns the demo supply's providers by id, after importing
// it into the env's store.
func (e *env) demoProviders(tb testing.TB) map[string]bokat.ProviderSupply {
	tb.Helper()
	cat, err := catalog.Load()
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := supply.Import(context.Background(), sqlstore.Bind[supply.Tx](e.db), cat, supply.DemoName, supply.Demo(), e.clk.Now()); err != nil {
		tb.Fatal(err)
	}
	list, err := supply.Parse(supply.DemoName, supply.Demo(), cat)
	if err != nil {
		tb.Fatal(err)
	}
	out := map[string]bokat.ProviderSupply{}
	for _, p := range list {
		out[p.ID] = p
	}
	return out
}

// faucetRequest is a consented request for a faucet job at streetAddress
// (postcode 117 28, Stockholm).
func faucetRequest() followup.Input {
	budget := int64(25000)
	return followup.Input{
		VerticalID: "vvs", JobTypeID: "install_faucet",
		Description:      "Byta blandaren i köket.\nDen gamla läcker vid foten när man drar i spaken.",
		Customer:         followup.Customer{Name: customerName, Phone: customerPhone, Email: customerEmail},
		Location:         followup.Location{Address: streetAddress},
		Timing:           followup.Timing{PreferredTimeText: "nästa vecka, helst förmiddag", Urgency: "inte akut"},
		BudgetSEK:        &budget,
		Details:          map[string]any{"product_on_site": true, "fixture": "köksblandare", "floor": 3},
		CustomerNextStep: "home_visit",
		ConsentConfirmed: true,
	}
}

// createRequest creates the request as the API does (inside a request
// context) and returns it with the id of its provider notification job.
func (e *env) createRequest(tb testing.TB, in followup.Input) (followup.Request, string) {
	tb.Helper()
	ctx := bokat.WithRequestIDs(context.Background(), requestIDs)
	var created followup.Request
	p := bokat.Principal{Kind: bokat.PrincipalPartner, ClientID: "pc_test"}
	_, _, err := e.requests.Create(ctx, p, in, idem.Key{Owner: p.OwnerKey(), Operation: "requests.create", Key: uuid.NewString()},
		"fingerprint", func(r followup.Request) (idem.Outcome, error) {
			created = r
			return idem.Outcome{Body: []byte(`{}`)}, nil
		})
	if err != nil {
		tb.Fatal(err)
	}
	var jobID string
	err = e.db.R().QueryRowContext(ctx, `SELECT id FROM notification_jobs WHERE request_id = $1`, created.ID).Scan(&jobID)
	if err != nil {
		tb.Fatalf("the request's notification job: %v", err)
	}
	e.clk.Advance(time.Millisecond)
	return created, jobID
}

// candidateStatuses returns the stored delivery status of each candidate.
func (e *env) candidateStatuses(tb testing.TB, requestID string) map[string]string {
	tb.Helper()
	r, err := e.db.FollowUpRequest(context.Background(), requestID)
	if err != nil {
		tb.Fatal(err)
	}
	out := map[string]string{}
	for _, c := range r.Candidates {
		out[c.ProviderID] = c.NotificationStatus
	}
	return out
}

func candidateIDs(r followup.Request) []string {
	var ids []string
	for _, c := range r.Candidates {
		ids = append(ids, c.ProviderID)
	}
	slices.Sort(ids)
	return ids
}

// assertNoProviderContact fails when text holds any provider's e-mail or phone.
func assertNoProviderContact(tb testing.TB, what, text string, providers map[string]bokat.ProviderSupply) {
	tb.Helper()
	for _, p := range providers {
		for _, secret := range []string{p.Email, p.Phone} {
			if secret != "" && strings.Contains(text, secret) {
				tb.Errorf("%s holds %s's contact data %q", what, p.ID, secret)
			}
		}
	}
}

func TestFollowUpRequestGoesToEveryCandidateProvider(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newEnv(t, db)
		providers := e.demoProviders(t)
		req, jobID := e.createRequest(t, faucetRequest())
		wantIDs := []string{"prv_sthlm_vvs_1", "prv_sthlm_vvs_2"}
		if got := candidateIDs(req); !slices.Equal(got, wantIDs) {
			t.Fatalf("candidates = %v, want the Stockholm plumbers %v", got, wantIDs)
		}

		if n := e.runOnce(t); n != 1 {
			t.Fatalf("claimed %d jobs, want the request's one", n)
		}
		msgs := e.smtp.Wait(t, 2)
		for _, r := range msgs {
			if len(r.To) != 1 || r.Authenticated != notifytest.Username || !r.TLS || r.From != organizer {
				t.Errorf("envelope to %v from %s (tls %v, auth %q): want one recipient each, over STARTTLS and AUTH", r.To, r.From, r.TLS, r.Authenticated)
			}
		}
		for _, id := range wantIDs {
			p := providers[id]
			m := received(t, msgs, p.Email)
			if len(m.To) != 1 || m.To[0].Name != p.Name || m.From.Address != organizer {
				t.Errorf("%s: To %v From %v", id, m.To, m.From)
			}
			if m.Subject != "Ny förfrågan: Montering av blandare i 117 28" {
				t.Errorf("%s: subject %q", id, m.Subject)
			}
			contains(t, id+" message", strings.ReplaceAll(m.Text, "\r\n", "\n"),
				"Hej "+p.Name,
				"det här är en förfrågan, inte en bokning", "Kontakta kunden direkt",
				"Jobb: Montering av blandare (VVS)",
				"  Byta blandaren i köket.\n  Den gamla läcker vid foten",
				"Adress: "+streetAddress, "Postnummer: 117 28",
				"Önskad tid: nästa vecka, helst förmiddag", "Hur brådskande: inte akut",
				"Budget: 25 000 kr", "Kundens önskemål: kunden önskar ett hembesök",
				"  fixture: köksblandare\n  floor: 3\n  product_on_site: ja\n",
				"Kund: "+customerName, "Telefon: "+customerPhone, "E-post: "+customerEmail,
				"Förfrågan: "+req.ID, "Skickad: 2026-02-27 15:05 (svensk tid)")
			if len(m.Attachments) != 0 || m.CalendarPart != nil {
				t.Errorf("%s: a request carries no invitation; attachments %v", id, keys(m.Attachments))
			}
			// A provider sees the customer, never the other providers.
			for _, other := range wantIDs {
				if other != id && (strings.Contains(m.Text, providers[other].Email) || strings.Contains(m.Text, providers[other].Name)) {
					t.Errorf("%s's message names %s", id, other)
				}
			}
		}
		s := e.job(t, jobID)
		if s.Status != bokat.NotificationSent || s.Attempts != 1 || s.LastError != "" || s.Escalated || s.TraceID != requestIDs.TraceID {
			t.Errorf("job = %+v, want sent after one attempt", s)
		}
		if got := e.candidateStatuses(t, req.ID); got["prv_sthlm_vvs_1"] != "sent" || got["prv_sthlm_vvs_2"] != "sent" {
			t.Errorf("candidate statuses = %v, want both sent", got)
		}
		var notified int
		if err := db.R().QueryRowContext(context.Background(),
			`SELECT COUNT(*) FROM follow_up_request_candidates WHERE request_id = $1 AND notified_at = $2`,
			req.ID, sqlstore.Millis(e.clk.Now())).Scan(&notified); err != nil || notified != 2 {
			t.Errorf("candidates with notified_at = now: %d (%v), want 2", notified, err)
		}
		if got := counter(t, e.metrics, "bokat_notifications_total", map[string]string{"recipient": "provider", "result": "sent"}); got != 1 {
			t.Errorf("provider sent counter = %v, want 1", got)
		}

		// Nothing is sent twice, and nothing is raised for a request.
		e.clk.Advance(time.Hour)
		if n := e.runOnce(t); n != 0 || len(e.smtp.Messages()) != 2 || len(e.follow.got()) != 0 {
			t.Errorf("a later pass claimed %d jobs; %d messages, %d escalations; want 0, 2, 0", n, len(e.smtp.Messages()), len(e.follow.got()))
		}
		logs := e.logs.String()
		assertCleanLogs(t, logs)
		assertNoProviderContact(t, "the log", logs, providers)
		for _, want := range []string{`"request_id":"` + req.ID + `"`, `"provider_id":"prv_sthlm_vvs_1"`, "follow-up request sent to its providers"} {
			if !strings.Contains(logs, want) {
				t.Errorf("the log lacks %s", want)
			}
		}
	})
}

func TestFollowUpRequestRetriesThenFailsWhenTheMailServerRefuses(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newEnv(t, db)
		providers := e.demoProviders(t)
		// The refusal echoes contact data: none of it may be stored or logged.
		e.smtp.Reject(&smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0},
			Message: "mailbox " + providers["prv_sthlm_vvs_1"].Email + " busy, call " + customerPhone})
		req, jobID := e.createRequest(t, faucetRequest())

		backoff := notify.DefaultBackoff()
		waits := append([]time.Duration{0}, backoff...)
		for i, wait := range waits {
			attempt := i + 1
			if wait > 0 {
				e.clk.Advance(wait - time.Second)
				if n := e.runOnce(t); n != 0 {
					t.Fatalf("attempt %d: claimed %d jobs a second early", attempt, n)
				}
				e.clk.Advance(time.Second)
			}
			if n := e.runOnce(t); n != 1 {
				t.Fatalf("attempt %d: claimed %d jobs, want 1", attempt, n)
			}
			s := e.job(t, jobID)
			if s.Attempts != attempt || !strings.Contains(s.LastError, "451 4.3.0") || !strings.Contains(s.LastError, "(2 of 2 providers not reached)") {
				t.Fatalf("after attempt %d: %+v", attempt, s)
			}
			if attempt <= len(backoff) {
				if s.Status != bokat.NotificationPending || !s.NextAttemptAt.Equal(e.clk.Now().Add(backoff[attempt-1])) {
					t.Fatalf("after attempt %d: %+v, want pending until +%s", attempt, s, backoff[attempt-1])
				}
				if got := e.candidateStatuses(t, req.ID); got["prv_sthlm_vvs_1"] != "pending" || got["prv_sthlm_vvs_2"] != "pending" {
					t.Fatalf("after attempt %d: candidates %v, want pending", attempt, got)
				}
			}
		}
		s := e.job(t, jobID)
		if s.Status != bokat.NotificationFailed || s.Attempts != 6 || !strings.Contains(s.LastError, "after 6 attempts") || s.Escalated {
			t.Errorf("job = %+v, want failed after 6 attempts, not escalated", s)
		}
		for _, secret := range []string{"busy", customerPhone, "@"} {
			if strings.Contains(s.LastError, secret) {
				t.Errorf("last_error %q holds %q", s.LastError, secret)
			}
		}
		if got := e.candidateStatuses(t, req.ID); got["prv_sthlm_vvs_1"] != "failed" || got["prv_sthlm_vvs_2"] != "failed" {
			t.Errorf("candidates = %v, want both failed", got)
		}
		if got := e.smtp.RcptAttempts(); got != 12 || len(e.smtp.Messages()) != 0 {
			t.Errorf("RCPT commands %d, messages %d; want 12 (6 per provider) and 0", got, len(e.smtp.Messages()))
		}
		// A request has no booking: no booking.provider_action_required, and
		// later passes neither fail nor send.
		e.smtp.Reject(nil)
		e.clk.Advance(24 * time.Hour)
		if n := e.runOnce(t); n != 0 || len(e.follow.got()) != 0 || len(e.smtp.Messages()) != 0 {
			t.Errorf("after giving up: %d claimed, escalations %v, %d messages", n, e.follow.got(), len(e.smtp.Messages()))
		}
		if got := counter(t, e.metrics, "bokat_notifications_total", map[string]string{"recipient": "provider", "result": "failed"}); got != 1 {
			t.Errorf("provider failed counter = %v, want 1", got)
		}
		logs := e.logs.String()
		assertCleanLogs(t, logs)
		assertNoProviderContact(t, "the log", logs, providers)
	})
}

func TestFollowUpRequestRetriesOnlyTheProvidersNotReached(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// refusal of prv_sthlm_vvs_1's address on the first attempt
		refusal    *smtp.SMTPError
		withdrawn  bool // prv_sthlm_vvs_1 withdrawn from the supply before sending
		wantStatus string
		wantError  string
		// statuses of prv_sthlm_vvs_1 and _2 after the first attempt, and
		// messages received by then
		first    [2]string
		firstMsg int
		// after a minute, with the server accepting everything
		second    [2]string
		secondMsg int
		secondJob string
	}{
		{name: "temporary refusal of one", refusal: &smtp.SMTPError{Code: 452, EnhancedCode: smtp.EnhancedCode{4, 2, 2}, Message: "over quota"},
			wantStatus: "pending", wantError: "452 4.2.2 (1 of 2 providers not reached)",
			first: [2]string{"pending", "sent"}, firstMsg: 1, second: [2]string{"sent", "sent"}, secondMsg: 2, secondJob: "sent"},
		{name: "permanent refusal of one", refusal: &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such user"},
			wantStatus: "failed", wantError: "550 5.1.1 (1 of 2 providers not reached)",
			first: [2]string{"failed", "sent"}, firstMsg: 1, second: [2]string{"failed", "sent"}, secondMsg: 1, secondJob: "failed"},
		{name: "one withdrawn", withdrawn: true, wantStatus: "sent",
			first: [2]string{"skipped", "sent"}, firstMsg: 1, second: [2]string{"skipped", "sent"}, secondMsg: 1, secondJob: "sent"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, sqlstoretest.Open(t, sqlstore.SQLite))
			providers := e.demoProviders(t)
			one, two := providers["prv_sthlm_vvs_1"], providers["prv_sthlm_vvs_2"]
			req, jobID := e.createRequest(t, faucetRequest())
			if tc.refusal != nil {
				e.smtp.RejectRecipient(one.Email, tc.refusal)
			}
			if tc.withdrawn {
				cat, _ := catalog.Load()
				file := strings.Replace(string(supply.Demo()), "    name: "+one.Name+"\n", "    name: "+one.Name+"\n    active: false\n", 1)
				if _, err := supply.Import(context.Background(), sqlstore.Bind[supply.Tx](e.db), cat, "demo.yaml", []byte(file), e.clk.Now()); err != nil {
					t.Fatal(err)
				}
			}
			statuses := func() [2]string {
				got := e.candidateStatuses(t, req.ID)
				return [2]string{got[one.ID], got[two.ID]}
			}

			e.runOnce(t)
			s := e.job(t, jobID)
			if s.Status != tc.wantStatus || !strings.Contains(s.LastError, tc.wantError) {
				t.Errorf("after the first attempt the job is %+v, want %s with %q", s, tc.wantStatus, tc.wantError)
			}
			if got := statuses(); got != tc.first {
				t.Errorf("after the first attempt candidates are %v, want %v", got, tc.first)
			}
			if n := len(e.smtp.Messages()); n != tc.firstMsg {
				t.Errorf("after the first attempt %d messages, want %d", n, tc.firstMsg)
			}
			received(t, e.smtp.Messages(), two.Email)

			e.smtp.RejectRecipient(one.Email, nil)
			e.clk.Advance(time.Minute)
			e.runOnce(t)
			if got := statuses(); got != tc.second {
				t.Errorf("after a minute candidates are %v, want %v", got, tc.second)
			}
			msgs := e.smtp.Messages()
			if len(msgs) != tc.secondMsg {
				t.Errorf("after a minute %d messages, want %d", len(msgs), tc.secondMsg)
			}
			if tc.secondMsg == 2 {
				received(t, msgs[1:], one.Email) // the retry wrote to the one not reached only
			}
			if s := e.job(t, jobID); s.Status != tc.secondJob {
				t.Errorf("after a minute the job is %+v, want %s", s, tc.secondJob)
			}
			if len(e.follow.got()) != 0 {
				t.Errorf("escalations %v for a request", e.follow.got())
			}
			assertNoProviderContact(t, "the log", e.logs.String(), providers)
		})
	}
}

func TestWorkerWithoutBookingsLeavesBookingJobsAlone(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newEnv(t, db)
		e.demoProviders(t)
		cJob, pJob := e.queue(t, "bk_waiting", bokat.EventBookingConfirmed)
		_, reqJob := e.createRequest(t, faucetRequest())
		w, err := notify.NewWorker(notify.WorkerConfig{Store: sqlstore.Bind[notify.Tx](db), Requests: e.requests, Sender: e.mailer,
			Organizer: e.mailer.FromAddress(), Logger: discardLogger(), Now: e.clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		if n, err := w.RunOnce(context.Background()); err != nil || n != 1 {
			t.Fatalf("RunOnce = %d, %v; want the request's job only", n, err)
		}
		if s := e.job(t, reqJob); s.Status != bokat.NotificationSent {
			t.Errorf("request job = %+v", s)
		}
		for _, id := range []string{cJob, pJob} {
			if s := e.job(t, id); s.Status != bokat.NotificationPending || s.Attempts != 0 {
				t.Errorf("booking job %s = %+v, want untouched", id, s)
			}
		}
		// A worker with both sources takes them.
		if n := e.runOnce(t); n != 2 {
			t.Errorf("the full worker claimed %d, want the 2 booking jobs", n)
		}
		if _, err := notify.NewWorker(notify.WorkerConfig{Store: sqlstore.Bind[notify.Tx](db), Sender: e.mailer, Organizer: "x@y.example", Logger: discardLogger()}); err == nil {
			t.Error("a worker with neither bookings nor requests was accepted")
		}
		if _, err := notify.NewWorker(notify.WorkerConfig{Store: sqlstore.Bind[notify.Tx](db), Bookings: e.bookings, Sender: e.mailer, Organizer: "x@y.example", Logger: discardLogger()}); err == nil {
			t.Error("a booking worker without a UID domain was accepted")
		}
	})
}

func TestFollowUpRequestEdgeCases(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sqlstoretest.Open(t, sqlstore.SQLite))
	e.demoProviders(t)
	ctx := context.Background()
	queue := func(requestID, eventType string) string {
		t.Helper()
		id := uuid.NewString()
		err := e.db.InTx(ctx, func(tx *sqlstore.Tx) error {
			return tx.InsertNotificationJob(ctx, bokat.NotificationJob{ID: id, RequestID: requestID, EventType: eventType,
				Recipient: bokat.RecipientProvider, Status: bokat.NotificationPending, NextAttemptAt: e.clk.Now(), CreatedAt: e.clk.Now()})
		})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	// Names and details the message must render plainly.
	in := faucetRequest()
	in.Customer = followup.Customer{FirstName: "Ingrid", LastName: "Zetterqvist-Blom", Phone: customerPhone, Email: customerEmail}
	in.Location = followup.Location{Input: "nära Zinkensdamm, 117 28"}
	in.BudgetSEK = nil
	in.Details = map[string]any{"nested": map[string]any{"a": 1}, "rooms": []any{"kök", "bad"}, "note": strings.Repeat("x", 300)}
	req, _ := e.createRequest(t, in)
	gone := queue("req_does_not_exist", followup.EventRequestCreated)
	other := queue(req.ID, "request.updated")

	e.runOnce(t)
	if s := e.job(t, gone); s.Status != bokat.NotificationFailed || s.LastError != "request not found" {
		t.Errorf("job of an unknown request = %+v", s)
	}
	if s := e.job(t, other); s.Status != bokat.NotificationSkipped || !strings.Contains(s.LastError, "no message for event type request.updated") {
		t.Errorf("job of an unknown event = %+v", s)
	}
	msgs := e.smtp.Wait(t, 2)
	m := notifytest.Parse(t, msgs[0].Data)
	contains(t, "message", strings.ReplaceAll(m.Text, "\r\n", "\n"), "Kund: Ingrid Zetterqvist-Blom", "Plats enligt kunden: nära Zinkensdamm, 117 28",
		"Postnummer: 117 28", "  rooms: kök, bad\n", "  note: "+strings.Repeat("x", 200)+"…\n")
	for _, absent := range []string{"Budget:", "nested", "Adress:"} {
		if strings.Contains(m.Text, absent) {
			t.Errorf("message holds %q:\n%s", absent, m.Text)
		}
	}
}

// A worker that polls hourly still delivers at once: the request's commit
// wakes it through the Waker it shares with the follow-up service.
func TestWakerWakesAnIdleWorkerAfterCommit(t *testing.T) {
	t.Parallel()
	db := sqlstoretest.Open(t, sqlstore.SQLite)
	e := newEnv(t, db)
	e.demoProviders(t)
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	wake := notify.NewWaker()
	e.requests = followup.New(sqlstore.Bind[followup.Tx](db), cat, e.clk.Now, wake.Wake)
	w, err := notify.NewWorker(notify.WorkerConfig{Store: sqlstore.Bind[notify.Tx](db), Requests: e.requests, Sender: e.mailer,
		Organizer: e.mailer.FromAddress(), Logger: discardLogger(), Now: e.clk.Now, Poll: time.Hour, Waker: wake})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	// The first job may be taken by the worker's first pass; once it is
	// sent the worker is idle, so the second is sent only if its commit
	// woke it.
	for range 2 {
		_, job := e.createRequest(t, faucetRequest())
		deadline := time.Now().Add(10 * time.Second)
		for e.job(t, job).Status != bokat.NotificationSent {
			if time.Now().After(deadline) {
				t.Fatalf("job %s not sent: %+v", job, e.job(t, job))
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}
