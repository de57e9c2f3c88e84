// Package operator is the operator's half of Bokat: the accounts of the
// people who run the marketplace (invited with `bokat operator invite`,
// signed in with a one-time e-mail code on the same web layer as the
// provider pages), and the console they work in: finding a booking and
// reading its whole story, cancelling or moving it on someone's behalf
// through the booking lifecycle, the providers' health, the follow-up
// queue, failing webhook endpoints, partners and OAuth clients. Every
// operator action is one transaction with its row in the operator audit
// log (who, when, what, on which object), which the console shows.
package operator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"bokat"
	"bokat/internal/booking"
	"bokat/internal/credentials"
	"bokat/internal/web"
)

// Lifetimes.
const (
	// SessionTTL is the lifetime of an operator's browser session.
	SessionTTL = 8 * time.Hour
)

// CLIActor is the audit actor of an operator command run on the command
// line by the operating-system user, as the credential lifecycle writes it.
func CLIActor(osUser string) string { return credentials.CLIActor(osUser) }

// Errors of the use cases besides bokat.ErrNotFound and bokat.ErrConflict.
var (
	// ErrInvalid wraps a refused input; its message says why.
	ErrInvalid = errors.New("invalid")
	// ErrNotConfirmed: the booking is not confirmed (cancelled).
	ErrNotConfirmed = errors.New("the booking is not confirmed")
)

// Operator is a person who runs the marketplace.
type Operator struct {
	ID string
	// Email is the normalised address (personal data: never logged).
	Email        string
	InvitedBy    string
	CreatedAt    time.Time
	LastSignInAt time.Time
}

// AuditEntry is one operator action: who, when, what, on which object.
type AuditEntry struct {
	ID string
	At time.Time
	// Actor is an operator id, CLIActor(...) or "job:<name>".
	Actor      string
	Action     string
	ObjectKind string
	ObjectID   string
	// Details are short texts free of secrets and contact data.
	Details map[string]string
}

// Audit actions.
const (
	ActionInvited           = "operator.invited"
	ActionSignedIn          = "operator.signed_in"
	ActionBookingCancelled  = "booking.cancelled"
	ActionBookingMoved      = "booking.moved"
	ActionContactOpened     = "booking.contact_opened"
	ActionProviderPaused    = "provider.paused"
	ActionProviderUnpaused  = "provider.unpaused"
	ActionProviderInvited   = "provider.user_invited"
	ActionFollowUpAnnotated = "follow_up.noted"
)

// AuditTx appends to the operator audit log inside a write's transaction.
// It is the one door to the log: the credential lifecycle's writes use the
// same table.
type AuditTx interface {
	AppendOperatorAudit(ctx context.Context, e AuditEntry) error
}

// Service runs the operator's use cases.
type Service struct {
	store Store
	now   func() time.Time
	log   *slog.Logger
	// wake is called after a write queued notification jobs (nil: none).
	wake func()
	// staleAfter is how long a calendar may fail before it is stale.
	staleAfter time.Duration
}

// NewService returns the use cases over the store; wake (may be nil) is
// called after a write that queued notification jobs committed. Calendars
// are stale after StaleAfter.
func NewService(store Store, now func() time.Time, log *slog.Logger, wake func()) *Service {
	return &Service{store: store, now: now, log: log, wake: wake, staleAfter: StaleAfter}
}

func newID(prefix string) (string, error) {
	u, err := uuid.NewV7()
	if err != nil {
		return "", err
	}
	return prefix + strings.ReplaceAll(u.String(), "-", ""), nil
}

// Audit writes the audit row of an operator action inside its transaction.
func Audit(ctx context.Context, tx AuditTx, actor string, at time.Time, action, kind, objectID string, details map[string]string) error {
	id, err := newID(bokat.OperatorAuditIDPrefix)
	if err != nil {
		return err
	}
	return tx.AppendOperatorAudit(ctx, AuditEntry{ID: id, At: at, Actor: actor, Action: action,
		ObjectKind: kind, ObjectID: objectID, Details: details})
}

