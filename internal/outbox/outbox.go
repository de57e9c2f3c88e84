// Package outbox moves booking lifecycle events from the transactional
// outbox to their webhook deliveries. The Relay turns each new outbox event
// into one delivery per enabled endpoint of the event's owner subscribed to
// its type, in the transaction that marks the event relayed. The Dispatcher
// claims due deliveries under a lease (on PostgreSQL with FOR UPDATE SKIP
// LOCKED, so several serve processes share the work), hands them to a
// Deliverer, records every attempt and schedules retries. Nothing here
// changes a booking.
package outbox
