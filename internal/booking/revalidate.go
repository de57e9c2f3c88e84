package booking

import (
	"context"
	"errors"
	"fmt"
	"time"

	"bokat"
	"bokat/internal/catalog"
	"bokat/internal/schedule"
)

// Revalidate checks, inside the caller's write transaction, that every fact
// of a verified option still holds against the current supply and calendar.
// It reads the store directly (never the search cache), so a confirmation
// sees what is committed now. It returns nil, or:
//
//   - booking_option_changed (409, option refresh required) when the job
//     type, service, terms version or pricing model moved on, the provider is
//     gone or inactive, no longer offers the service or covers the
//     postcode(s), or its price, labour share or job duration for the
//     option differs, or the ROT/RUT rule of the option's estimate changed;
//   - booking_option_unavailable (409, option refresh required) when the slot
//     has started, lies outside the provider's working hours or booking
//     horizon or on a day off, or overlaps an active calendar entry
//     (a booking or a blocked period);
//   - a store error.
//
// The caller must hold now constant through the transaction. To move an
// existing booking, use RevalidateExcluding so its own entry is not busy.
//
// Revalidate and RevalidateExcluding check an option for the live realm.
func (s *Search) Revalidate(ctx context.Context, tx Tx, c OptionClaims, now time.Time) error {
	return revalidate(ctx, s.cat, tx, c, now, "", bokat.ModeLive)
}

// RevalidateExcluding is Revalidate for rescheduling: the calendar entries
// of bookingID (the booking being moved) do not make the slot busy.
func (s *Search) RevalidateExcluding(ctx context.Context, tx Tx, c OptionClaims, now time.Time, bookingID string) error {
	if bookingID == "" {
		return errors.New("booking: RevalidateExcluding needs a booking id")
	}
	return revalidate(ctx, s.cat, tx, c, now, bookingID, bokat.ModeLive)
}

// revalidate is Revalidate against the catalog cat, skipping the calendar
// entries of excludeBooking when it is not empty, for a caller of the realm
// mode: an option of another realm's provider is unavailable to it, so a
// test credential never takes a live provider's time, nor the reverse.
func revalidate(ctx context.Context, cat *catalog.Catalog, tx Tx, c OptionClaims, now time.Time, excludeBooking string, mode bokat.Mode) error {
	jt, ok := cat.JobType(c.VerticalID, c.JobTypeID)
	if !ok || jt.Seed == nil || jt.Seed.ServiceID != c.ServiceID {
		return optionChanged("the job type is no longer directly bookable with this service")
	}
	svc, ok := cat.Service(c.ServiceID)
	if !ok {
		return optionChanged("the service is no longer offered")
	}
	if svc.Terms.Version != c.TermsVersion {
		return optionChanged("the service's terms have a new version")
	}
	if string(svc.PricingModel) != c.PricingModel || string(svc.PriceType) != c.PriceType {
		return optionChanged("the service's pricing model changed")
	}
	p, err := tx.ProviderSupply(ctx, c.ProviderID)
	if errors.Is(err, bokat.ErrNotFound) {
		return optionChanged("the provider is no longer listed")
	}
	if err != nil {
		return err
	}
	if p.Mode.Or() != mode.Or() {
		return optionUnavailable("the option was found in the other mode (test or live) than this credential's: search again with it")
	}
	if p.Mode.Test() && p.ID == bokat.TestProviderTaken {
		return optionUnavailable("the test provider " + bokat.TestProviderTaken + " is always taken between search and confirm")
	}
	if !p.Active {
		return optionChanged("the provider no longer takes bookings")
	}
	offer, ok := p.Service(c.ServiceID)
	if !ok {
		return optionChanged("the provider no longer offers this service")
	}
	postcodes := []string{c.Postcode}
	if c.DestinationPostcode != "" {
		postcodes = append(postcodes, c.DestinationPostcode)
	}
	for _, pc := range postcodes {
		n, ok := bokat.ParsePostcode(pc)
		if !ok || !p.Covers(n) {
			return optionChanged("the provider no longer serves the postcode(s) of the option")
		}
	}
	quantity := c.Quantity
	if !svc.PricingModel.PerUnit() {
		quantity = 1
	}
	price := PriceOf(svc, offer, quantity)
	if price.AmountSEK != c.AmountSEK || price.UnitPriceSEK != c.UnitPriceSEK || price.MinimumChargeSEK != c.MinimumChargeSEK ||
		price.Quantity != c.Quantity || price.Unit != c.Unit {
		return optionChanged("the provider's price for this job changed")
	}
	if err := checkTaxEstimate(cat, c, price.Labour); err != nil {
		return err
	}
	if JobDuration(svc, offer, quantity) != c.SlotEnd.Sub(c.SlotStart) {
		return optionChanged("the provider's time for this job changed")
	}

	if !c.SlotStart.After(now) {
		return optionUnavailable("the slot has already started")
	}
	if c.SlotEnd.After(now.In(schedule.Stockholm()).AddDate(0, 0, p.HorizonDays)) {
		return optionUnavailable("the slot is beyond the provider's booking horizon")
	}
	if c.SlotStart.Before(p.PausedUntil) {
		return optionUnavailable("the provider takes no bookings until " + p.PausedUntil.In(schedule.Stockholm()).Format("2006-01-02"))
	}
	if !withinHours(p, c.SlotStart, c.SlotEnd) {
		return optionUnavailable("the slot is outside the provider's working hours or on a day off")
	}
	busy, err := tx.BusyEntries(ctx, []string{c.ProviderID}, c.SlotStart, c.SlotEnd)
	if err != nil {
		return err
	}
	for _, e := range busy {
		if excludeBooking != "" && e.BookingID == excludeBooking {
			continue
		}
		return optionUnavailable("the slot is no longer free")
	}
	return nil
}

// withinHours reports whether [start, end) lies inside one working range of
// its Stockholm day, and that day is not a day off: the provider's hours of
// that date when it set any, else its weekly hours.
func withinHours(p bokat.ProviderSupply, start, end time.Time) bool {
	d := schedule.DateOf(start)
	if off, _ := schedule.IsNonWorkingDay(d); off {
		return false
	}
	hours := p.Hours
	if o := dayOverrides(p.DayHours); o != nil {
		if day, ok := o[d]; ok {
			hours = nil
			for _, r := range day.hours[d.Weekday()] {
				hours = append(hours, bokat.WorkingRange{Weekday: d.Weekday(), StartMinute: r.Start, EndMinute: r.End})
			}
		}
	}
	for _, h := range hours {
		if h.Weekday != d.Weekday() {
			continue
		}
		if !start.Before(d.At(h.StartMinute)) && !end.After(d.At(h.EndMinute)) {
			return true
		}
	}
	return false
}

func optionChanged(why string) *bokat.Error {
	return &bokat.Error{
		Code:                  bokat.CodeBookingOptionChanged,
		Detail:                fmt.Sprintf("The booking option no longer holds: %s.", why),
		OptionRefreshRequired: true,
		SafeNextStep:          safeNextStepRefresh,
	}
}

func optionUnavailable(why string) *bokat.Error {
	return &bokat.Error{
		Code:                  bokat.CodeBookingOptionUnavailable,
		Detail:                fmt.Sprintf("The booking option is no longer available: %s.", why),
		OptionRefreshRequired: true,
		SafeNextStep:          safeNextStepRefresh,
	}
}
