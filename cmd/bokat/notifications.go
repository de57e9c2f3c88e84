package main

import (
	"context"
	"fmt"
	"strings"

	"bokat"
	"bokat/internal/booking"
	"bokat/internal/notify"
	"bokat/internal/sqlstore"
)

// bookingSource gives the notification worker what its messages say: the
// booking as it is now, its customer contact data, and the provider's
// contact data from the supply.
type bookingSource struct {
	db      *sqlstore.DB
	baseURL string
}

var _ notify.BookingSource = bookingSource{}

func (s bookingSource) NotificationBooking(ctx context.Context, bookingID string) (notify.Booking, error) {
	nb, err := s.db.NotificationBooking(ctx, bookingID)
	if err != nil {
		return notify.Booking{}, err
	}
	provider, err := s.db.ProviderContact(ctx, nb.ProviderID)
	if err != nil {
		return notify.Booking{}, fmt.Errorf("provider of booking %s: %w", bookingID, err)
	}
	return notify.Booking{
		ID: nb.ID, Status: nb.Status,
		ServiceLabelSV: nb.ServiceLabelSV, ServiceLabelEN: nb.ServiceLabelEN,
		ProviderName: nb.ProviderName, ProviderEmail: provider.Email, ProviderPhone: provider.Phone,
		CustomerName: nb.Contact.FullName(), CustomerEmail: nb.Contact.Email, CustomerPhone: nb.Contact.Phone,
		ServiceAddress:     addressLine(nb.Contact.ServiceAddress, nb.Postcode),
		DestinationAddress: addressLine(nb.Contact.DestinationAddress, nb.DestinationPostcode),
		SlotStart:          nb.SlotStart, SlotEnd: nb.SlotEnd, PriceSEK: int(nb.PriceSEK), TaxReduction: nb.TaxReduction,
		Pricing: notify.Pricing{PricingModel: nb.PricingModel, PriceType: nb.PriceType, UnitPriceSEK: int(nb.UnitPriceSEK),
			Quantity: nb.Quantity, Unit: nb.Unit, MinimumChargeSEK: int(nb.MinimumChargeSEK)},
		TermsVersion: nb.TermsVersion, TermsURL: s.baseURL + "/terms/" + nb.ServiceID,
		Locale:      nb.Locale,
		ConfirmedAt: nb.ConfirmedAt, RescheduledAt: nb.RescheduledAt, CancelledAt: nb.CancelledAt,
		CancelReason: nb.CancelReason, Sequence: nb.Sequence,
	}, nil
}

// addressLine joins a street address and a five-digit postcode ("11345")
// into one line, unless the address already names the postcode.
func addressLine(address, postcode string) string {
	if address == "" {
		return ""
	}
	n, ok := bokat.ParsePostcode(postcode)
	if !ok {
		return address
	}
	pc := bokat.FormatPostcode(n)
	if strings.Contains(address, pc) || strings.Contains(address, postcode) {
		return address
	}
	return address + ", " + pc
}

// providerFollowUp raises booking.provider_action_required when a provider
// message fails for good.
type providerFollowUp struct{ lifecycle *booking.Lifecycle }

func (f providerFollowUp) ProviderActionRequired(ctx context.Context, bookingID string) error {
	return f.lifecycle.ProviderActionRequired(ctx, bookingID, bokat.ReasonProviderNotificationFailed)
}
