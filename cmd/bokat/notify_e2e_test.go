package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"bokat/internal/catalog"
	"bokat/internal/clocktest"
	"bokat/internal/notify/notifytest"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/supply"
)

// e2eCustomer is one customer of the end-to-end test; none of it may reach
// the server's log.
type e2eCustomer struct{ name, phone, email, address string }

func (c e2eCustomer) pii() []string {
	first, _, _ := strings.Cut(c.name, " ")
	return []string{c.name, first, c.phone, strings.ReplaceAll(c.phone, " ", ""), c.email, c.address}
}

func (c e2eCustomer) confirm(option map[string]any, key string) map[string]any {
	return map[string]any{
		"booking_option_id":         option["booking_option_id"],
		"customer":                  map[string]any{"name": c.name, "phone": c.phone, "email": c.email},
		"service_location":          map[string]any{"country_code": "SE", "address": c.address, "postcode": "113 45"},
		"user_consent_confirmed":    true,
		"booking_terms_accepted":    true,
		"booking_terms_version":     option["terms"].(map[string]any)["version"],
		"booking_terms_accepted_at": time.Now().Format(time.RFC3339),
		"idempotency_key":           key,
	}
}

// e2eFlow drives a running server through HTTP and reads what its SMTP
// server received.
type e2eFlow struct {
	t       *testing.T
	baseURL string
	token   string
	smtp    *notifytest.Server
	client  *http.Client
}

func (f *e2eFlow) call(method, path string, body any) map[string]any {
	f.t.Helper()
	status, res, err := call(f.client, method, f.baseURL+path, f.token, body)
	if err != nil || status/100 != 2 {
		f.t.Fatalf("%s %s: %d %v %v", method, path, status, res, err)
	}
	return res
}