// Invite makes the address an operator account (by is an operator id or
// CLIActor(...)); an address that has one already is refused with
// bokat.ErrConflict, a bad address with ErrInvalid. The person then signs
// in with a one-time code sent to the address.
func (s *Service) Invite(ctx context.Context, by, email string) (Operator, error) {
	addr, ok := web.NormalizeEmail(email)
	if !ok {
		return Operator{}, fmt.Errorf("%w: not a valid e-mail address", ErrInvalid)
	}
	id, err := newID(bokat.OperatorIDPrefix)
	if err != nil {
		return Operator{}, err
	}
	now := s.now()
	o := Operator{ID: id, Email: addr, InvitedBy: by, CreatedAt: now}
	err = s.store.InTx(ctx, func(tx Tx) error {
		if _, err := tx.ActiveOperatorByEmail(ctx, addr); err == nil {
			return fmt.Errorf("%w: the address already has an operator account", bokat.ErrConflict)
		} else if !errors.Is(err, bokat.ErrNotFound) {
			return err
		}
		if err := tx.InsertOperator(ctx, o); err != nil {
			return err
		}
		return Audit(ctx, tx, by, now, ActionInvited, "operator", id, nil)
	})
	if err != nil {
		return Operator{}, err
	}
	return o, nil
}

// Admits reports whether the address has an operator account.
func (s *Service) Admits(ctx context.Context, email string) (bool, error) {
	return s.store.OperatorExists(ctx, email)
}

// Begin signs the address in inside tx (the transaction that consumed its
// code): its account gets a session stored under sessionHash, and the
// sign-in is recorded. It returns false when the address has no account.
func (s *Service) Begin(ctx context.Context, tx Tx, email, sessionHash string, now time.Time) (bool, error) {
	o, err := tx.ActiveOperatorByEmail(ctx, email)
	if errors.Is(err, bokat.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := tx.RecordOperatorSignIn(ctx, o.ID, now); err != nil {
		return false, err
	}
	if err := tx.InsertOperatorSession(ctx, sessionHash, o.ID, now, now.Add(SessionTTL)); err != nil {
		return false, err
	}
	return true, Audit(ctx, tx, o.ID, now, ActionSignedIn, "operator", o.ID, nil)
}

// SessionOperator returns the operator of a session, or bokat.ErrNotFound.
func (s *Service) SessionOperator(ctx context.Context, sessionHash string) (Operator, error) {
	return s.store.OperatorSession(ctx, sessionHash, s.now())
}

// EndSession ends a session.
func (s *Service) EndSession(ctx context.Context, sessionHash string) error {
	return s.store.DeleteOperatorSession(ctx, sessionHash)
}

// AuditLog returns the latest audit entries, newest first, of one object
// (kind and id) or, when kind is "", of everything.
func (s *Service) AuditLog(ctx context.Context, kind, id string, limit int) ([]AuditEntry, error) {
	return s.store.ConsoleAudit(ctx, kind, id, limit)
}

// NoteMax is the longest note an operator may give with an action.
const NoteMax = 500

// cleanNote returns a note with its line breaks as "\n", trimmed, or
// ErrInvalid unless it is text of least to most characters.
func cleanNote(note string, least, most int) (string, error) {
	note = strings.TrimSpace(strings.ReplaceAll(note, "\r\n", "\n"))
	if n := utf8.RuneCountInString(note); n < least || n > most {
		return "", fmt.Errorf("%w: the note must be %d to %d characters", ErrInvalid, least, most)
	}
	if why := bokat.CheckText(note, true); why != "" {
		return "", fmt.Errorf("%w: the note %s", ErrInvalid, why)
	}
	return note, nil
}

// details is an audit row's details from key, value pairs; empty values
// are left out.
func details(kv ...string) map[string]string {
	out := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			out[kv[i]] = kv[i+1]
		}
	}
	return out
}

// FormatDetails shows an audit row's details as key=value pairs by key,
// a value with spaces quoted.
func FormatDetails(d map[string]string) string {
	keys := make([]string, 0, len(d))
	for k := range d {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		v := d[k]
		if strings.ContainsAny(v, " \n\t\"") {
			v = strconv.Quote(v)
		}
		parts = append(parts, k+"="+v)
	}
	return strings.Join(parts, " ")
}

// booking.Tx is the lifecycle's transaction; the operator's writes run the
// lifecycle's use cases inside their own transactions.
var _ booking.Tx = Tx(nil)
