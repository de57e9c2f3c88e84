package booking

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"bokat"
	"bokat/internal/catalog"
	"bokat/internal/idem"
	"bokat/internal/outbox"
	"bokat/internal/schedule"
)

// Idempotency operations: keys are scoped to the principal and these.
const (
	OpConfirm    = "bookings.confirm"
	OpCancel     = "bookings.cancel"
	OpReschedule = "bookings.reschedule"
)

// Defaults of stored values the caller may leave out.
const (
	DefaultLocale = "sv-SE"
	DefaultSource = "external_model"
)

// Lifecycle confirms, reads, cancels and reschedules bookings. Every write
// is one transaction holding the idempotency record, the booking change,
// its calendar entry, the outbox event and the customer and provider
// notification jobs; nothing else writes a booking. It is safe for
// concurrent use.
type Lifecycle struct {
	db       Store
	cat      *catalog.Catalog
	keys     *Keyring
	now      func() time.Time
	onQueued func()
}

// LifecycleConfig holds a Lifecycle's dependencies.
type LifecycleConfig struct {
	Store Store
	// Catalog is the catalog options are revalidated against; it must be
	// the one search issues options from.
	Catalog *catalog.Catalog
	// Keys verifies options (it must hold search's signing keys) and
	// derives the elicitation state key. Nil means signing is not
	// configured: writes of an option answer option_signing_not_configured
	// (503).
	Keys *Keyring
	// Now is the clock (default time.Now).
	Now func() time.Time
	// OnQueued, when not nil, is called after a write committed
	// notification jobs (the serve process wakes its notification worker
	// with it).
	OnQueued func()
}

// NewLifecycle returns the booking lifecycle for the configuration.
func NewLifecycle(cfg LifecycleConfig) (*Lifecycle, error) {
	if cfg.Store == nil || cfg.Catalog == nil {
		return nil, errors.New("booking: NewLifecycle needs a store and a catalog")
	}
	l := &Lifecycle{db: cfg.Store, cat: cfg.Catalog, keys: cfg.Keys, now: cfg.Now, onQueued: cfg.OnQueued}
	if l.now == nil {
		l.now = time.Now
	}
	return l, nil
}

// nowFor is the now of the principal's request: the server's, or in the
// test realm its owner's test clock (bokat.WithTestClock).
func (l *Lifecycle) nowFor(ctx context.Context, p bokat.Principal) time.Time {
	return bokat.RealmNow(ctx, p.Realm(), l.now().UTC())
}

// queued passes on the result of a write that queues notification jobs,
// calling onQueued once its transaction committed (a replay queued none).
func (l *Lifecycle) queued(out idem.Outcome, replay bool, err error) (idem.Outcome, bool, error) {
	if err == nil && !replay && l.onQueued != nil {
		l.onQueued()
	}
	return out, replay, err
}

// Render turns the outcome of a write into the response stored with its
// idempotency key and answered to the caller (and, on a replay, answered
// again).
type Render func(bokat.Booking) (idem.Outcome, error)

// Location is a confirmation location: the job's address and its postcode.
type Location struct {
	Address  string
	Postcode string // as sent: "113 45" or "11345"
}

// ConfirmInput is a confirmation request, already checked against the
// contract's schema.
type ConfirmInput struct {
	OptionID string
	// Customer holds the contact data; its addresses are ignored (see the
	// locations).
	Customer            bokat.BookingContact
	ServiceLocation     Location
	DestinationLocation *Location
	ConsentConfirmed    bool
	Consent             bokat.BookingConsent
	TermsAccepted       bool
	TermsVersion        string
	TermsAcceptedAt     time.Time
	Source              string
	ExternalReference   string
}

