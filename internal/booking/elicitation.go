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

// Elicitation, carried in the context of a write, lets Confirm, Cancel and
// Reschedule take part in the consent form an MCP client shows its user
// (package mcp): first a preview that runs the write's checks and reports
// what the user is asked to accept, then the write itself, recorded as
// consented by elicitation and bound to a single-use nonce.
type Elicitation struct {
	// Preview makes the write run its checks, fill Summary and stop with
	// ErrPreviewed before its transaction: nothing is written.
	Preview bool
	Summary ConsentSummary
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

// ErrPreviewed ends a write run for its Elicitation preview.
var ErrPreviewed = errors.New("booking: consent preview only, nothing written")

type elicitationKey struct{}

// WithElicitation returns ctx carrying e for the write run in it.
func WithElicitation(ctx context.Context, e *Elicitation) context.Context {
	return context.WithValue(ctx, elicitationKey{}, e)
}

func elicitationFrom(ctx context.Context) *Elicitation {
	e, _ := ctx.Value(elicitationKey{}).(*Elicitation)
	return e
}

// previewing reports whether the write in ctx is an elicitation preview and,
// if so, ends it: with the write's own error when its checks failed (unless
// the key is already stored: a replay writes nothing and needs no consent),
// or with ErrPreviewed after filling the summary.
func (l *Lifecycle) previewing(ctx context.Context, key idem.Key, checkErr error, summary func() (ConsentSummary, error)) (bool, error) {
	e := elicitationFrom(ctx)
	if e == nil || !e.Preview {
		return false, nil
	}
	if key.Key != "" {
		known, err := l.db.IdempotencyKeyExists(ctx, key)
		if err != nil {
			return true, err
		}
		if known {
			// A replay answers the stored outcome and writes nothing.
			e.Preview = false
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
	e.Summary = s
	return true, ErrPreviewed
}

// consentMethod uses the elicitation nonce in ctx, if any, inside tx and
// returns the consent method of the write.
func consentMethod(ctx context.Context, tx Tx, now time.Time) (bokat.ConsentMethod, error) {
	e := elicitationFrom(ctx)
	if e == nil || e.Preview || e.Nonce == "" {
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
