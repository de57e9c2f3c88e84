// Package provider is the provider's half of Bokat: the accounts of the
// people who work for a provider (owners and staff, invited by the operator
// or an owner, signed in with a one-time e-mail code), and what they do on
// their pages: see their bookings, open a booking's customer contact data
// (recorded for the privacy inventory), acknowledge a booking. Every use
// case acts for one signed-in User and sees and changes only that user's
// provider; every write is one transaction with an audit row.
package provider

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"bokat"
	"bokat/internal/booking"
	"bokat/internal/web"
)

// Role is what a provider user may do: an owner also manages staff.
type Role string

// Roles.
const (
	Owner Role = "owner"
	Staff Role = "staff"
)

// ParseRole returns the role named s.
func ParseRole(s string) (Role, error) {
	switch Role(s) {
	case Owner, Staff:
		return Role(s), nil
	}
	return "", fmt.Errorf("%w: role must be owner or staff", ErrInvalid)
}

// OperatorActor is the actor of the operator's writes (the CLI).
const OperatorActor = "operator"

// Lifetimes.
const (
	// SessionTTL is the lifetime of a provider's browser session: a working
	// day.
	SessionTTL = 10 * time.Hour
	// InvitationTTL is how long an invitation may be taken up.
	InvitationTTL = 14 * 24 * time.Hour
)

// Id prefixes.
const (
	UserIDPrefix       = bokat.ProviderUserIDPrefix
	InvitationIDPrefix = bokat.ProviderInvitationIDPrefix
	auditIDPrefix      = bokat.ProviderAuditIDPrefix
)

// Errors of the use cases besides bokat.ErrNotFound (an unknown object and
// another provider's look alike) and bokat.ErrConflict.
var (
	// ErrInvalid wraps a refused input; its message says why.
	ErrInvalid = errors.New("invalid")
	// ErrForbidden: the user's role does not allow the action.
	ErrForbidden = errors.New("not allowed for this role")
	// ErrNotConfirmed: the booking is not confirmed (cancelled).
	ErrNotConfirmed = errors.New("the booking is not confirmed")
)

// User is a person who works for a provider.
type User struct {
	ID         string
	ProviderID string
	// Email is the normalised address (personal data: never logged).
	Email     string
	Role      Role
	InvitedBy string
	CreatedAt time.Time
}

// Invitation lets a person sign in to a provider for the first time.
type Invitation struct {
	ID         string
	ProviderID string
	Email      string
	Role       Role
	InvitedBy  string
	CreatedAt  time.Time
	ExpiresAt  time.Time
}

// Booking is a booking as its provider sees it.
type Booking struct {
	bokat.Booking
	// AcknowledgedAt is zero until a provider user acknowledged it;
	// AcknowledgedBy is that user's id.
	AcknowledgedAt time.Time
	AcknowledgedBy string
}

// AuditEntry is one write for a provider: who, when, what, on which object.
type AuditEntry struct {
	ID         string
	ProviderID string
	// Actor is a provider user id or OperatorActor.
	Actor      string
	At         time.Time
	Action     string
	ObjectType string
	ObjectID   string
	// Note is free of contact data.
	Note string
}

// Audit actions.
const (
	ActionInvited       = "user.invited"
	ActionJoined        = "user.joined"
	ActionRemoved       = "user.removed"
	ActionInviteRevoked = "invitation.withdrawn"
	ActionAcknowledged  = "booking.acknowledged"
	ActionContactOpened = "booking.contact_opened"
	ActionFlagged       = "booking.flagged"
	ActionCancelled     = "booking.cancelled"
)

// CancelReasons are why a provider may cancel a booking, as recorded in
// the audit (the booking itself carries the contract's reason "other").
var CancelReasons = []string{"illness", "cannot_do_job", "customer_unreachable", "other"}

// CancelNotesMax is the longest note a provider may give with a cancel.
const CancelNotesMax = 500

// NoteMax is the longest note a provider may write with a flag.
const NoteMax = 1000

// Service runs the provider side's use cases.
type Service struct {
	store Store
	now   func() time.Time
	log   *slog.Logger
}

// NewService returns the use cases over the store.
func NewService(store Store, now func() time.Time, log *slog.Logger) *Service {
	return &Service{store: store, now: now, log: log}
}

func newID(prefix string) (string, error) {
	u, err := uuid.NewV7()
	if err != nil {
		return "", err
	}
	return prefix + strings.ReplaceAll(u.String(), "-", ""), nil
}