// Confirm books the option of in for the principal, guarded by the
// idempotency key (kept as long as the booking). It returns the stored
// outcome and whether it is a replay. Errors are *bokat.Error:
//
//   - 400 consent_required, terms_not_accepted, terms_version_mismatch,
//     postcode_mismatch, validation_failed (destination missing or
//     superfluous), booking_option_invalid;
//   - 409 booking_option_expired, booking_option_changed,
//     booking_option_unavailable (all with option refresh required),
//     idempotency_key_reused, idempotency_request_in_progress;
//   - 503 option_signing_not_configured; or a store error.
//
// A request repeating an earlier successful one with the same key gets
// that outcome back even when its option has expired since.
func (l *Lifecycle) Confirm(ctx context.Context, p bokat.Principal, in ConfirmInput, key idem.Key,
	fingerprint string, render Render) (idem.Outcome, bool, error) {
	w, err := l.openOptionWrite(ctx, p, key, OpConfirm, ConsentFlags{UserConsent: in.ConsentConfirmed, TermsAccepted: in.TermsAccepted},
		optionEcho{in.OptionID, in.TermsVersion, in.TermsAcceptedAt, in.ServiceLocation, in.DestinationLocation, true},
		func(claims OptionClaims) (ConsentSummary, error) { return l.optionSummary(ctx, "confirm", claims) })
	if err != nil {
		return idem.Outcome{}, false, err
	}
	return l.queued(l.db.InIdempotentTx(ctx, key, fingerprint, w.now, time.Time{}, func(tx Tx) (idem.Outcome, error) {
		claims, now := w.claims, w.now
		method, err := w.begin(ctx, tx)
		if err != nil {
			return idem.Outcome{}, err
		}
		in.Consent.Method = method
		if err := l.holdSlot(ctx, tx, claims, now, "", p.Realm()); err != nil {
			return idem.Outcome{}, err
		}
		providerName, err := tx.ProviderName(ctx, claims.ProviderID)
		if err != nil {
			return idem.Outcome{}, fmt.Errorf("read the provider: %w", err)
		}
		svc, _ := l.cat.Service(claims.ServiceID) // Revalidate checked it exists
		locale := claims.Locale
		if locale == "" {
			locale = DefaultLocale
		}
		source := in.Source
		if strings.TrimSpace(source) == "" {
			source = DefaultSource
		}
		b := bokat.Booking{
			ID: newID(bokat.BookingIDPrefix), RequestID: newID(bokat.BookingRequestIDPrefix), OwnerClientID: p.ClientID, OwnerUserID: p.UserID,
			Mode:       p.Realm(),
			Status:     bokat.BookingConfirmed,
			ProviderID: claims.ProviderID, ProviderName: providerName,
			ServiceID: claims.ServiceID, VerticalID: claims.VerticalID, JobTypeID: claims.JobTypeID,
			ServiceLabelSV: svc.LabelSV, ServiceLabelEN: svc.LabelEN,
			Locale: locale, Source: source, ExternalReference: in.ExternalReference,
			ConfirmedAt: now,
		}
		applyOption(&b, claims, in.TermsAcceptedAt)
		b.TaxReduction = estimateOf(l.cat, claims)
		contact := in.Customer
		contact.ServiceAddress = in.ServiceLocation.Address
		contact.DestinationAddress = ""
		if in.DestinationLocation != nil {
			contact.DestinationAddress = in.DestinationLocation.Address
		}
		err = tx.InsertBooking(ctx, b, contact, in.Consent, newID(bokat.CalendarEventIDPrefix), now)
		if errors.Is(err, ErrSlotTaken) {
			return idem.Outcome{}, optionUnavailable("the slot was just booked by someone else")
		}
		if err != nil {
			return idem.Outcome{}, err
		}
		return recordChange(ctx, tx, b, bokat.EventBookingConfirmed, now, render)
	}))
}

// applyOption copies the facts of a verified, revalidated option to b.
func applyOption(b *bokat.Booking, c OptionClaims, termsAcceptedAt time.Time) {
	b.SlotStart, b.SlotEnd = c.SlotStart.UTC(), c.SlotEnd.UTC()
	b.SlotLabel = schedule.SlotLabel(schedule.Interval{Start: c.SlotStart, End: c.SlotEnd}, b.Locale)
	b.PriceSEK, b.PricingModel, b.PriceType = c.AmountSEK, c.PricingModel, c.PriceType
	b.UnitPriceSEK, b.Quantity, b.Unit, b.MinimumChargeSEK = c.UnitPriceSEK, c.Quantity, c.Unit, c.MinimumChargeSEK
	b.TermsVersion, b.TermsAcceptedAt = c.TermsVersion, termsAcceptedAt.UTC()
	b.Postcode, b.DestinationPostcode = c.Postcode, c.DestinationPostcode
}

