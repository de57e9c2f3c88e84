// Package calsync keeps providers' own calendars in Bokat: it polls each
// provider's iCalendar subscriptions (Google, Outlook, iCloud or any .ics
// address), reads the busy times they hold over the provider's booking
// horizon, and replaces the feed's busy intervals in the provider's
// calendar in one transaction, so the next search sees them. It declares
// the store it needs (store.go); package sqlstore implements it.
package calsync
