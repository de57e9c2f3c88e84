package bokat

// EventType names a booking lifecycle event delivered to webhooks.
type EventType string

// The event types of the contract.
const (
	EventBookingConfirmed              EventType = "booking.confirmed"
	EventBookingRescheduled            EventType = "booking.rescheduled"
	EventBookingCancelled              EventType = "booking.cancelled"
	EventBookingProviderActionRequired EventType = "booking.provider_action_required"
)

// EventTypes lists every event type.
func EventTypes() []EventType {
	return []EventType{EventBookingConfirmed, EventBookingRescheduled, EventBookingCancelled, EventBookingProviderActionRequired}
}

// Notification recipients.
const (
	RecipientCustomer = "customer"
	RecipientProvider = "provider"
)

// Notification job statuses; sent, skipped and failed are also the values of
// a booking's customer_confirmation_status and provider_confirmation_status.
const (
	NotificationPending = "pending"
	NotificationSent    = "sent"
	NotificationSkipped = "skipped"
	NotificationFailed  = "failed"
)

// Reasons of a booking.provider_action_required event, carried as the
// event's data.reason.
const (
	// ReasonProviderNotificationFailed: the provider's confirmation message
	// could not be delivered, for good.
	ReasonProviderNotificationFailed = "provider_notification_failed"
	// ReasonProviderFlagged: the provider flagged the booking for follow-up.
	ReasonProviderFlagged = "provider_flagged"
	// ReasonProviderCancelled: on booking.cancelled, the provider cancelled
	// the booking (the assistant can offer to search again).
	ReasonProviderCancelled = "provider_cancelled"
	// ReasonCalendarConflict: a busy time in the provider's own calendar
	// (a synced feed) overlaps the booking.
	ReasonCalendarConflict = "calendar_conflict"
)