// optionEcho is what a write that books an option sends besides its id:
// the terms version and acceptance time, and the locations, whose postcodes
// must be the option's. destinationRequired says a missing destination
// location is an error when the option has a destination (a reschedule may
// keep the booking's).
type optionEcho struct {
	optionID            string
	termsVersion        string
	termsAcceptedAt     time.Time
	service             Location
	destination         *Location
	destinationRequired bool
}

// optionWrite is what a write that books an option (Confirm, Reschedule)
// knows before its transaction: the one now it runs at, the option's
// claims, and the option's failed checks (see begin).
type optionWrite struct {
	now    time.Time
	claims OptionClaims
	optErr error
}

// openOptionWrite is the opening Confirm and Reschedule share, in order:
// the consent rule of op, the option verified and the request's echo of
// it checked, a consent preview answered with summary (the error is then
// ErrPreviewed, or why no preview can be shown), and a failed option check
// answered at once unless the key is already stored — the transaction then
// answers the replay (or idempotency_key_reused).
func (l *Lifecycle) openOptionWrite(ctx context.Context, p bokat.Principal, key idem.Key, op string, flags ConsentFlags, echo optionEcho,
	summary func(OptionClaims) (ConsentSummary, error)) (optionWrite, error) {
	if err := CheckConsent(op, flags); err != nil {
		return optionWrite{}, err
	}
	w := optionWrite{now: l.nowFor(ctx, p)}
	w.claims, w.optErr = l.checkOption(echo, w.now)
	if done, err := l.previewing(ctx, key, w.optErr, func() (ConsentSummary, error) { return summary(w.claims) }); done {
		return optionWrite{}, err
	}
	if err := l.unlessReplay(ctx, key, w.optErr); err != nil {
		return optionWrite{}, err
	}
	return w, nil
}

// begin opens the write's transaction: it fails with the option's failed
// checks (a replay never gets here: its stored outcome is answered first),
// then uses the elicitation nonce, if any, and returns the consent method.
func (w optionWrite) begin(ctx context.Context, tx Tx) (bokat.ConsentMethod, error) {
	if w.optErr != nil {
		return "", w.optErr
	}
	return consentMethod(ctx, tx, w.now)
}

// holdSlot serialises tx with the other writers of the option's provider
// calendar and revalidates the option (see Search.Revalidate) against what
// is committed for a caller of the realm mode; the entries of the booking
// excludeBooking, when not empty, do not make the slot busy.
func (l *Lifecycle) holdSlot(ctx context.Context, tx Tx, claims OptionClaims, now time.Time, excludeBooking string, mode bokat.Mode) error {
	if err := tx.LockProviderCalendar(ctx, claims.ProviderID); err != nil {
		return err
	}
	return revalidate(ctx, l.cat, tx, claims, now, excludeBooking, mode)
}

// activeBookingForUpdate is the principal's booking bookingID held for
// update in tx: 404 booking_not_found or 409 booking_not_active otherwise.
func activeBookingForUpdate(ctx context.Context, tx Tx, p bokat.Principal, bookingID string) (bokat.Booking, error) {
	b, err := tx.OwnedBookingForUpdate(ctx, bookingID, p.ClientID, p.UserID)
	if errors.Is(err, bokat.ErrNotFound) {
		return b, bookingNotFound()
	}
	if err != nil {
		return b, err
	}
	if !b.Active() {
		return b, bookingNotActive(b)
	}
	return b, nil
}

// recordChange ends the transaction of a booking change: the event and
// notification jobs queued (queue), and the outcome rendered for b.
func recordChange(ctx context.Context, tx Tx, b bokat.Booking, ev bokat.EventType, now time.Time, render Render) (idem.Outcome, error) {
	if err := queue(ctx, tx, b, ev, "", now); err != nil {
		return idem.Outcome{}, err
	}
	out, err := render(b)
	out.ResourceID = b.ID
	return out, err
}

// unlessReplay returns optErr, the failed checks of a write's option,
// unless the idempotency key is already stored: then the write goes on to
// its transaction, which answers the replay (or idempotency_key_reused).
func (l *Lifecycle) unlessReplay(ctx context.Context, key idem.Key, optErr error) error {
	if optErr == nil {
		return nil
	}
	if key.Key == "" {
		return optErr
	}
	known, err := l.db.IdempotencyKeyExists(ctx, key)
	if err != nil {
		return err
	}
	if !known {
		return optErr
	}
	return nil
}

