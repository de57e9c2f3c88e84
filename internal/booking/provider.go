package booking

import (
	"context"
	"time"

	"bokat"
)

// ProviderActionRequiredInTx writes the booking.provider_action_required
// event of booking b with the reason in the event's data (no notification
// jobs), inside the caller's transaction: a provider who flags a booking
// (bokat.ReasonProviderFlagged) writes the event with its own audit row.
func ProviderActionRequiredInTx(ctx context.Context, tx Tx, b bokat.Booking, reason string, now time.Time) error {
	_, err := writeEvent(ctx, tx, b, bokat.EventBookingProviderActionRequired, reason, now)
	return err
}

// CancelByProviderInTx cancels the confirmed booking b for its provider
// inside tx, as Cancel does for its owner: status cancelled (the contract's
// reason other, the provider's notes kept sealed as the cancel notes), the
// sequence raised, the slot freed, and the booking.cancelled event, whose
// data.reason is bokat.ReasonProviderCancelled, queued with the customer and
// provider notifications. It returns bokat.ErrNotFound unless b is
// confirmed.
func CancelByProviderInTx(ctx context.Context, tx Tx, b bokat.Booking, notes string, now time.Time) error {
	b.Status, b.CancelledAt, b.CancelReason = bokat.BookingCancelled, now, "other"
	b.Sequence++
	b.CustomerConfirmationStatus, b.ProviderConfirmationStatus = "", ""
	if err := tx.CancelBooking(ctx, b, notes, now); err != nil {
		return err
	}
	return queue(ctx, tx, b, bokat.EventBookingCancelled, bokat.ReasonProviderCancelled, now)
}
