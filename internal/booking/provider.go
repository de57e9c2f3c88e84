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