// checkOption verifies an option id and the request's echo of it: the
// terms version and acceptance time, and the postcodes.
func (l *Lifecycle) checkOption(echo optionEcho, now time.Time) (OptionClaims, error) {
	termsVersion, service, destination := echo.termsVersion, echo.service, echo.destination
	claims, err := l.keys.Verify(echo.optionID, now)
	if err != nil {
		return claims, err
	}
	if termsVersion != claims.TermsVersion {
		return claims, &bokat.Error{
			Code: bokat.CodeTermsVersionMismatch,
			Detail: fmt.Sprintf("booking_terms_version must equal the chosen option's terms.version exactly (%s).",
				claims.TermsVersion),
			Issues: []string{"booking_terms_version: must equal the option's terms.version"},
			SafeNextStep: "Show the user the option's terms (terms.url) of version terms.version, and send that version " +
				"unchanged once they accept it. Nothing was booked.",
		}
	}
	if err := checkTermsAcceptedAt(echo.termsAcceptedAt, claims.IssuedAt, now); err != nil {
		return claims, err
	}
	if !samePostcode(service.Postcode, claims.Postcode) {
		return claims, postcodeMismatch("service_location.postcode", "the postcode the option was searched for")
	}
	switch {
	case claims.DestinationPostcode == "" && destination != nil:
		return claims, &bokat.Error{Code: bokat.CodeValidationFailed,
			Detail: "The chosen option has no destination; leave destination_location out.",
			Issues: []string{"destination_location: the chosen option has no destination"}}
	case claims.DestinationPostcode != "" && destination == nil && echo.destinationRequired:
		return claims, &bokat.Error{Code: bokat.CodeValidationFailed,
			Detail: "The chosen option has a destination: destination_location is required.",
			Issues: []string{"destination_location: required when the chosen option has a destination"}}
	case destination != nil && !samePostcode(destination.Postcode, claims.DestinationPostcode):
		return claims, postcodeMismatch("destination_location.postcode", "the destination postcode the option was searched for")
	}
	return claims, nil
}

// TermsClockSkew is how far booking_terms_accepted_at may lie before the
// option's issue time or after now: the caller's clock and ours differ.
const TermsClockSkew = 5 * time.Minute

// checkTermsAcceptedAt refuses a terms acceptance time the user cannot have
// accepted the option's terms at: before the option was issued (the terms
// were not yet shown) or in the future, each beyond TermsClockSkew.
func checkTermsAcceptedAt(at, issuedAt, now time.Time) error {
	if !at.Before(issuedAt.Add(-TermsClockSkew)) && !at.After(now.Add(TermsClockSkew)) {
		return nil
	}
	return &bokat.Error{Code: bokat.CodeValidationFailed,
		Detail: fmt.Sprintf("booking_terms_accepted_at must be when the user accepted the option's terms: after the "+
			"search that issued the option and not in the future (%d minutes of clock skew allowed).", int(TermsClockSkew.Minutes())),
		Issues: []string{fmt.Sprintf("booking_terms_accepted_at: must lie between the option's issue time and now, "+
			"within %d minutes of clock skew", int(TermsClockSkew.Minutes()))},
		SafeNextStep: "Send the time the user accepted the terms of this option, in RFC 3339 with offset. Nothing was changed.",
	}
}

// samePostcode compares a postcode as sent with an option's five digits.
func samePostcode(sent, option string) bool {
	n, ok := bokat.ParsePostcode(sent)
	return ok && bokat.PostcodeKey(n) == option
}

func postcodeMismatch(field, what string) *bokat.Error {
	return &bokat.Error{
		Code:   bokat.CodePostcodeMismatch,
		Detail: fmt.Sprintf("%s must equal %s. Options are priced and checked for one postcode.", field, what),
		Issues: []string{field + ": must equal " + what},
		SafeNextStep: "Nothing was booked. If the job is at another address, search again with its postcode and let " +
			"the user choose again; otherwise send the option's postcode.",
	}
}