// auditor is what writing an audit row needs of a transaction.
type auditor interface {
	InsertProviderAudit(ctx context.Context, e AuditEntry) error
}

// audit writes the audit row of a write inside its transaction.
func audit(ctx context.Context, tx auditor, providerID, actor string, at time.Time, action, objectType, objectID, note string) error {
	id, err := newID(auditIDPrefix)
	if err != nil {
		return err
	}
	return tx.InsertProviderAudit(ctx, AuditEntry{ID: id, ProviderID: providerID, Actor: actor, At: at,
		Action: action, ObjectType: objectType, ObjectID: objectID, Note: note})
}

// Invite invites the address to the provider with the role. actor is
// OperatorActor (any role) or an owner of the same provider (staff only);
// anyone else gets ErrForbidden. An address with an active account is
// refused with bokat.ErrConflict; an unknown provider with
// bokat.ErrNotFound; a bad address or role with ErrInvalid.
func (s *Service) Invite(ctx context.Context, actor *User, providerID, email string, role Role) (Invitation, error) {
	by := OperatorActor
	if actor != nil {
		if actor.Role != Owner || actor.ProviderID != providerID || role != Staff {
			return Invitation{}, ErrForbidden
		}
		by = actor.ID
	}
	var inv Invitation
	err := s.store.InTx(ctx, func(tx Tx) error {
		var err error
		inv, err = InviteInTx(ctx, tx, by, providerID, email, role, s.now())
		return err
	})
	if err != nil {
		return Invitation{}, err
	}
	return inv, nil
}

// InviteInTx writes the invitation of the address to the provider with
// the role, and its audit row, inside tx; by is who invites (a provider
// user id or OperatorActor), already allowed to. The operator console
// runs it in the transaction of its own audit row. Its errors are
// Invite's.
func InviteInTx(ctx context.Context, tx Tx, by, providerID, email string, role Role, now time.Time) (Invitation, error) {
	addr, ok := web.NormalizeEmail(email)
	if !ok {
		return Invitation{}, fmt.Errorf("%w: not a valid e-mail address", ErrInvalid)
	}
	if _, err := ParseRole(string(role)); err != nil {
		return Invitation{}, err
	}
	id, err := newID(InvitationIDPrefix)
	if err != nil {
		return Invitation{}, err
	}
	inv := Invitation{ID: id, ProviderID: providerID, Email: addr, Role: role, InvitedBy: by, CreatedAt: now,
		ExpiresAt: now.Add(InvitationTTL)}
	if _, err := tx.ProviderName(ctx, providerID); err != nil {
		return Invitation{}, fmt.Errorf("provider %s: %w", providerID, err)
	}
	if _, err := tx.ActiveProviderUserByEmail(ctx, addr); err == nil {
		return Invitation{}, fmt.Errorf("%w: the address already has an account", bokat.ErrConflict)
	} else if !errors.Is(err, bokat.ErrNotFound) {
		return Invitation{}, err
	}
	if err := tx.InsertInvitation(ctx, inv); err != nil {
		return Invitation{}, err
	}
	return inv, audit(ctx, tx, providerID, by, now, ActionInvited, "invitation", id, "role="+string(role))
}

// Withdraw withdraws an open invitation of the owner's provider.
func (s *Service) Withdraw(ctx context.Context, owner User, invitationID string) error {
	if owner.Role != Owner {
		return ErrForbidden
	}
	now := s.now()
	return s.store.InTx(ctx, func(tx Tx) error {
		if err := tx.CloseInvitation(ctx, owner.ProviderID, invitationID, false, now); err != nil {
			return err
		}
		return audit(ctx, tx, owner.ProviderID, owner.ID, now, ActionInviteRevoked, "invitation", invitationID, "")
	})
}

// RemoveStaff removes a staff member of the owner's provider and ends
// their sessions. Owners are not removed here (ErrForbidden), nor is
// another provider's user (bokat.ErrNotFound).
func (s *Service) RemoveStaff(ctx context.Context, owner User, userID string) error {
	if owner.Role != Owner {
		return ErrForbidden
	}
	now := s.now()
	return s.store.InTx(ctx, func(tx Tx) error {
		u, err := tx.ProviderUserForUpdate(ctx, owner.ProviderID, userID)
		if err != nil {
			return err
		}
		if u.Role != Staff {
			return ErrForbidden
		}
		if err := tx.RemoveProviderUser(ctx, u.ID, now); err != nil {
			return err
		}
		return audit(ctx, tx, owner.ProviderID, owner.ID, now, ActionRemoved, "user", u.ID, "")
	})
}

