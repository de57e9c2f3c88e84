// Package calfeed publishes each provider's bookings as an iCalendar feed
// at a secret, per-provider address: /calendar/{provider_id}/{token}.ics,
// where token is an HMAC of the provider id under a server key, so the
// address cannot be guessed from the id and needs no stored state. A
// calendar application subscribed to it shows every booking with a stable
// UID, its slot in UTC, STATUS:CANCELLED once cancelled, and a SEQUENCE
// that grows with each reschedule and the cancellation.
//
// The feed carries no customer contact data: per booking only the service,
// the postcode, the price, the terms version and the booking id. Customer
// details reach the provider in the provider notification only.
package calfeed

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	ics "github.com/arran4/golang-ical"

	"bokat"
)

// MinKeyBytes is the least length of a feed key.
const MinKeyBytes = 32

// Lookback is how far back a feed lists bookings: slots that ended more
// than this long ago are left out.
const Lookback = 30 * 24 * time.Hour

// Store is what a feed reads.
type Store interface {
	// ProviderName returns the provider's name, or bokat.ErrNotFound.
	ProviderName(ctx context.Context, providerID string) (string, error)
	// ProviderBookings returns the provider's bookings, confirmed and
	// cancelled, whose slot ends after from, ordered by slot start.
	ProviderBookings(ctx context.Context, providerID string, from time.Time) ([]bokat.CalendarBooking, error)
}

// Config configures a Feed.
type Config struct {
	// Key signs feed addresses (at least MinKeyBytes). Changing it changes
	// every provider's address.
	Key   []byte
	Store Store
	// BaseURL is the service's public address; its host also qualifies
	// event UIDs (booking id @ host).
	BaseURL string
	Now     func() time.Time
}

// Feed serves provider calendar feeds.
type Feed struct {
	key       []byte
	store     Store
	baseURL   string
	uidDomain string
	now       func() time.Time
}

// New returns a Feed.
func New(cfg Config) (*Feed, error) {
	if len(cfg.Key) < MinKeyBytes {
		return nil, fmt.Errorf("calendar feed key must be at least %d bytes", MinKeyBytes)
	}
	if cfg.Store == nil {
		return nil, errors.New("calendar feed: Store is required")
	}
	domain, err := UIDDomain(cfg.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("calendar feed: %w", err)
	}
	f := &Feed{key: append([]byte(nil), cfg.Key...), store: cfg.Store, baseURL: strings.TrimRight(cfg.BaseURL, "/"),
		uidDomain: domain, now: cfg.Now}
	if f.now == nil {
		f.now = time.Now
	}
	return f, nil
}