// ConsentFlags are what the caller of a booking write declares the user
// agreed to: their consent to share their personal data with the provider
// (confirm), their fresh confirmation of the change (cancel, reschedule),
// and the option's terms (confirm, reschedule).
type ConsentFlags struct {
	UserConsent      bool
	UserConfirmation bool
	TermsAccepted    bool
}

// CheckConsent is the consent rule of the booking writes, the one place it
// is stated. The write op (OpConfirm, OpCancel or OpReschedule) needs, in
// this order: the user's consent (confirm), their fresh confirmation
// (cancel, reschedule), and the terms (confirm, reschedule); the first one
// missing is the error — 400 consent_required or terms_not_accepted. Flags
// op does not ask for are ignored.
//
// Confirm, Cancel and Reschedule apply it to their input before anything
// else. A transport may apply it earlier, to the flags of a request it has
// not yet decoded, so that a missing agreement is answered before any other
// fault of the request and its personal data is not processed without it
// (the REST API's keyed writes do).
func CheckConsent(op string, f ConsentFlags) error {
	var (
		consent, terms bool
		confirmation   string // the change the user confirms, if asked
	)
	switch op {
	case OpConfirm:
		consent, terms = true, true
	case OpCancel:
		confirmation = "cancel"
	case OpReschedule:
		confirmation, terms = "reschedule", true
	default:
		return fmt.Errorf("booking: no consent rule for the operation %q", op)
	}
	switch {
	case consent && !f.UserConsent:
		return consentRequired()
	case confirmation != "" && !f.UserConfirmation:
		return userConfirmationRequired(confirmation)
	case terms && !f.TermsAccepted:
		return termsNotAccepted()
	}
	return nil
}

// consentRequired is the error of a confirmation without the user's
// explicit consent.
func consentRequired() *bokat.Error {
	return &bokat.Error{
		Code:   bokat.CodeConsentRequired,
		Detail: "The user's explicit consent is required (user_consent_confirmed: true) before a booking is confirmed with their personal data.",
		Issues: []string{"user_consent_confirmed: must be true"},
		SafeNextStep: "Ask the user whether they consent to sharing their name, phone, e-mail and address with the chosen " +
			"provider to book this option; confirm only with user_consent_confirmed true. Nothing was booked.",
	}
}

// termsNotAccepted is the error of a confirmation or reschedule whose terms
// are not accepted.
func termsNotAccepted() *bokat.Error {
	return &bokat.Error{
		Code:   bokat.CodeTermsNotAccepted,
		Detail: "The user must accept the option's terms (booking_terms_accepted: true).",
		Issues: []string{"booking_terms_accepted: must be true"},
		SafeNextStep: "Show the user the option's terms (terms.url, version terms.version) and ask whether they accept " +
			"them; send booking_terms_accepted true only after they do. Nothing was changed.",
	}
}

// userConfirmationRequired is the error of a cancel or reschedule without
// the user's fresh, explicit confirmation (what: "cancel", "reschedule").
// It shares the code consent_required: the user has not agreed to the change.
func userConfirmationRequired(what string) *bokat.Error {
	return &bokat.Error{
		Code:   bokat.CodeConsentRequired,
		Detail: fmt.Sprintf("The user's fresh, explicit confirmation is required (user_confirmation_confirmed: true) to %s the booking.", what),
		Issues: []string{"user_confirmation_confirmed: must be true"},
		SafeNextStep: fmt.Sprintf("Ask the user now whether they want to %s this booking; send the request only with "+
			"user_confirmation_confirmed true after they say yes. Nothing was changed.", what),
	}
}

func bookingNotFound() *bokat.Error {
	return &bokat.Error{
		Code:   bokat.CodeBookingNotFound,
		Detail: "No booking with this id is visible to the authenticated caller.",
		SafeNextStep: "Check the booking id (booking.id of the confirmation) and that you use the credential that " +
			"confirmed it. Do not tell the user anything about this booking.",
	}
}

func bookingNotActive(b bokat.Booking) *bokat.Error {
	return &bokat.Error{
		Code:   bokat.CodeBookingNotActive,
		Detail: fmt.Sprintf("The booking is %s; it can no longer be changed.", b.Status),
		SafeNextStep: "Tell the user the booking is cancelled and nothing was changed. To book again, search booking " +
			"options and confirm a new choice.",
	}
}

