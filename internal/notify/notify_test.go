package notify_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"bokat"
	"bokat/internal/clocktest"
	"bokat/internal/notify"
	"bokat/internal/notify/notifytest"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/telemetry"
)

// received finds the message sent to addr among msgs, parsed.
func received(t *testing.T, msgs []notifytest.Received, addr string) notifytest.Message {
	t.Helper()
	for _, r := range msgs {
		for _, to := range r.To {
			if to == addr {
				return notifytest.Parse(t, r.Data)
			}
		}
	}
	t.Fatalf("no message to %s among %d", addr, len(msgs))
	return notifytest.Message{}
}

// invitation parses the .ics attachment of m and checks that the
// text/calendar alternative part carries the same object.
func invitation(t *testing.T, m notifytest.Message, name string) notifytest.Event {
	t.Helper()
	att, ok := m.Attachments[name]
	if !ok {
		t.Fatalf("no attachment %s; attachments: %v", name, keys(m.Attachments))
	}
	if att.ContentType != "text/calendar" {
		t.Errorf("%s Content-Type = %s, want text/calendar", name, att.ContentType)
	}
	if m.CalendarPart == nil || string(m.CalendarPart.Data) != string(att.Data) {
		t.Errorf("the text/calendar alternative part is missing or differs from %s", name)
	}
	for i, line := range strings.SplitAfter(string(att.Data), "\r\n") {
		if line != "" && !strings.HasSuffix(line, "\r\n") {
			t.Errorf("%s line %d does not end in CRLF: %q", name, i+1, line)
		}
		if len(strings.TrimSuffix(line, "\r\n")) > 75 {
			t.Errorf("%s line %d is longer than 75 octets: %q", name, i+1, line)
		}
	}
	ev := notifytest.ParseCalendar(t, att.Data)
	if att.Params["method"] != ev.Method {
		t.Errorf("Content-Type method=%q, calendar METHOD %q", att.Params["method"], ev.Method)
	}
	return ev
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func contains(t *testing.T, what, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, text)
		}
	}
}

