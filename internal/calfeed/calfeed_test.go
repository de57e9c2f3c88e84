package calfeed

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-ical"

	"bokat"
)

// bookingList is a Store over a fixed list of one provider's bookings.
type bookingList struct {
	provider string
	bookings []bokat.Booking
}

func (l *bookingList) ProviderName(_ context.Context, id string) (string, error) {
	if id != l.provider {
		return "", fmt.Errorf("provider %s: %w", id, bokat.ErrNotFound)
	}
	return "Rörmokare Ett AB", nil
}

func (l *bookingList) ProviderBookings(_ context.Context, id string, from time.Time) ([]bokat.CalendarBooking, error) {
	var out []bokat.CalendarBooking
	for _, b := range l.bookings {
		if b.ProviderID == id && b.SlotEnd.After(from) {
			out = append(out, bokat.CalendarBooking{ID: b.ID, Status: b.Status, ServiceLabelSV: b.ServiceLabelSV,
				SlotStart: b.SlotStart, SlotEnd: b.SlotEnd, PriceSEK: b.PriceSEK, TermsVersion: b.TermsVersion,
				Postcode: b.Postcode, DestinationPostcode: b.DestinationPostcode, ConfirmedAt: b.ConfirmedAt,
				RescheduledAt: b.RescheduledAt, CancelledAt: b.CancelledAt, Sequence: b.Sequence})
		}
	}
	return out, nil
}

// writes records the sizes of the writes it is given.
type writes struct {
	bytes.Buffer
	sizes []int
}

func (w *writes) Write(p []byte) (int, error) {
	w.sizes = append(w.sizes, len(p))
	return w.Buffer.Write(p)
}

func newFeed(t *testing.T, store Store, now time.Time) *Feed {
	t.Helper()
	f, err := New(Config{Key: bytes.Repeat([]byte{7}, MinKeyBytes), Store: store, BaseURL: "https://bokat.example", Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// A provider's feed is written as it is made, in pieces no larger than the
// write buffer, never built whole first: it grows with every booking and
// cancellation of the lookback and horizon, and a busy provider's feed is
// megabytes that calendar applications fetch again and again. Every
// booking is in it, cancelled ones as cancelled, with CRLF line ends.
func TestRenderWritesTheFeedAsItGoes(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	store := &bookingList{provider: "prv_sthlm_vvs_1"}
	const n = 2000
	for i := range n {
		start := now.Add(time.Duration(i) * time.Hour)
		b := bokat.Booking{ID: fmt.Sprintf("bkg_%04d", i), ProviderID: store.provider, Status: bokat.BookingConfirmed,
			ServiceLabelSV: "Byte av blandare", SlotStart: start, SlotEnd: start.Add(time.Hour), ConfirmedAt: now,
			Postcode: "11345", PriceSEK: 1200, TermsVersion: "2026-01", Sequence: 0}
		if i%2 == 1 {
			b.Status, b.CancelledAt, b.Sequence = bokat.BookingCancelled, now.Add(time.Minute), 1
		}
		store.bookings = append(store.bookings, b)
	}
	var w writes
	if err := newFeed(t, store, now).Render(context.Background(), store.provider, &w); err != nil {
		t.Fatal(err)
	}
	if len(w.sizes) < 2 {
		t.Fatalf("a feed of %d bookings (%d bytes) was written in %d write(s): it was built whole first", n, w.Len(), len(w.sizes))
	}
	for i, size := range w.sizes {
		if size > writeBuffer {
			t.Fatalf("write %d is %d bytes, more than the %d-byte buffer: the feed is held whole", i, size, writeBuffer)
		}
	}
	body := w.Bytes()
	if !bytes.HasPrefix(body, []byte("BEGIN:VCALENDAR\r\n")) || !bytes.HasSuffix(body, []byte("END:VCALENDAR\r\n")) ||
		bytes.Count(body, []byte("\n")) != bytes.Count(body, []byte("\r\n")) {
		t.Fatalf("not a CRLF calendar: %q … %q", body[:40], body[len(body)-40:])
	}
	cal, err := ical.NewDecoder(bytes.NewReader(body)).Decode()
	if err != nil {
		t.Fatal(err)
	}
	if name, _ := cal.Props.Text("X-WR-CALNAME"); name != "Bokat – Rörmokare Ett AB" {
		t.Errorf("X-WR-CALNAME = %q", name)
	}
	events := cal.Events()
	if len(events) != n {
		t.Fatalf("%d events, want %d", len(events), n)
	}
	for i, ev := range events {
		uid, _ := ev.Props.Text(ical.PropUID)
		status, _ := ev.Props.Text(ical.PropStatus)
		summary, _ := ev.Props.Text(ical.PropSummary)
		want := store.bookings[i]
		if uid != want.ID+"@bokat.example" {
			t.Fatalf("event %d: UID %q, want the bookings in slot order", i, uid)
		}
		if cancelled := !want.Active(); cancelled != (status == "CANCELLED") || cancelled != strings.HasPrefix(summary, "Avbokad: ") {
			t.Errorf("event %s: status %q, summary %q, booking %s", uid, status, summary, want.Status)
		}
	}
}

// A store error, an unknown provider's included, comes before the first
// byte: the caller can still answer it as an error.
func TestRenderUnknownProviderWritesNothing(t *testing.T) {
	t.Parallel()
	store := &bookingList{provider: "prv_sthlm_vvs_1"}
	var w writes
	err := newFeed(t, store, time.Now()).Render(context.Background(), "prv_nobody", &w)
	if !errors.Is(err, bokat.ErrNotFound) || len(w.sizes) != 0 {
		t.Fatalf("err = %v after %d writes, want not found before any write", err, len(w.sizes))
	}
}

// BenchmarkRender renders a busy provider's feed (5,000 bookings): its
// bytes per operation are the feed's garbage, its peak what the writer
// holds at once.
func BenchmarkRender(b *testing.B) {
	now := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	store := &bookingList{provider: "prv_sthlm_vvs_1"}
	for i := range 5000 {
		start := now.Add(time.Duration(i) * time.Hour)
		store.bookings = append(store.bookings, bokat.Booking{ID: fmt.Sprintf("bkg_%05d", i), ProviderID: store.provider,
			Status: bokat.BookingCancelled, ServiceLabelSV: "Byte av blandare", SlotStart: start, SlotEnd: start.Add(time.Hour),
			ConfirmedAt: now, CancelledAt: now, Postcode: "11345", PriceSEK: 1200, TermsVersion: "2026-01", Sequence: 1})
	}
	f, err := New(Config{Key: bytes.Repeat([]byte{7}, MinKeyBytes), Store: store, BaseURL: "https://bokat.example", Now: func() time.Time { return now }})
	if err != nil {
		b.Fatal(err)
	}
	var w bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		w.Reset()
		if err := f.Render(context.Background(), store.provider, &w); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(w.Len()), "feed-bytes")
}
