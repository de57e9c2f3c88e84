package httpapi

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-ical"
)

// feedPath returns the path of a provider's calendar feed.
func feedPath(e *testEnv, providerID string) string {
	return strings.TrimPrefix(e.srv.feed.URL(providerID), "http://bokat.test")
}

func parseFeed(t *testing.T, body []byte) map[string]ical.Event {
	t.Helper()
	cal, err := ical.NewDecoder(bytes.NewReader(body)).Decode()
	if err != nil {
		t.Fatalf("the feed does not parse: %v\n%s", err, body)
	}
	events := map[string]ical.Event{}
	for _, ev := range cal.Events() {
		uid, err := ev.Props.Text(ical.PropUID)
		if err != nil {
			t.Fatal(err)
		}
		events[uid] = ev
	}
	return events
}

func TestProviderCalendarFeed(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		e.withDemoSupply()
		opts := e.options(t, faucetSearch())
		provider := optionProvider(opts[0])
		kept := e.confirm(t, opts[0], "k1")["id"].(string)
		cancelled := e.confirm(t, e.nextOption(t, provider), "k2")["id"].(string)
		moved := e.confirm(t, e.nextOption(t, provider), "k3")["id"].(string)
		if r := e.do(request{Method: "POST", Path: "/v1/bookings/" + cancelled + "/cancel", Body: cancelBody("k4"), Header: bearer(e.token)}); r.Status != 200 {
			t.Fatal(r.Status)
		}
		target := e.nextOption(t, provider)
		r := e.do(request{Method: "POST", Path: "/v1/bookings/" + moved + "/reschedule", Body: rescheduleBody(target, "k5"), Header: bearer(e.token)})
		if r.Status != 200 {
			t.Fatal(r.Status, string(r.Body))
		}
		movedStart, _ := time.Parse(time.RFC3339, optionStart(target))

		f := e.do(request{Method: "GET", Path: feedPath(e, provider), NoValidate: true})
		if f.Status != 200 || f.Header.Get("Content-Type") != "text/calendar; charset=utf-8" {
			t.Fatalf("feed: %d %q", f.Status, f.Header.Get("Content-Type"))
		}
		if f.Header.Get("Cache-Control") != "private, max-age=300" || f.Header.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("feed headers: %v", f.Header)
		}
		if !bytes.Contains(f.Body, []byte("\r\n")) {
			t.Error("the feed does not use CRLF line ends")
		}
		events := parseFeed(t, f.Body)
		if len(events) != 3 {
			t.Fatalf("%d events, want 3", len(events))
		}
		want := map[string]struct {
			status ical.EventStatus
			seq    int
		}{kept: {ical.EventConfirmed, 0}, cancelled: {ical.EventCancelled, 1}, moved: {ical.EventConfirmed, 1}}
		for id, w := range want {
			ev, ok := events[id+"@bokat.test"]
			if !ok {
				t.Fatalf("no event with UID %s@bokat.test", id)
			}
			if st, err := ev.Status(); err != nil || st != w.status {
				t.Errorf("%s: STATUS %v (%v), want %v", id, st, err, w.status)
			}
			if seq, err := ev.Props.Get(ical.PropSequence).Int(); err != nil || seq != w.seq {
				t.Errorf("%s: SEQUENCE %d (%v), want %d", id, seq, err, w.seq)
			}
			if v := ev.Props.Get(ical.PropDateTimeStart).Value; !strings.HasSuffix(v, "Z") {
				t.Errorf("%s: DTSTART %q is not UTC", id, v)
			}
			if v := ev.Props.Get(ical.PropDateTimeEnd).Value; !strings.HasSuffix(v, "Z") {
				t.Errorf("%s: DTEND %q is not UTC", id, v)
			}
			if loc, _ := ev.Props.Text(ical.PropLocation); loc != "113 45" {
				t.Errorf("%s: LOCATION %q", id, loc)
			}
		}
		movedEvent := events[moved+"@bokat.test"]
		if start, err := movedEvent.DateTimeStart(time.UTC); err != nil || !start.Equal(movedStart) {
			t.Errorf("the moved booking starts %v (%v), want %v", start, err, movedStart)
		}
		for _, pii := range testCustomerPII {
			if bytes.Contains(f.Body, []byte(pii)) {
				t.Errorf("the feed contains %q", pii)
			}
		}

		// The address is a secret: a wrong token, another provider's token, an
		// unknown provider and a missing suffix all answer 404.
		good := feedPath(e, provider)
		token := strings.TrimSuffix(good[strings.LastIndex(good, "/")+1:], ".ics")
		other := "prv_sthlm_vvs_2"
		if provider == other {
			other = "prv_sthlm_vvs_1"
		}
		for name, path := range map[string]string{
			"wrong token":             "/calendar/" + provider + "/" + strings.Repeat("A", len(token)) + ".ics",
			"another provider's":      "/calendar/" + provider + "/" + strings.TrimSuffix(feedPath(e, other)[strings.LastIndex(feedPath(e, other), "/")+1:], ".ics") + ".ics",
			"unknown provider":        feedPath(e, "prv_nobody"),
			"no suffix":               "/calendar/" + provider + "/" + token,
			"token of the wrong case": "/calendar/" + provider + "/" + strings.ToLower(token) + ".ics",
		} {
			r := e.do(request{Method: "GET", Path: path, NoValidate: true})
			if r.Status != 404 || r.JSON["code"] != "not_found" {
				t.Errorf("%s: %d %s", name, r.Status, r.Body)
			}
			// The feed's headers come with its first byte, never on an error.
			if r.Header.Get("Cache-Control") == f.Header.Get("Cache-Control") || strings.HasPrefix(r.Header.Get("Content-Type"), "text/calendar") {
				t.Errorf("%s: the 404 has the feed's headers: %v", name, r.Header)
			}
		}
	})
}