func TestConfirmRescheduleCancelMessages(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newEnv(t, db)
		b := sampleBooking("sv-SE")
		e.bookings.Put(t, b)
		wantUID := b.ID + "@" + uidDomain

		// Confirmation.
		cJob, pJob := e.queue(t, b.ID, bokat.EventBookingConfirmed)
		if n := e.runOnce(t); n != 2 {
			t.Fatalf("claimed %d jobs, want 2", n)
		}
		msgs := e.smtp.Wait(t, 2)
		for _, r := range msgs {
			if r.Authenticated != notifytest.Username || !r.TLS {
				t.Errorf("message sent without STARTTLS and AUTH: tls=%v user=%q", r.TLS, r.Authenticated)
			}
			if r.From != organizer {
				t.Errorf("envelope from = %s", r.From)
			}
		}
		cust := received(t, msgs, customerEmail)
		contains(t, "customer confirmation subject", cust.Subject, "Bokningsbekräftelse", "Byte av köksblandare", "måndag 2 mars 2026 kl. 09:00–11:00")
		contains(t, "customer confirmation", cust.Text, "din bokning är bekräftad", "1 495 kr", "Rörkraft Söder AB",
			providerPhone, providerEmail, b.ID, b.TermsVersion, b.TermsURL, streetAddress)
		if cust.To[0].Name != customerName || cust.From.Address != organizer {
			t.Errorf("To = %v, From = %v", cust.To, cust.From)
		}
		ev := invitation(t, cust, "invite.ics")
		if ev.Method != "REQUEST" || ev.UID != wantUID || ev.Sequence != 0 || ev.Status != "CONFIRMED" ||
			!ev.Start.Equal(b.SlotStart) || !ev.End.Equal(b.SlotEnd) || ev.StartRaw != "20260302T080000Z" || ev.EndRaw != "20260302T100000Z" {
			t.Errorf("confirmation invitation = %+v", ev)
		}
		if len(ev.Attendees) != 1 || !strings.EqualFold(ev.Attendees[0], "mailto:"+customerEmail) || !strings.EqualFold(ev.Organizer, "mailto:"+organizer) {
			t.Errorf("attendees %v organizer %q", ev.Attendees, ev.Organizer)
		}
		if ev.Location != streetAddress {
			t.Errorf("LOCATION = %q", ev.Location)
		}

		prov := received(t, msgs, providerEmail)
		contains(t, "provider subject", prov.Subject, "Nytt bokat uppdrag", "Byte av köksblandare")
		contains(t, "provider message", prov.Text, customerName, customerPhone, customerEmail, streetAddress, "1 495 kr", b.ID)
		if pev := invitation(t, prov, "invite.ics"); pev.UID != wantUID || pev.Method != "REQUEST" {
			t.Errorf("provider invitation = %+v", pev)
		}
		for _, id := range []string{cJob, pJob} {
			if s := e.job(t, id); s.Status != bokat.NotificationSent || s.Attempts != 1 || s.LastError != "" ||
				s.APIRequestID == "" || s.TraceID != "4bf92f3577b34da6a3ce929d0e0e4736" {
				t.Errorf("job %s = %+v", id, s)
			}
		}
		if c, p := e.bookings.Statuses(t, b.ID); c != "sent" || p != "sent" {
			t.Errorf("confirmation statuses = %s/%s, want sent/sent", c, p)
		}

		// New time: same UID, higher SEQUENCE, new DTSTART.
		b.SlotStart, b.SlotEnd = b.SlotStart.Add(24*time.Hour), b.SlotEnd.Add(24*time.Hour)
		b.RescheduledAt, b.Sequence = e.clk.Now(), 1
		e.bookings.Put(t, b)
		e.queue(t, b.ID, bokat.EventBookingRescheduled)
		e.runOnce(t)
		msgs = e.smtp.Wait(t, 4)[2:]
		cust = received(t, msgs, customerEmail)
		contains(t, "reschedule subject", cust.Subject, "Ny tid för din bokning", "tisdag 3 mars 2026 kl. 09:00–11:00")
		contains(t, "reschedule message", cust.Text, "Den tidigare tiden gäller inte längre")
		ev = invitation(t, cust, "invite.ics")
		if ev.Method != "REQUEST" || ev.UID != wantUID || ev.Sequence != 1 || ev.StartRaw != "20260303T080000Z" || ev.Status != "CONFIRMED" {
			t.Errorf("reschedule invitation = %+v", ev)
		}
		prov = received(t, msgs, providerEmail)
		contains(t, "provider reschedule subject", prov.Subject, "Ändrad tid för uppdrag")

		// Cancellation: METHOD:CANCEL, STATUS:CANCELLED, same UID, higher SEQUENCE.
		b.Status, b.CancelledAt, b.CancelReason, b.Sequence = "cancelled", e.clk.Now(), "timing_no_longer_works", 2
		e.bookings.Put(t, b)
		e.queue(t, b.ID, bokat.EventBookingCancelled)
		e.runOnce(t)
		msgs = e.smtp.Wait(t, 6)[4:]
		cust = received(t, msgs, customerEmail)
		contains(t, "cancellation subject", cust.Subject, "Avbokning")
		contains(t, "cancellation", cust.Text, "din bokning är avbokad")
		ev = invitation(t, cust, "cancel.ics")
		if ev.Method != "CANCEL" || ev.UID != wantUID || ev.Sequence != 2 || ev.Status != "CANCELLED" || ev.StartRaw != "20260303T080000Z" {
			t.Errorf("cancellation invitation = %+v", ev)
		}
		prov = received(t, msgs, providerEmail)
		contains(t, "provider cancellation", prov.Subject+prov.Text, "Avbokat uppdrag", "tiden passar inte längre")
		if c, p := e.bookings.Statuses(t, b.ID); c != "sent" || p != "sent" {
			t.Errorf("statuses after cancel = %s/%s", c, p)
		}
		if got := counter(t, e.metrics, "bokat_notifications_total", map[string]string{"recipient": "customer", "result": "sent"}); got != 3 {
			t.Errorf("customer sent counter = %v, want 3", got)
		}
		if n := e.runOnce(t); n != 0 || len(e.smtp.Messages()) != 6 {
			t.Errorf("a further pass claimed %d jobs and the server holds %d messages; want 0 and 6", n, len(e.smtp.Messages()))
		}
		if len(e.follow.got()) != 0 {
			t.Errorf("provider action required raised for %v; nothing failed", e.follow.got())
		}
		assertCleanLogs(t, e.logs.String())
	})
}