// queue writes the outbox event of a booking change (with reason in its
// data, or none) and a customer and a provider notification job for it, in
// the change's transaction.
func queue(ctx context.Context, tx Tx, b bokat.Booking, ev bokat.EventType, reason string, now time.Time) error {
	outboxID, err := writeEvent(ctx, tx, b, ev, reason, now)
	if err != nil {
		return err
	}
	for _, recipient := range []string{bokat.RecipientCustomer, bokat.RecipientProvider} {
		err := tx.InsertNotificationJob(ctx, bokat.NotificationJob{
			ID: newID(bokat.NotificationIDPrefix), OutboxID: outboxID, BookingID: b.ID, EventType: string(ev), Recipient: recipient,
			Status: bokat.NotificationPending, NextAttemptAt: bokat.ServerTime(ctx, b.Mode, now), CreatedAt: now, Mode: b.Mode.Or(),
		})
		if err != nil {
			return fmt.Errorf("queue the %s notification: %w", recipient, err)
		}
	}
	return nil
}

func writeEvent(ctx context.Context, tx Tx, b bokat.Booking, ev bokat.EventType, reason string, now time.Time) (string, error) {
	payload, err := eventPayload(b, reason)
	if err != nil {
		return "", err
	}
	id := uuid.Must(uuid.NewV7()).String()
	err = tx.InsertOutboxEvent(ctx, outbox.Event{
		ID: id, OwnerClientID: b.OwnerClientID, OwnerUserID: b.OwnerUserID, BookingID: b.ID,
		EventType: string(ev), Payload: payload, OccurredAt: now, CreatedAt: bokat.ServerTime(ctx, b.Mode, now), Mode: b.Mode.Or(),
	})
	if err != nil {
		return "", fmt.Errorf("write the %s event: %w", ev, err)
	}
	return id, nil
}

// Status returns the booking whose id or request id is idOrRequestID when
// the principal owns it, or bokat.ErrNotFound (an unknown id and another
// owner's booking look alike).
func (l *Lifecycle) Status(ctx context.Context, p bokat.Principal, idOrRequestID string) (bokat.Booking, error) {
	return l.db.OwnedBooking(ctx, idOrRequestID, p.ClientID, p.UserID)
}

// CancelInput is a cancel request, already checked against the schema.
type CancelInput struct {
	UserConfirmed bool
	Reason        string
	Notes         string
}

// Cancel cancels the principal's booking, guarded by the idempotency key:
// status cancelled, the slot freed, the booking.cancelled event and the
// customer and provider notifications queued, all in one transaction.
// Errors are *bokat.Error: 400 consent_required (no fresh user
// confirmation), 404 booking_not_found (unknown or another owner's), 409
// booking_not_active (already cancelled, with a new key),
// idempotency_key_reused, idempotency_request_in_progress; or a store error.
func (l *Lifecycle) Cancel(ctx context.Context, p bokat.Principal, bookingID string, in CancelInput, key idem.Key,
	fingerprint string, render Render) (idem.Outcome, bool, error) {
	if err := CheckConsent(OpCancel, ConsentFlags{UserConfirmation: in.UserConfirmed}); err != nil {
		return idem.Outcome{}, false, err
	}
	now := l.nowFor(ctx, p)
	if done, err := l.previewing(ctx, key, nil, func() (ConsentSummary, error) {
		b, err := l.ActiveBooking(ctx, p, bookingID)
		return l.bookingSummary("cancel", b), err
	}); done {
		return idem.Outcome{}, false, err
	}
	return l.queued(l.db.InIdempotentTx(ctx, key, fingerprint, now, time.Time{}, func(tx Tx) (idem.Outcome, error) {
		method, err := consentMethod(ctx, tx, now)
		if err != nil {
			return idem.Outcome{}, err
		}
		b, err := activeBookingForUpdate(ctx, tx, p, bookingID)
		if err != nil {
			return idem.Outcome{}, err
		}
		b.Status, b.CancelledAt, b.CancelReason = bokat.BookingCancelled, now, in.Reason
		b.Sequence++
		b.CustomerConfirmationStatus, b.ProviderConfirmationStatus = "", ""
		if err := tx.CancelBooking(ctx, b, in.Notes, now); err != nil {
			return idem.Outcome{}, err
		}
		if err := tx.RecordChangeConsent(ctx, b.ID, method); err != nil {
			return idem.Outcome{}, err
		}
		return recordChange(ctx, tx, b, bokat.EventBookingCancelled, now, render)
	}))
}