// option searches (in locale) and returns an option of provider whose slot
// does not start at any of skip.
func (f *e2eFlow) option(locale, provider string, skip ...string) map[string]any {
	f.t.Helper()
	res := f.call("POST", "/v1/booking-options", map[string]any{
		"vertical_id": "vvs", "job_type_id": "install_faucet", "description": "Byta köksblandare, ny finns på plats.",
		"location": map[string]any{"country_code": "SE", "postcode": "113 45"},
		"timing":   map[string]any{"preferred_time_text": "inom två veckor"}, "locale": locale,
	})
	opts, _ := res["options"].([]any)
	for _, o := range opts {
		o := o.(map[string]any)
		start := o["slot"].(map[string]any)["start_at"].(string)
		if o["provider"].(map[string]any)["id"] == provider && !containsString(skip, start) {
			return o
		}
	}
	f.t.Fatalf("no free option of %s in %d options", provider, len(opts))
	return nil
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func slotStart(t testing.TB, o map[string]any) time.Time {
	t.Helper()
	s, err := time.Parse(time.RFC3339, o["slot"].(map[string]any)["start_at"].(string))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// message waits for the message to `to` about booking id whose subject
// starts with subject.
func (f *e2eFlow) message(to, id, subject string) notifytest.Message {
	f.t.Helper()
	var found notifytest.Message
	clocktest.Wait(f.t, fmt.Sprintf("a message %q to %s about %s", subject, to, id), func() bool {
		for _, r := range f.smtp.Messages() {
			if len(r.To) != 1 || r.To[0] != to {
				continue
			}
			m := notifytest.Parse(f.t, r.Data)
			if strings.Contains(m.Text, id) && strings.HasPrefix(m.Subject, subject) {
				found = m
				return true
			}
		}
		return false
	})
	return found
}

// statuses waits until GET /v1/bookings/{id} shows the wanted delivery
// states.
func (f *e2eFlow) statuses(id, customer, provider string) {
	f.t.Helper()
	clocktest.Wait(f.t, fmt.Sprintf("booking %s with customer_confirmation_status %s, provider_confirmation_status %s", id, customer, provider), func() bool {
		b := f.call("GET", "/v1/bookings/"+id, nil)["booking"].(map[string]any)
		return b["customer_confirmation_status"] == customer && b["provider_confirmation_status"] == provider
	})
}

// invitation parses m's calendar part and checks it against the attached
// file (the same object under two MIME roles).
func invitation(t testing.TB, m notifytest.Message) notifytest.Event {
	t.Helper()
	if m.CalendarPart == nil {
		t.Fatalf("message %q has no text/calendar part", m.Subject)
	}
	ev := notifytest.ParseCalendar(t, m.CalendarPart.Data)
	if !strings.EqualFold(m.CalendarPart.Params["method"], ev.Method) {
		t.Errorf("Content-Type method=%q, calendar METHOD:%s", m.CalendarPart.Params["method"], ev.Method)
	}
	var attached *notifytest.Part
	for _, name := range []string{"invite.ics", "cancel.ics"} {
		if p, ok := m.Attachments[name]; ok {
			attached = &p
		}
	}
	if attached == nil || !bytes.Equal(attached.Data, m.CalendarPart.Data) {
		t.Errorf("message %q: the attached .ics differs from the calendar part", m.Subject)
	}
	return ev
}

// TestServeNotifiesCustomersAndProvidersOfBookings runs the real program
// (demo supply, real booking store, real notification wiring) against an
// in-process SMTP server: a booking confirmed, moved and cancelled through
// the API gives the customer a Swedish invitation, update and cancellation
// with one UID (the provider calendar feed's) and a rising SEQUENCE, and
// the provider the job with the customer's contact details; an English
// booking gives English text; a provider address the mail server refuses
// for good marks the provider message failed and raises
// booking.provider_action_required. The log holds no contact data.
func TestServeNotifiesCustomersAndProvidersOfBookings(t *testing.T) {
	t.Parallel()
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	providers, err := supply.Parse(supply.DemoName, supply.Demo(), cat)
	if err != nil {
		t.Fatal(err)
	}
	providerEmail := map[string]string{}
	for _, p := range providers {
		providerEmail[p.ID] = p.Email
	}
	const (
		booked   = "prv_sthlm_vvs_1"
		rejected = "prv_sthlm_vvs_2"
	)
	if providerEmail[booked] == "" || providerEmail[rejected] == "" {
		t.Fatalf("the demo supply lacks %s or %s", booked, rejected)
	}
	for _, engine := range sqlstoretest.Engines() {
		t.Run(string(engine), func(t *testing.T) {
			t.Parallel()
			smtpServer := notifytest.NewServer(t, notifytest.Options{})
			smtpServer.RejectRecipient(providerEmail[rejected],
				&smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such mailbox"})
			dbURL := sqlstoretest.URL(t, engine)
			baseURL, token, logs, stop := startServe(t, []string{"--demo", "--database", dbURL, "--log-level", "debug",
				"--smtp-url", "smtp://" + smtpServer.Addr + "?starttls=none", "--mail-from", "Bokat <bokning@mail.bokat.example>"}, nil)
			f := &e2eFlow{t: t, baseURL: baseURL, token: token, smtp: smtpServer, client: &http.Client{Timeout: time.Minute}}

			sv := e2eCustomer{"Viveka Östergren-Lund", "+46 70 555 83 21", "viveka.ol.5521@kund.example", "Hornsgatan 12"}
			en := e2eCustomer{"Alistair Pemberton-Hughes", "+46 70 555 83 22", "alistair.ph.8822@kund.example", "Götgatan 48"}
			rj := e2eCustomer{"Majvor Lindqvist-Berg", "+46 70 555 83 23", "majvor.lb.9123@kund.example", "Sankt Paulsgatan 7"}

			// Confirm (Swedish by default).
			first := f.option("sv-SE", booked)
			id := f.call("POST", "/v1/bookings", sv.confirm(first, "e2e-confirm"))["booking"].(map[string]any)["id"].(string)
			confirmed := f.message(sv.email, id, "Bokningsbekräftelse: ")
			toProvider := f.message(providerEmail[booked], id, "Nytt bokat uppdrag: ")
			f.statuses(id, "sent", "sent")

			uid := invitation(t, confirmed).UID
			if want := id + "@127.0.0.1"; uid != want {
				t.Errorf("UID %q, want %q (booking id @ host of the base URL)", uid, want)
			}
			checkInvitation(t, "confirmation", invitation(t, confirmed), "REQUEST", "CONFIRMED", 0, uid, slotStart(t, first))
			checkInvitation(t, "provider confirmation", invitation(t, toProvider), "REQUEST", "CONFIRMED", 0, uid, slotStart(t, first))
			checkText(t, "confirmation", confirmed, []string{"Hej " + sv.name, "din bokning är bekräftad", "Hornsgatan 12, 113 45", "Rörfixarna Stockholm AB", id},
				[]string{"Hello", "Booking confirmed"})
			checkText(t, "provider confirmation", toProvider, []string{sv.name, sv.phone, sv.email, "Hornsgatan 12, 113 45", id}, nil)
			// The demo's first plumber states 80 % labour on 1 890 kr: 1 512 kr, 30 % ROT.
			checkText(t, "confirmation's ROT estimate", confirmed, []string{"Preliminärt rotavdrag: cirka 453 kr", "personnummer"}, nil)
			checkText(t, "provider's ROT estimate", toProvider, []string{"Preliminärt rotavdrag för kunden: cirka 453 kr", "fakturamodellen"}, nil)

			// The provider's calendar feed names the booking with the same UID.
			var feedURL bytes.Buffer
			if err := run(context.Background(), []string{"provider", "feed-url", booked, "--database", dbURL, "--base-url", baseURL},
				getenvFrom(nil), &feedURL, io.Discard); err != nil {
				t.Fatalf("provider feed-url: %v", err)
			}
			resp, err := http.Get(strings.Fields(feedURL.String())[1])
			if err != nil {
				t.Fatal(err)
			}
			feed, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !bytes.Contains(feed, []byte("UID:"+uid+"\r\n")) {
				t.Errorf("the provider feed (%d) does not hold UID:%s:\n%s", resp.StatusCode, uid, feed)
			}

			// Reschedule.
			second := f.option("sv-SE", booked, first["slot"].(map[string]any)["start_at"].(string))
			f.call("POST", "/v1/bookings/"+id+"/reschedule", map[string]any{
				"booking_option_id":           second["booking_option_id"],
				"service_location":            map[string]any{"country_code": "SE", "address": sv.address, "postcode": "113 45"},
				"user_confirmation_confirmed": true,
				"booking_terms_accepted":      true,
				"booking_terms_version":       second["terms"].(map[string]any)["version"],
				"booking_terms_accepted_at":   time.Now().Format(time.RFC3339),
				"idempotency_key":             "e2e-move",
			})
			moved := f.message(sv.email, id, "Ny tid för din bokning: ")
			movedProvider := f.message(providerEmail[booked], id, "Ändrad tid för uppdrag: ")
			checkInvitation(t, "reschedule", invitation(t, moved), "REQUEST", "CONFIRMED", 1, uid, slotStart(t, second))
			checkInvitation(t, "provider reschedule", invitation(t, movedProvider), "REQUEST", "CONFIRMED", 1, uid, slotStart(t, second))
			checkText(t, "reschedule", moved, []string{"din bokning har flyttats till en ny tid", id}, nil)
			f.statuses(id, "sent", "sent")

			// Cancel.
			f.call("POST", "/v1/bookings/"+id+"/cancel", map[string]any{
				"user_confirmation_confirmed": true, "reason": "timing_no_longer_works", "idempotency_key": "e2e-cancel"})
			cancelled := f.message(sv.email, id, "Avbokning: ")
			cancelledProvider := f.message(providerEmail[booked], id, "Avbokat uppdrag: ")
			checkInvitation(t, "cancellation", invitation(t, cancelled), "CANCEL", "CANCELLED", 2, uid, slotStart(t, second))
			checkInvitation(t, "provider cancellation", invitation(t, cancelledProvider), "CANCEL", "CANCELLED", 2, uid, slotStart(t, second))
			checkText(t, "cancellation", cancelled, []string{"din bokning är avbokad", id}, nil)
			checkText(t, "provider cancellation", cancelledProvider, []string{"tiden passar inte längre", sv.phone, id}, nil)
			f.statuses(id, "sent", "sent")

			// An English booking gives English text.
			english := f.option("en-GB", booked, second["slot"].(map[string]any)["start_at"].(string))
			enID := f.call("POST", "/v1/bookings", en.confirm(english, "e2e-english"))["booking"].(map[string]any)["id"].(string)
			enMsg := f.message(en.email, enID, "Booking confirmed: ")
			checkText(t, "English confirmation", enMsg, []string{"Hello " + en.name, "your booking is confirmed", "Götgatan 48, 113 45", "SEK 1,890", enID},
				[]string{"Hej", "bekräftad"})
			checkInvitation(t, "English confirmation", invitation(t, enMsg), "REQUEST", "CONFIRMED", 0, enID+"@127.0.0.1", slotStart(t, english))
			// The provider hears in Swedish whatever the customer's language.
			f.message(providerEmail[booked], enID, "Nytt bokat uppdrag: ")
			f.statuses(enID, "sent", "sent")

			// A provider address refused for good: the customer still hears,
			// the provider message fails and the booking needs action.
			third := f.option("sv-SE", rejected)
			rjID := f.call("POST", "/v1/bookings", rj.confirm(third, "e2e-rejected"))["booking"].(map[string]any)["id"].(string)
			f.message(rj.email, rjID, "Bokningsbekräftelse: ")
			f.statuses(rjID, "sent", "failed")
			db, err := sqlstore.Open(context.Background(), dbURL)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			countEvents := func(bookingID, eventType string) int {
				t.Helper()
				var n int
				if err := db.R().QueryRowContext(context.Background(),
					`SELECT COUNT(*) FROM outbox_events WHERE booking_id = $1 AND event_type = $2`, bookingID, eventType).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			}
			clocktest.Wait(t, "a booking.provider_action_required event", func() bool { return countEvents(rjID, "booking.provider_action_required") != 0 })
			if n := countEvents(rjID, "booking.provider_action_required"); n != 1 {
				t.Errorf("booking %s has %d booking.provider_action_required events, want 1", rjID, n)
			}
			for _, b := range []string{id, enID} {
				if n := countEvents(b, "booking.provider_action_required"); n != 0 {
					t.Errorf("booking %s, whose provider was told, has %d booking.provider_action_required events", b, n)
				}
			}
			for _, r := range smtpServer.Messages() {
				if containsString(r.To, providerEmail[rejected]) {
					t.Errorf("a message reached the refused address")
				}
			}

			if err := stop(); err != nil {
				t.Fatalf("serve: %v", err)
			}
			out := logs.String()
			if !strings.Contains(out, "notification sent") || !strings.Contains(out, "notification failed for good") {
				t.Errorf("the log does not record the deliveries:\n%s", out)
			}
			var pii []string
			for _, c := range []e2eCustomer{sv, en, rj} {
				pii = append(pii, c.pii()...)
			}
			for _, s := range pii {
				if strings.Contains(out, s) {
					t.Errorf("the log holds %q", s)
				}
			}
		})
	}
}

func checkInvitation(t testing.TB, what string, ev notifytest.Event, method, status string, sequence int, uid string, start time.Time) {
	t.Helper()
	if ev.Method != method || ev.Status != status || ev.Sequence != sequence || ev.UID != uid || !ev.Start.Equal(start) {
		t.Errorf("%s: METHOD:%s STATUS:%s SEQUENCE:%d UID:%s DTSTART %s; want %s %s %d %s %s",
			what, ev.Method, ev.Status, ev.Sequence, ev.UID, ev.Start, method, status, sequence, uid, start)
	}
	if !strings.HasSuffix(ev.StartRaw, "Z") {
		t.Errorf("%s: DTSTART %q is not UTC", what, ev.StartRaw)
	}
}

func checkText(t testing.TB, what string, m notifytest.Message, want, not []string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(m.Text, w) {
			t.Errorf("%s: the text lacks %q:\n%s", what, w, m.Text)
		}
	}
	for _, n := range not {
		if strings.Contains(m.Text, n) || strings.Contains(m.Subject, n) {
			t.Errorf("%s: the message holds %q:\n%s\n%s", what, n, m.Subject, m.Text)
		}
	}
}