func TestEnglishLocaleGivesEnglishCustomerMessages(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sqlstoretest.Open(t, sqlstore.SQLite))
	b := sampleBooking("en-GB")
	e.bookings.Put(t, b)
	e.queue(t, b.ID, bokat.EventBookingConfirmed)
	e.runOnce(t)
	msgs := e.smtp.Wait(t, 2)
	cust := received(t, msgs, customerEmail)
	contains(t, "English subject", cust.Subject, "Booking confirmed", "Kitchen faucet replacement", "Monday 2 March 2026, 09:00–11:00")
	contains(t, "English body", cust.Text, "your booking is confirmed", "SEK 1,495", "Booking reference")
	if ev := invitation(t, cust, "invite.ics"); !strings.HasPrefix(ev.Summary, "Kitchen faucet replacement") {
		t.Errorf("SUMMARY = %q", ev.Summary)
	}
	// Providers are written to in Swedish.
	contains(t, "provider subject", received(t, msgs, providerEmail).Subject, "Nytt bokat uppdrag")
}

// A cancellation by the provider (the event's data.reason
// provider_cancelled) tells the customer, in their language, that the
// provider cancelled and that they can book again; the provider is told
// they cancelled it themselves.
func TestProviderCancellationTellsTheCustomer(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newEnv(t, db)
		queue := func(b notify.Booking, reason string) {
			b.Status, b.CancelledAt, b.CancelReason, b.Sequence = "cancelled", e.clk.Now(), "other", 1
			e.bookings.Put(t, b)
			notifytest.QueueJobsWithReason(t, context.Background(), e.db, b.ID, bokat.EventBookingCancelled, reason, e.clk.Now)
			e.clk.Advance(time.Millisecond)
		}
		queue(sampleBooking("sv-SE"), bokat.ReasonProviderCancelled)
		e.runOnce(t)
		msgs := e.smtp.Wait(t, 2)
		cust := received(t, msgs, customerEmail)
		contains(t, "Swedish customer message", cust.Subject+cust.Text, "Avbokning",
			"utföraren har tyvärr avbokat din bokning", "Du kan boka en ny tid")
		if strings.Contains(cust.Text, "din bokning är avbokad.") {
			t.Errorf("customer message keeps the plain cancellation lead:\n%s", cust.Text)
		}
		prov := received(t, msgs, providerEmail)
		contains(t, "provider message", prov.Text, "ni har avbokat uppdraget")
		if strings.Contains(prov.Text, "kunden har avbokat") {
			t.Errorf("provider message says the customer cancelled:\n%s", prov.Text)
		}

		queue(sampleBooking("en-GB"), bokat.ReasonProviderCancelled)
		e.runOnce(t)
		cust = received(t, e.smtp.Wait(t, 4)[2:], customerEmail)
		contains(t, "English customer message", cust.Subject+cust.Text, "Booking cancelled",
			"the provider has cancelled your booking", "You can book a new time")

		// A cancellation without the reason keeps the customer's own wording.
		queue(sampleBooking("sv-SE"), "")
		e.runOnce(t)
		cust = received(t, e.smtp.Wait(t, 6)[4:], customerEmail)
		contains(t, "customer's own cancellation", cust.Text, "din bokning är avbokad.")
		if strings.Contains(cust.Text, "utföraren") {
			t.Errorf("a customer's cancellation names the provider as cancelling:\n%s", cust.Text)
		}
	})
}