// Admits reports whether the address may sign in: it has an active
// account or an open invitation.
func (s *Service) Admits(ctx context.Context, email string) (bool, error) {
	return s.store.ProviderAccountExists(ctx, email, s.now())
}

// Begin signs the address in inside tx (the transaction that consumed its
// code): an active account, or else an open invitation (which then becomes
// the account), gets a session stored under sessionHash. It returns false
// when the address has neither.
func (s *Service) Begin(ctx context.Context, tx Tx, email, sessionHash string, now time.Time) (bool, error) {
	u, err := tx.ActiveProviderUserByEmail(ctx, email)
	if errors.Is(err, bokat.ErrNotFound) {
		u, err = s.join(ctx, tx, email, now)
	}
	if errors.Is(err, bokat.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := tx.RecordProviderSignIn(ctx, u.ID, now); err != nil {
		return false, err
	}
	return true, tx.InsertProviderSession(ctx, sessionHash, u.ID, now, now.Add(SessionTTL))
}

// join turns the address's open invitation into an account.
func (s *Service) join(ctx context.Context, tx Tx, email string, now time.Time) (User, error) {
	inv, err := tx.OpenInvitationByEmail(ctx, email, now)
	if err != nil {
		return User{}, err
	}
	id, err := newID(UserIDPrefix)
	if err != nil {
		return User{}, err
	}
	u := User{ID: id, ProviderID: inv.ProviderID, Email: email, Role: inv.Role, InvitedBy: inv.InvitedBy, CreatedAt: now}
	if err := tx.InsertProviderUser(ctx, u); err != nil {
		return User{}, err
	}
	if err := tx.CloseInvitation(ctx, inv.ProviderID, inv.ID, true, now); err != nil {
		return User{}, err
	}
	return u, audit(ctx, tx, u.ProviderID, u.ID, now, ActionJoined, "invitation", inv.ID, "role="+string(u.Role))
}

// SessionUser returns the user of a session, or bokat.ErrNotFound.
func (s *Service) SessionUser(ctx context.Context, sessionHash string) (User, error) {
	return s.store.ProviderSessionUser(ctx, sessionHash, s.now())
}

// EndSession ends a session.
func (s *Service) EndSession(ctx context.Context, sessionHash string) error {
	return s.store.DeleteProviderSession(ctx, sessionHash)
}

// BookingPage is one page of a provider's bookings.
type BookingPage struct {
	Bookings []Booking
	// Next is the cursor of the following page (the id of this page's last
	// booking), empty on the last page.
	Next string
}

// Bookings lists a page of at most limit of the user's provider's upcoming
// (by start) or past (latest first) bookings, after the booking whose id
// is after (empty: from the first). An after that is not the provider's
// booking is bokat.ErrNotFound.
func (s *Service) Bookings(ctx context.Context, u User, past bool, after string, limit int) (BookingPage, error) {
	list, err := s.store.ProviderBookingList(ctx, u.ProviderID, s.now(), past, after, limit+1)
	if err != nil {
		return BookingPage{}, err
	}
	if len(list) <= limit {
		return BookingPage{Bookings: list}, nil
	}
	list = list[:limit]
	return BookingPage{Bookings: list, Next: list[limit-1].ID}, nil
}

// BookingView is one booking with, for a confirmed booking, the customer's
// contact data.
type BookingView struct {
	Booking Booking
	// Contact is set only for a confirmed booking; ContactShown says so.
	Contact      bokat.BookingContact
	ContactShown bool
}

// Booking returns a booking of the user's provider (bokat.ErrNotFound for
// another provider's). A confirmed booking's customer contact data is
// opened, and the opening recorded (who, when, which booking) in the same
// transaction; a cancelled booking shows none.
func (s *Service) Booking(ctx context.Context, u User, bookingID string) (BookingView, error) {
	var v BookingView
	now := s.now()
	err := s.store.InTx(ctx, func(tx Tx) error {
		v = BookingView{}
		b, err := tx.ProviderBookingForUpdate(ctx, u.ProviderID, bookingID)
		if err != nil {
			return err
		}
		v.Booking = b
		if !b.Active() {
			return nil
		}
		c, err := tx.BookingContact(ctx, b.ID)
		if err != nil {
			return err
		}
		v.Contact, v.ContactShown = c, true
		return audit(ctx, tx, u.ProviderID, u.ID, now, ActionContactOpened, "booking", b.ID, "")
	})
	return v, err
}

// Acknowledge records that the user has seen a confirmed booking of their
// provider and will do the job. A second acknowledgement changes nothing
// and reports false; a cancelled booking fails with ErrNotConfirmed.
func (s *Service) Acknowledge(ctx context.Context, u User, bookingID string) (bool, error) {
	now := s.now()
	var done bool
	err := s.store.InTx(ctx, func(tx Tx) error {
		done = false
		b, err := tx.ProviderBookingForUpdate(ctx, u.ProviderID, bookingID)
		if err != nil {
			return err
		}
		if !b.Active() {
			return ErrNotConfirmed
		}
		if !b.AcknowledgedAt.IsZero() {
			return nil
		}
		if err := tx.AcknowledgeBooking(ctx, b.ID, u.ID, now); err != nil {
			return err
		}
		done = true
		return audit(ctx, tx, u.ProviderID, u.ID, now, ActionAcknowledged, "booking", b.ID, "")
	})
	return done, err
}

// Flag raises booking.provider_action_required (reason provider_flagged)
// for a confirmed booking of the user's provider, with the provider's note
// for the operator kept in the audit row of the same transaction: the
// event carries the reason only, never the note. A note must be 2 to
// NoteMax characters of text (ErrInvalid); a cancelled booking fails with
// ErrNotConfirmed, another provider's with bokat.ErrNotFound.
func (s *Service) Flag(ctx context.Context, u User, bookingID, note string) error {
	note, err := cleanNote(note, 2, NoteMax)
	if err != nil {
		return err
	}
	return s.onConfirmed(ctx, u, bookingID, ActionFlagged, note, func(tx Tx, b Booking, now time.Time) error {
		return booking.ProviderActionRequiredInTx(ctx, tx, b.Booking, bokat.ReasonProviderFlagged, now)
	})
}

// Cancel cancels a confirmed booking of the user's provider through the
// booking lifecycle (booking.CancelByProviderInTx: the slot freed, the
// booking.cancelled event saying the provider cancelled, the customer's and
// the provider's messages queued), with its audit row, in one transaction.
// reason is one of CancelReasons; notes (optional, at most CancelNotesMax
// characters) are sealed with the booking as its cancel notes. A bad reason
// or notes fail with ErrInvalid, a cancelled booking with ErrNotConfirmed,
// another provider's with bokat.ErrNotFound.
func (s *Service) Cancel(ctx context.Context, u User, bookingID, reason, notes string) error {
	if !slices.Contains(CancelReasons, reason) {
		return fmt.Errorf("%w: unknown cancel reason", ErrInvalid)
	}
	notes, err := cleanNote(notes, 0, CancelNotesMax)
	if err != nil {
		return err
	}
	return s.onConfirmed(ctx, u, bookingID, ActionCancelled, "reason="+reason, func(tx Tx, b Booking, now time.Time) error {
		return booking.CancelByProviderInTx(ctx, tx, b.Booking, notes, now)
	})
}

// cleanNote returns a note a person wrote with its line breaks as "\n",
// trimmed, or ErrInvalid unless it is text of least to most characters.
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

// onConfirmed runs write on a confirmed booking of the user's provider,
// held for the transaction, and records it in the audit as action with
// the note, all in one transaction. A cancelled booking fails with
// ErrNotConfirmed, another provider's with bokat.ErrNotFound.
func (s *Service) onConfirmed(ctx context.Context, u User, bookingID, action, note string,
	write func(tx Tx, b Booking, now time.Time) error) error {
	now := s.now()
	return s.store.InTx(ctx, func(tx Tx) error {
		b, err := tx.ProviderBookingForUpdate(ctx, u.ProviderID, bookingID)
		if err != nil {
			return err
		}
		if !b.Active() {
			return ErrNotConfirmed
		}
		if err := write(tx, b, now); err != nil {
			return err
		}
		return audit(ctx, tx, u.ProviderID, u.ID, now, action, "booking", b.ID, note)
	})
}

// Team returns the provider's users and open invitations.
func (s *Service) Team(ctx context.Context, u User) ([]User, []Invitation, error) {
	users, err := s.store.ProviderUsers(ctx, u.ProviderID)
	if err != nil {
		return nil, nil, err
	}
	invs, err := s.store.OpenInvitations(ctx, u.ProviderID, s.now())
	return users, invs, err
}

// ProviderName returns the name of the user's provider.
func (s *Service) ProviderName(ctx context.Context, u User) (string, error) {
	return s.store.ProviderName(ctx, u.ProviderID)
}