// CancelInTx cancels the confirmed booking b inside tx for the operator
// (no principal, no idempotency key), as Cancel does for its owner: status
// cancelled with reason, the sequence raised, the slot freed, and the
// booking.cancelled event and the customer and provider notifications
// queued. It returns bokat.ErrNotFound unless b is confirmed. It serves
// the erasure of a person's data (`bokat privacy erase --cancel-future`).
func CancelInTx(ctx context.Context, tx Tx, b bokat.Booking, reason string, now time.Time) error {
	b.Status, b.CancelledAt, b.CancelReason = bokat.BookingCancelled, now, reason
	b.Sequence++
	b.CustomerConfirmationStatus, b.ProviderConfirmationStatus = "", ""
	if err := tx.CancelBooking(ctx, b, "", now); err != nil {
		return err
	}
	return queue(ctx, tx, b, bokat.EventBookingCancelled, "", now)
}

// RescheduleInput is a reschedule request, already checked against the
// schema.
type RescheduleInput struct {
	OptionID        string
	ServiceLocation Location
	// DestinationLocation may be left out: the booking's destination is
	// kept, and must match the option's.
	DestinationLocation *Location
	UserConfirmed       bool
	TermsAccepted       bool
	TermsVersion        string
	TermsAcceptedAt     time.Time
	// Also, when set, runs inside the reschedule's transaction once the
	// booking has moved (b is the moved booking), before its event and
	// notifications are queued: the operator console writes its audit row
	// there, so the move and its record commit together.
	Also func(ctx context.Context, tx Tx, b bokat.Booking, now time.Time) error
}

// Reschedule moves the principal's booking to a freshly searched option of
// the same service and provider, guarded by the idempotency key: the
// option is verified and revalidated like a confirmation (the booking's own
// calendar entry does not make the new slot busy), then the booking keeps
// its id and takes the option's slot and price, its calendar entry moves
// (the old slot is freed, the new one held to the no-overlap rule), its
// sequence grows by one, and the booking.rescheduled event and the
// notifications are queued — one transaction. Errors are those of Confirm,
// plus 404 booking_not_found, 409 booking_not_active, and 409
// booking_option_changed for an option of another service or provider.
func (l *Lifecycle) Reschedule(ctx context.Context, p bokat.Principal, bookingID string, in RescheduleInput,
	key idem.Key, fingerprint string, render Render) (idem.Outcome, bool, error) {
	w, err := l.openOptionWrite(ctx, p, key, OpReschedule, ConsentFlags{UserConfirmation: in.UserConfirmed, TermsAccepted: in.TermsAccepted},
		optionEcho{in.OptionID, in.TermsVersion, in.TermsAcceptedAt, in.ServiceLocation, in.DestinationLocation, false},
		func(claims OptionClaims) (ConsentSummary, error) {
			b, err := l.ActiveBooking(ctx, p, bookingID)
			if err != nil {
				return ConsentSummary{}, err
			}
			if claims.ServiceID != b.ServiceID || claims.ProviderID != b.ProviderID {
				return ConsentSummary{}, otherProviderOption()
			}
			return l.optionSummary(ctx, "reschedule", claims)
		})
	if err != nil {
		return idem.Outcome{}, false, err
	}
	return l.queued(l.db.InIdempotentTx(ctx, key, fingerprint, w.now, time.Time{}, func(tx Tx) (idem.Outcome, error) {
		claims, now := w.claims, w.now
		method, err := w.begin(ctx, tx)
		if err != nil {
			return idem.Outcome{}, err
		}
		b, err := activeBookingForUpdate(ctx, tx, p, bookingID)
		if err != nil {
			return idem.Outcome{}, err
		}
		if claims.ServiceID != b.ServiceID || claims.ProviderID != b.ProviderID {
			return idem.Outcome{}, otherProviderOption()
		}
		if in.DestinationLocation == nil && claims.DestinationPostcode != b.DestinationPostcode {
			return idem.Outcome{}, postcodeMismatch("destination_location.postcode",
				"the destination postcode the option was searched for (send destination_location)")
		}
		if err := l.holdSlot(ctx, tx, claims, now, b.ID, p.Realm()); err != nil {
			return idem.Outcome{}, err
		}
		contact, err := tx.BookingAddresses(ctx, b.ID)
		if err != nil {
			return idem.Outcome{}, err
		}
		contact.ServiceAddress = in.ServiceLocation.Address
		if in.DestinationLocation != nil {
			contact.DestinationAddress = in.DestinationLocation.Address
		}
		applyOption(&b, claims, in.TermsAcceptedAt)
		b.TaxReduction = estimateOf(l.cat, claims)
		b.RescheduledAt = now
		b.Sequence++
		b.CustomerConfirmationStatus, b.ProviderConfirmationStatus = "", ""
		err = tx.MoveBooking(ctx, b, contact, now)
		if errors.Is(err, ErrSlotTaken) {
			return idem.Outcome{}, optionUnavailable("the slot was just booked by someone else")
		}
		if err != nil {
			return idem.Outcome{}, err
		}
		if err := tx.RecordChangeConsent(ctx, b.ID, method); err != nil {
			return idem.Outcome{}, err
		}
		if in.Also != nil {
			if err := in.Also(ctx, tx, b, now); err != nil {
				return idem.Outcome{}, err
			}
		}
		return recordChange(ctx, tx, b, bokat.EventBookingRescheduled, now, render)
	}))
}