func TestSkippedWhenNoAddressOrSuperseded(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sqlstoretest.Open(t, sqlstore.SQLite))
	noMail := sampleBooking("sv-SE")
	noMail.CustomerEmail = ""
	e.bookings.Put(t, noMail)
	cJob, pJob := e.queue(t, noMail.ID, bokat.EventBookingConfirmed)

	gone := sampleBooking("sv-SE")
	gone.Status = "cancelled"
	gone.CancelledAt = e.clk.Now()
	gone.Sequence = 1
	e.bookings.Put(t, gone)
	staleC, staleP := e.queue(t, gone.ID, bokat.EventBookingConfirmed)

	e.runOnce(t)
	if s := e.job(t, cJob); s.Status != bokat.NotificationSkipped || s.LastError != "no e-mail address" {
		t.Errorf("customer job without an address = %+v", s)
	}
	if s := e.job(t, pJob); s.Status != bokat.NotificationSent {
		t.Errorf("provider job = %+v", s)
	}
	if c, p := e.bookings.Statuses(t, noMail.ID); c != "skipped" || p != "sent" {
		t.Errorf("statuses = %s/%s, want skipped/sent", c, p)
	}
	for _, id := range []string{staleC, staleP} {
		if s := e.job(t, id); s.Status != bokat.NotificationSkipped || s.LastError != "superseded by the cancellation" {
			t.Errorf("confirmation of a cancelled booking = %+v", s)
		}
	}
	if n := len(e.smtp.Messages()); n != 1 {
		t.Errorf("%d messages sent, want only the provider's", n)
	}
}

func TestTemporaryRejectionRetriesWithBackoffThenFails(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newEnv(t, db)
		b := sampleBooking("sv-SE")
		e.bookings.Put(t, b)
		e.smtp.Reject(&smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0},
			Message: "mailbox " + customerEmail + " busy, call " + customerPhone})
		cJob, pJob := e.queue(t, b.ID, bokat.EventBookingConfirmed)

		start := e.clk.Now()
		backoff := notify.DefaultBackoff()
		waits := append([]time.Duration{0}, backoff...)
		for i, wait := range waits {
			attempt := i + 1
			// Just before the job is due nothing is claimed.
			if wait > 0 {
				e.clk.Advance(wait - time.Second)
				if n := e.runOnce(t); n != 0 {
					t.Fatalf("attempt %d: %d jobs claimed a second early", attempt, n)
				}
				e.clk.Advance(time.Second)
			}
			if n := e.runOnce(t); n != 2 {
				t.Fatalf("attempt %d: claimed %d jobs, want 2", attempt, n)
			}
			s := e.job(t, cJob)
			if s.Attempts != attempt || !strings.Contains(s.LastError, "451 4.3.0") {
				t.Fatalf("after attempt %d: %+v", attempt, s)
			}
			if attempt <= len(backoff) {
				if s.Status != bokat.NotificationPending || !s.NextAttemptAt.Equal(e.clk.Now().Add(backoff[attempt-1])) {
					t.Fatalf("after attempt %d: %+v, want pending until +%s", attempt, s, backoff[attempt-1])
				}
				if c, p := e.bookings.Statuses(t, b.ID); c != "" || p != "" {
					t.Fatalf("statuses written while retrying: %s/%s", c, p)
				}
			}
		}
		if total := e.clk.Now().Sub(start); total != 8*time.Hour+36*time.Minute {
			t.Errorf("gave up after %s, want 8h36m (1m+5m+30m+2h+6h)", total)
		}
		for _, id := range []string{cJob, pJob} {
			s := e.job(t, id)
			if s.Status != bokat.NotificationFailed || s.Attempts != 6 || !strings.Contains(s.LastError, "after 6 attempts") {
				t.Errorf("job %s = %+v, want failed after 6 attempts", id, s)
			}
			for _, secret := range []string{customerEmail, customerPhone, "busy"} {
				if strings.Contains(s.LastError, secret) {
					t.Errorf("last_error %q repeats the server's text", s.LastError)
				}
			}
		}
		if c, p := e.bookings.Statuses(t, b.ID); c != "failed" || p != "failed" {
			t.Errorf("statuses = %s/%s, want failed/failed", c, p)
		}
		if got := e.follow.got(); len(got) != 1 || got[0] != b.ID {
			t.Errorf("provider action required for %v, want [%s]", got, b.ID)
		}
		if !e.job(t, pJob).Escalated || e.job(t, cJob).Escalated {
			t.Error("only the provider job is escalated")
		}
		if got := e.smtp.RcptAttempts(); got != 12 {
			t.Errorf("the server saw %d RCPT commands, want 12 (6 per job)", got)
		}
		// Nothing more happens, even once the server accepts again.
		e.smtp.Reject(nil)
		e.clk.Advance(24 * time.Hour)
		if n := e.runOnce(t); n != 0 || len(e.follow.got()) != 1 {
			t.Errorf("after giving up: %d jobs claimed, %d escalations", n, len(e.follow.got()))
		}
		if got := counter(t, e.metrics, "bokat_notifications_total", map[string]string{"recipient": "provider", "result": "retry"}); got != 5 {
			t.Errorf("provider retry counter = %v, want 5", got)
		}
		if got := counter(t, e.metrics, "bokat_notifications_total", map[string]string{"recipient": "provider", "result": "failed"}); got != 1 {
			t.Errorf("provider failed counter = %v, want 1", got)
		}
		assertCleanLogs(t, e.logs.String())
	})
}

