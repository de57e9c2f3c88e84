package bokat

import (
	"fmt"
	"time"
)

// Provider is a company that performs jobs and owns its prices. Only active
// providers get booking options.
type Provider struct {
	ID          string
	Name        string
	City        string
	RatingLabel string
	// Email is where the provider's booking and request notifications go;
	// every provider has one. Phone is optional. Both appear only in
	// messages (to the provider, and in a confirmed booking's message to its
	// customer), never in search, options or any other API response.
	Email  string
	Phone  string
	Active bool
	// Mode is the realm the provider belongs to (empty: live): test
	// credentials search and book only test providers, live ones only live
	// providers (docs/testing.md).
	Mode Mode
	// MinNoticeMinutes is the least time between a search and the start of
	// a slot offered by the provider.
	MinNoticeMinutes int
	// HorizonDays is how many days ahead the provider's slots are offered.
	HorizonDays int
}

// PostcodeRange is an inclusive range of five-digit Swedish postcodes,
// 11100–11899 for "111 00–118 99".
type PostcodeRange struct {
	From, To int
}

// Contains reports whether the postcode (five digits as a number) lies in r.
func (r PostcodeRange) Contains(postcode int) bool { return r.From <= postcode && postcode <= r.To }

// String formats r as "111 00–118 99", or one postcode when From == To.
func (r PostcodeRange) String() string {
	if r.From == r.To {
		return FormatPostcode(r.From)
	}
	return FormatPostcode(r.From) + "–" + FormatPostcode(r.To)
}

// ProviderService is a catalog service a provider offers, with the
// provider's own price in the service's pricing model.
type ProviderService struct {
	ServiceID string
	// PriceSEK is the amount of a flat or starting-price service.
	PriceSEK int64
	// UnitPriceSEK is the price per unit of a per_item, per_hour, per_sqm or
	// per_window service.
	UnitPriceSEK int64
	// MinimumChargeSEK is the least amount of a per-unit job; zero for none.
	MinimumChargeSEK int64
	// Duration overrides the catalog's duration rule when not zero.
	Duration DurationOverride
	// Labour is the labour part of the price, when the provider states it.
	Labour LabourShare
}

// DurationOverride is a provider's own job length for a service: a fixed
// number of minutes, or minutes per unit with a minimum. The zero value
// means the catalog's rule applies.
type DurationOverride struct {
	FixedMinutes   int
	MinutesPerUnit int
	MinimumMinutes int
}

// IsZero reports whether d overrides nothing.
func (d DurationOverride) IsZero() bool { return d == DurationOverride{} }

// WorkingRange is one range of a provider's weekly working hours on the
// Europe/Stockholm wall clock, in minutes after 00:00: [StartMinute, EndMinute).
type WorkingRange struct {
	Weekday     time.Weekday
	StartMinute int
	EndMinute   int
}

// BlockedPeriod is a time a provider does not work (vacation, sick days).
type BlockedPeriod struct {
	ID         string
	Start, End time.Time
	Note       string
}

// ProviderSupply is everything the supply says about one provider.
type ProviderSupply struct {
	Provider
	Postcodes []PostcodeRange
	Services  []ProviderService
	Hours     []WorkingRange
	Blocked   []BlockedPeriod
	// Calendars are the provider's own calendars to subscribe to (the
	// supply file's calendars); the supply tables do not hold them.
	Calendars []CalendarSubscription
	// DayHours replace the weekly hours on single dates (the provider sets
	// them on its pages or through its API; a supply file has none).
	DayHours []DayHours
	// PausedUntil is zero, or the instant before which the provider takes
	// no bookings: no slot starts before it.
	PausedUntil time.Time
}

// CalendarSubscription names an iCalendar feed of a provider's own
// calendar and the rule of which of its events block ("" is the default).
type CalendarSubscription struct {
	URL  string
	Rule string
}

// DayHours is a provider's hours on one Europe/Stockholm date ("2026-03-10"),
// replacing its weekly hours that day: one working range, or for a closed
// day a single zero range (StartMinute == EndMinute == 0).
type DayHours struct {
	Day         string
	StartMinute int
	EndMinute   int
}

// Closed reports whether d closes its day.
func (d DayHours) Closed() bool { return d.StartMinute == 0 && d.EndMinute == 0 }

// Covers reports whether the provider serves the postcode.
func (p ProviderSupply) Covers(postcode int) bool {
	for _, r := range p.Postcodes {
		if r.Contains(postcode) {
			return true
		}
	}
	return false
}

// Service returns the provider's offer of a service.
func (p ProviderSupply) Service(serviceID string) (ProviderService, bool) {
	for _, s := range p.Services {
		if s.ServiceID == serviceID {
			return s, true
		}
	}
	return ProviderService{}, false
}

// Kinds of calendar entries. Every active entry makes its provider busy.
const (
	CalendarKindBooking = "booking"
	CalendarKindBlocked = "blocked"
	// CalendarKindSynced is a busy time read from one of the provider's
	// own calendars (package calsync); it may overlap a booking.
	CalendarKindSynced = "synced"
)

// CalendarEntry is a busy interval [Start, End) of a provider: a booking or
// a blocked period.
type CalendarEntry struct {
	ID         string
	ProviderID string
	// BookingID is set on booking entries only.
	BookingID string
	Kind      string
	Start     time.Time
	End       time.Time
	Active    bool
}

// ParsePostcode reads a Swedish postcode, three digits, an optional single
// space and two digits ("113 45" or "11345"), as a number.
func ParsePostcode(s string) (int, bool) {
	if len(s) == 6 && s[3] == ' ' {
		s = s[:3] + s[4:]
	}
	if len(s) != 5 || s[0] == '0' {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// FormatPostcode writes a postcode number as "113 45".
func FormatPostcode(n int) string {
	return fmt.Sprintf("%03d %02d", n/100, n%100)
}

// PostcodeKey writes a postcode number in its compact form, "11345".
func PostcodeKey(n int) string { return fmt.Sprintf("%05d", n) }

// ProviderContact is how to reach a provider. It is for notification code
// only: contact data never goes into API responses, logs or events.
type ProviderContact struct {
	ID     string
	Name   string
	Email  string
	Phone  string
	Active bool
}