// Token returns the secret token of a provider's feed address.
func (f *Feed) Token(providerID string) string {
	m := hmac.New(sha256.New, f.key)
	m.Write([]byte("calendar-feed\x00"))
	m.Write([]byte(providerID))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// URL returns the full address of a provider's feed.
func (f *Feed) URL(providerID string) string {
	return f.baseURL + "/calendar/" + url.PathEscape(providerID) + "/" + f.Token(providerID) + ".ics"
}

// Verify reports, in constant time, whether token is the provider's.
func (f *Feed) Verify(providerID, token string) bool {
	return subtle.ConstantTimeCompare([]byte(token), []byte(f.Token(providerID))) == 1
}

// UIDDomain returns the domain that qualifies booking UIDs: the host of the
// service's public base URL, without a port. The feed and the notification
// invitations both use it, so a calendar that gets a booking both ways holds
// it once.
func UIDDomain(baseURL string) (string, error) {
	u, err := url.Parse(baseURL)
	if err != nil || u.Hostname() == "" {
		return "", fmt.Errorf("base URL %q has no host", baseURL)
	}
	return u.Hostname(), nil
}

// UID returns the stable iCalendar UID of a booking.
func (f *Feed) UID(bookingID string) string { return bookingID + "@" + f.uidDomain }

// serialization is how the feed is written: the library's defaults (lines
// folded at 75 octets) with CRLF line ends, as RFC 5545 requires.
var serialization = ics.SerializationConfiguration{MaxLength: 75, PropertyMaxLength: 75, NewLine: string(ics.WithNewLineWindows)}

// writeBuffer is the size of the buffer between the feed and its writer.
const writeBuffer = 32 << 10

// Render writes the provider's feed as iCalendar text to w, or returns an
// error wrapping bokat.ErrNotFound for an unknown provider. The caller must
// have verified the token. It reads the store before it writes anything,
// so a store error (not found included) comes before the first byte; an
// error after that is w's.
//
// The events are built and written one at a time: the memory a feed takes
// while it is written is its bookings and one event, not the whole
// calendar twice over (the library's tree of every event, then its text).
// A provider's feed grows with every booking and cancellation of the
// lookback and the horizon, and calendar applications fetch it again and
// again.
func (f *Feed) Render(ctx context.Context, providerID string, w io.Writer) error {
	name, err := f.store.ProviderName(ctx, providerID)
	if err != nil {
		return err
	}
	bookings, err := f.store.ProviderBookings(ctx, providerID, f.now().Add(-Lookback))
	if err != nil {
		return err
	}
	cal := ics.NewCalendarFor("Bokat")
	cal.SetProductId("-//Bokat//Leverantörskalender//SV")
	cal.SetMethod(ics.MethodPublish)
	// Supply data may hold anything: the writer escapes TEXT but passes
	// control characters through, so they are removed first.
	name = bokat.CleanText(name, false)
	cal.SetName("Bokat – " + name)
	cal.SetXWRCalName("Bokat – " + name)
	cal.SetRefreshInterval("PT15M")

	bw := bufio.NewWriterSize(w, writeBuffer)
	cfg := serialization
	// What Calendar.SerializeTo writes, with the events made one by one.
	if _, err := bw.WriteString("BEGIN:VCALENDAR" + cfg.NewLine); err != nil {
		return err
	}
	for _, p := range cal.CalendarProperties {
		if err := p.SerializeTo(bw, &cfg); err != nil {
			return err
		}
	}
	for i := range bookings {
		if err := f.event(&bookings[i]).SerializeTo(bw, &cfg); err != nil {
			return err
		}
		bookings[i] = bokat.CalendarBooking{} // written: let it go
	}
	if _, err := bw.WriteString("END:VCALENDAR" + cfg.NewLine); err != nil {
		return err
	}
	return bw.Flush()
}

// event is a booking's entry in its provider's feed.
func (f *Feed) event(b *bokat.CalendarBooking) *ics.VEvent {
	e := ics.NewEvent(f.UID(b.ID))
	changed := lastChange(*b)
	e.SetDtStampTime(changed)
	e.SetCreatedTime(b.ConfirmedAt)
	e.SetLastModifiedAt(changed)
	e.SetSequence(b.Sequence)
	e.SetStartAt(b.SlotStart)
	e.SetEndAt(b.SlotEnd)
	status := ics.ObjectStatusConfirmed
	summary := b.ServiceLabelSV
	if !b.Active() {
		status = ics.ObjectStatusCancelled
		summary = "Avbokad: " + summary
	}
	e.SetStatus(status)
	e.SetSummary(bokat.CleanText(summary, false))
	postcode := b.Postcode
	if n, ok := bokat.ParsePostcode(b.Postcode); ok {
		postcode = bokat.FormatPostcode(n)
	}
	postcode = bokat.CleanText(postcode, false)
	e.SetLocation(postcode)
	desc := fmt.Sprintf("Bokning %s\nTjänst: %s\nPostnummer: %s\nPris: %d SEK (villkor %s)",
		b.ID, b.ServiceLabelSV, postcode, b.PriceSEK, b.TermsVersion)
	if b.DestinationPostcode != "" {
		if n, ok := bokat.ParsePostcode(b.DestinationPostcode); ok {
			desc += "\nTill postnummer: " + bokat.FormatPostcode(n)
		}
	}
	desc += "\nKundens kontaktuppgifter och adress finns i bokningsbekräftelsen till er."
	e.SetDescription(bokat.CleanText(desc, true))
	return e
}

// lastChange is the time of a booking's latest change.
func lastChange(b bokat.CalendarBooking) time.Time {
	t := b.ConfirmedAt
	for _, c := range []time.Time{b.RescheduledAt, b.CancelledAt} {
		if c.After(t) {
			t = c
		}
	}
	return t
}