func TestPermanentRejectionFailsAtOnceAndEscalatesUntilAccepted(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sqlstoretest.Open(t, sqlstore.SQLite))
	b := sampleBooking("sv-SE")
	e.bookings.Put(t, b)
	e.smtp.Reject(&smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such user"})
	e.follow.fail = errFollowUpDown
	_, pJob := e.queue(t, b.ID, bokat.EventBookingConfirmed)

	e.runOnce(t)
	if !strings.Contains(e.logs.String(), "booking.provider_action_required not raised; will retry") {
		t.Error("the failed escalation was not logged")
	}
	s := e.job(t, pJob)
	if s.Status != bokat.NotificationFailed || s.Attempts != 1 || !strings.Contains(s.LastError, "550 5.1.1") || s.Escalated {
		t.Fatalf("provider job = %+v, want failed after one attempt, not yet escalated", s)
	}
	// The escalation is retried a minute later, once.
	e.follow.fail = nil
	e.runOnce(t)
	if len(e.follow.got()) != 0 {
		t.Fatal("escalation retried before its minute")
	}
	e.clk.Advance(time.Minute)
	e.runOnce(t)
	e.clk.Advance(time.Hour)
	e.runOnce(t)
	if got := e.follow.got(); len(got) != 1 || got[0] != b.ID || !e.job(t, pJob).Escalated {
		t.Fatalf("escalations = %v, escalated = %v", got, e.job(t, pJob).Escalated)
	}
}

func TestLeasesFenceCrashedWorkers(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newEnv(t, db)
		b := sampleBooking("sv-SE")
		e.bookings.Put(t, b)
		e.queue(t, b.ID, bokat.EventBookingConfirmed)
		ctx := context.Background()
		// A worker claims the jobs and dies.
		first, err := db.ClaimNotificationJobs(ctx, e.clk.Now(), 2*time.Minute, 10)
		if err != nil || len(first) != 2 {
			t.Fatalf("claim = %d jobs, %v", len(first), err)
		}
		if n := e.runOnce(t); n != 0 {
			t.Fatalf("leased jobs claimed again: %d", n)
		}
		// After the lease they are due again and delivered.
		e.clk.Advance(2 * time.Minute)
		if n := e.runOnce(t); n != 2 {
			t.Fatalf("after the lease: claimed %d, want 2", n)
		}
		if s := e.job(t, first[0].ID); s.Status != bokat.NotificationSent || s.Attempts != 2 {
			t.Fatalf("job = %+v", s)
		}
		// The dead worker's late outcome is refused.
		err = db.InTx(ctx, func(tx *sqlstore.Tx) error {
			return tx.FinishNotificationJob(ctx, first[0], bokat.NotificationFailed, "late", e.clk.Now())
		})
		if err != notify.ErrLeaseLost {
			t.Fatalf("late finish err = %v, want ErrLeaseLost", err)
		}
	})
}

