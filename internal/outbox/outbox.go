// Package outbox moves booking lifecycle events from the transactional
// outbox to their webhook deliveries. The Relay turns each new outbox event
// into one delivery per enabled endpoint of the event's owner subscribed to
// its type, in the transaction that marks the event relayed. The Dispatcher
// claims due deliveries under a lease (on PostgreSQL with FOR UPDATE SKIP
// LOCKED, so several serve processes share the work), hands them to a
// Deliverer, records every attempt and schedules retries. Nothing here
// changes a booking.
package outbox

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"bokat"
	"bokat/internal/sqlstore"
)

// Reasons of a booking.provider_action_required event, carried as the
// event's data.reason.
const (
	// ReasonProviderNotificationFailed: the provider's confirmation
	// message could not be delivered, for good.
	ReasonProviderNotificationFailed = "provider_notification_failed"
	// ReasonProviderFlagged: the provider flagged the booking for follow-up.
	ReasonProviderFlagged = "provider_flagged"
)

// QueueProviderActionRequired writes a booking.provider_action_required
// outbox event for the booking in tx and returns its id. The event's data
// repeats the booking record and request id of the booking's latest outbox
// event (its state as last reported) and adds the reason; its owner is that
// event's owner. It returns bokat.ErrNotFound (wrapped) when the booking has
// no outbox event. It does not change the booking.
//
// The notification worker calls it, in the transaction that marks a
// provider message failed for good, with ReasonProviderNotificationFailed.
func QueueProviderActionRequired(ctx context.Context, tx *sqlstore.Tx, bookingID, reason string, now time.Time) (string, error) {
	latest, err := tx.LatestOutboxEvent(ctx, bookingID)
	if err != nil {
		return "", fmt.Errorf("provider action required for booking %s: %w", bookingID, err)
	}
	var prev struct {
		Booking   json.RawMessage `json:"booking"`
		RequestID json.RawMessage `json:"request_id"`
	}
	if err := json.Unmarshal(latest.Payload, &prev); err != nil || len(prev.Booking) == 0 {
		return "", fmt.Errorf("provider action required for booking %s: the latest outbox event has no booking record", bookingID)
	}
	data, err := json.Marshal(struct {
		Booking   json.RawMessage `json:"booking"`
		RequestID json.RawMessage `json:"request_id,omitempty"`
		Reason    string          `json:"reason"`
	}{prev.Booking, prev.RequestID, reason})
	if err != nil {
		return "", err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return "", err
	}
	ev := sqlstore.OutboxEvent{
		ID:            id.String(),
		OwnerClientID: latest.OwnerClientID,
		OwnerUserID:   latest.OwnerUserID,
		BookingID:     bookingID,
		EventType:     string(bokat.EventBookingProviderActionRequired),
		Payload:       data,
		OccurredAt:    now,
		CreatedAt:     now,
	}
	if err := tx.InsertOutboxEvent(ctx, ev); err != nil {
		return "", err
	}
	return ev.ID, nil
}