// ProviderActionRequired writes the booking.provider_action_required event
// of a booking (no notification jobs) in a transaction of its own, with the
// reason in the event's data, e.g. "provider_notification_failed". It
// returns an error wrapping bokat.ErrNotFound for an unknown booking.
func (l *Lifecycle) ProviderActionRequired(ctx context.Context, bookingID, reason string) error {
	return l.db.InTx(ctx, func(tx Tx) error {
		b, err := tx.BookingByID(ctx, bookingID)
		if err != nil {
			return fmt.Errorf("booking %s: %w", bookingID, err)
		}
		ctx, now, err := OwnerNow(ctx, tx, b, l.now().UTC())
		if err != nil {
			return err
		}
		_, err = writeEvent(ctx, tx, b, bokat.EventBookingProviderActionRequired, reason, now)
		return err
	})
}

// newID returns prefix followed by a UUIDv7 in 32 hex digits: unique and
// ordered by creation time.
func newID(prefix string) string {
	return prefix + strings.ReplaceAll(uuid.Must(uuid.NewV7()).String(), "-", "")
}

// otherProviderOption is the error of a reschedule to an option of another
// service or provider.
func otherProviderOption() *bokat.Error {
	return &bokat.Error{
		Code:                  bokat.CodeBookingOptionChanged,
		Detail:                "A booking moves only to an option of the same service and provider; this option is for another.",
		OptionRefreshRequired: true,
		SafeNextStep: "Nothing was changed. Search again for the same job and let the user choose an option of " +
			"the booked provider (provider.id equal to the booking's provider_id). To switch provider, cancel " +
			"this booking after the user confirms, then confirm the new option.",
	}
}

// ActiveBooking is the principal's active booking bookingID, read outside
// a transaction: 404 booking_not_found or 409 booking_not_active otherwise.
func (l *Lifecycle) ActiveBooking(ctx context.Context, p bokat.Principal, bookingID string) (bokat.Booking, error) {
	b, err := l.Status(ctx, p, bookingID)
	if errors.Is(err, bokat.ErrNotFound) {
		return b, bookingNotFound()
	}
	if err != nil {
		return b, err
	}
	if !b.Active() {
		return b, bookingNotActive(b)
	}
	return b, nil
}

// OwnerNow is bokat.OwnerNow for booking b, its owner's clock read in tx:
// the server's now for a live booking, its owner's test clock for a test
// one, and a context carrying that clock for the writes that follow.
func OwnerNow(ctx context.Context, tx Tx, b bokat.Booking, now time.Time) (context.Context, time.Time, error) {
	ctx, now, err := bokat.OwnerNow(ctx, tx, b.Mode, b.OwnerClientID, b.OwnerUserID, now)
	if err != nil {
		return ctx, now, fmt.Errorf("read the test clock of booking %s: %w", b.ID, err)
	}
	return ctx, now, nil
}