func TestConcurrentWorkersClaimDisjointJobs(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newEnv(t, db)
		for i := 0; i < 20; i++ {
			e.queue(t, "bk_concurrent_"+string(rune('a'+i)), bokat.EventBookingConfirmed)
		}
		ctx := context.Background()
		now := e.clk.Now()
		results := make(chan []notify.ClaimedJob, 8)
		errs := make(chan error, 8)
		for range 8 {
			go func() {
				var mine []notify.ClaimedJob
				for {
					got, err := db.ClaimNotificationJobs(ctx, now, time.Minute, 3)
					if err != nil {
						errs <- err
						return
					}
					if len(got) == 0 {
						results <- mine
						return
					}
					mine = append(mine, got...)
				}
			}()
		}
		seen := map[string]bool{}
		for range 8 {
			select {
			case err := <-errs:
				t.Fatal(err)
			case mine := <-results:
				for _, j := range mine {
					if seen[j.ID] {
						t.Fatalf("job %s claimed twice", j.ID)
					}
					seen[j.ID] = true
				}
			}
		}
		if len(seen) != 40 {
			t.Fatalf("%d jobs claimed, want 40", len(seen))
		}
	})
}

func TestFolderModeWritesEMLFiles(t *testing.T) {
	t.Parallel()
	db := sqlstoretest.Open(t, sqlstore.SQLite)
	e := newEnv(t, db)
	dir := filepath.Join(t.TempDir(), "mail")
	mailer, err := notify.NewMailer(notify.MailerConfig{From: "Bokat <" + organizer + ">", Dir: dir, Now: e.clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	if mailer.Mode() != "folder" {
		t.Fatalf("mode = %s", mailer.Mode())
	}
	w, err := notify.NewWorker(notify.WorkerConfig{Store: e.bookings.Store(), Bookings: e.bookings, Sender: mailer,
		Organizer: mailer.FromAddress(), UIDDomain: uidDomain, Logger: discardLogger(), Now: e.clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	b := sampleBooking("sv-SE")
	e.bookings.Put(t, b)
	e.queue(t, b.ID, bokat.EventBookingConfirmed)
	if _, err := w.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.eml"))
	if err != nil || len(files) != 2 {
		t.Fatalf("eml files = %v, %v; want 2", files, err)
	}
	var recipients []string
	for _, f := range files {
		info, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v, want 0600 (it holds personal data)", f, info.Mode().Perm())
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m := notifytest.Parse(t, raw)
		recipients = append(recipients, m.To[0].Address)
		if ev := invitation(t, m, "invite.ics"); ev.Method != "REQUEST" || ev.UID != b.ID+"@"+uidDomain {
			t.Errorf("%s invitation = %+v", f, ev)
		}
	}
	if !(strings.Contains(strings.Join(recipients, " "), customerEmail) && strings.Contains(strings.Join(recipients, " "), providerEmail)) {
		t.Errorf("recipients = %v", recipients)
	}
	if c, p := e.bookings.Statuses(t, b.ID); c != "sent" || p != "sent" {
		t.Errorf("statuses = %s/%s", c, p)
	}
}

func TestRunDeliversUntilStoppedAndStopsItsHeartbeat(t *testing.T) {
	t.Parallel()
	db := sqlstoretest.Open(t, sqlstore.SQLite)
	e := newEnv(t, db)
	hb := telemetry.NewHeartbeats(e.clk.Now) // silence cannot grow while a busy machine runs the test
	beat := hb.Register("notify", time.Minute)
	w, err := notify.NewWorker(notify.WorkerConfig{Store: e.bookings.Store(), Bookings: e.bookings, Sender: e.mailer,
		Organizer: e.mailer.FromAddress(), UIDDomain: uidDomain, Logger: discardLogger(), Now: e.clk.Now, Heartbeat: beat, Poll: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	b := sampleBooking("sv-SE")
	e.bookings.Put(t, b)
	e.queue(t, b.ID, bokat.EventBookingConfirmed)
	e.smtp.Wait(t, 2)
	if err := hb.Check(context.Background()); err != nil {
		t.Fatalf("while running: %v", err)
	}
	cancel()
	if err := clocktest.Receive(t, "Run to stop", done); err != context.Canceled {
		t.Fatalf("Run returned %v, want context.Canceled", err)
	}
	if err := hb.Check(context.Background()); err == nil || !strings.Contains(err.Error(), "notify stopped") {
		t.Fatalf("after stop: %v", err)
	}
}
