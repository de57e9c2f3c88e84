package booking

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"bokat"
	"bokat/internal/idem"
)

// Elicitation, carried in the context of a write (WithElicitation), lets
// Confirm, Cancel and Reschedule take part in the consent form an MCP client
// shows its user (package mcp): first a preview that runs the write's checks
// and answers what the user is asked to accept (a *Previewed error), then
// the write itself, recorded as consented by elicitation and bound to a
// single-use nonce. The value is read, never changed: what a write answers
// comes back as its result or error.
type Elicitation struct {
	// Preview makes the write run its checks and end with a *Previewed
	// error before its transaction: nothing is written.
	Preview bool
	// Nonce (when not Preview) is used in the write's transaction: a nonce
	// used before refuses the write with consent_required. The write then
	// records the consent method elicitation.
	Nonce          string
	NonceExpiresAt time.Time
}

// ConsentSummary is what a user accepts: read from the verified option
// (confirm, reschedule) or the owned booking (cancel), never from the
// caller's free text.
type ConsentSummary struct {
	Action       string // "confirm", "cancel", "reschedule"
	ProviderName string
	Service      string
	SlotLabel    string
	PriceSEK     int64
	PriceType    string
	ScopeSummary string
	TermsVersion string
}

// Previewed ends a write run for an Elicitation preview whose checks
// passed: nothing was written, and Summary is what the user is asked to
// accept.
type Previewed struct {
	Summary ConsentSummary
}

func (*Previewed) Error() string { return "booking: consent preview only, nothing written" }

type elicitationKey struct{}

// WithElicitation returns ctx carrying e for the write run in it.
func WithElicitation(ctx context.Context, e Elicitation) context.Context {
	return context.WithValue(ctx, elicitationKey{}, e)
}

func elicitationFrom(ctx context.Context) (Elicitation, bool) {
	e, ok := ctx.Value(elicitationKey{}).(Elicitation)
	return e, ok
}

// previewing reports whether the write in ctx is an elicitation preview and,
// if so, ends it: with the write's own error when its checks failed, or with
// a *Previewed carrying the summary. A key already stored is no preview: a
// replay answers the stored outcome, writes nothing and needs no consent.
func (l *Lifecycle) previewing(ctx context.Context, key idem.Key, checkErr error, summary func() (ConsentSummary, error)) (bool, error) {
	if e, ok := elicitationFrom(ctx); !ok || !e.Preview {
		return false, nil
	}
	if key.Key != "" {
		known, err := l.db.IdempotencyKeyExists(ctx, key)
		if err != nil {
			return true, err
		}
		if known {
			return false, nil
		}
	}
	if checkErr != nil {
		return true, checkErr
	}
	s, err := summary()
	if err != nil {
		return true, err
	}
	return true, &Previewed{Summary: s}
}

// consentMethod uses the elicitation nonce in ctx, if any, inside tx and
// returns the consent method of the write.
func consentMethod(ctx context.Context, tx Tx, now time.Time) (bokat.ConsentMethod, error) {
	e, ok := elicitationFrom(ctx)
	if !ok || e.Preview || e.Nonce == "" {
		return bokat.ConsentCallerDeclared, nil
	}
	if err := tx.UseElicitationNonce(ctx, e.Nonce, e.NonceExpiresAt, now); err != nil {
		if errors.Is(err, bokat.ErrConflict) {
			return "", ElicitationStateUsed()
		}
		return "", err
	}
	return bokat.ConsentElicitation, nil
}

// ElicitationStateUsed is the error of an elicitation answer whose state
// was already used.
func ElicitationStateUsed() *bokat.Error {
	return &bokat.Error{
		Code:         bokat.CodeConsentRequired,
		Detail:       "This consent answer was already used; each consent form is accepted once.",
		Issues:       []string{"requestState: already used"},
		SafeNextStep: "Call the tool again without requestState to ask the user afresh. Nothing was changed by this call.",
	}
}

// optionSummary is the consent summary of a verified option.
func (l *Lifecycle) optionSummary(ctx context.Context, action string, c OptionClaims) (ConsentSummary, error) {
	name, err := l.db.ProviderName(ctx, c.ProviderID)
	if err != nil {
		return ConsentSummary{}, fmt.Errorf("read the provider: %w", err)
	}
	svc, ok := l.cat.Service(c.ServiceID)
	if !ok {
		return ConsentSummary{}, optionInvalid("its service is unknown")
	}
	locale := c.Locale
	if locale == "" {
		locale = DefaultLocale
	}
	b := bokat.Booking{Locale: locale}
	applyOption(&b, c, time.Time{})
	return ConsentSummary{Action: action, ProviderName: name, Service: svc.LabelSV, SlotLabel: b.SlotLabel,
		PriceSEK: c.AmountSEK, PriceType: c.PriceType, ScopeSummary: strings.Join(svc.Scope.IncludedSV, "; "),
		TermsVersion: c.TermsVersion}, nil
}

// bookingSummary is the consent summary of an owned booking.
func (l *Lifecycle) bookingSummary(action string, b bokat.Booking) ConsentSummary {
	scope := ""
	if svc, ok := l.cat.Service(b.ServiceID); ok {
		scope = strings.Join(svc.Scope.IncludedSV, "; ")
	}
	return ConsentSummary{Action: action, ProviderName: b.ProviderName, Service: b.ServiceLabelSV, SlotLabel: b.SlotLabel,
		PriceSEK: b.PriceSEK, PriceType: b.PriceType, ScopeSummary: scope, TermsVersion: b.TermsVersion}
}
