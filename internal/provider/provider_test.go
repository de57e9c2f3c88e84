package provider_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"bokat"
	"bokat/internal/catalog"
	"bokat/internal/clocktest"
	"bokat/internal/provider"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/supply"
)

// The use cases run on a real store of each engine, with the demo supply.

const (
	providerA = "prv_sthlm_vvs_1"
	providerB = "prv_sthlm_vvs_2"
)

type env struct {
	db    *sqlstore.DB
	svc   *provider.Service
	clock *clocktest.Clock
	seq   int
}

func newEnv(t testing.TB, db *sqlstore.DB) *env {
	t.Helper()
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	clock := clocktest.New(time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC))
	if _, err := supply.Import(context.Background(), sqlstore.Bind[supply.Tx](db), cat, supply.DemoName, supply.Demo(), clock.Now()); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	return &env{db: db, svc: provider.NewService(sqlstore.Bind[provider.Tx](db), clock.Now, log), clock: clock}
}

// signIn invites (as the operator, unless by is set) and signs the address
// in, returning the user and the session's hash.
func (e *env) signIn(t *testing.T, by *provider.User, providerID, email string, role provider.Role) (provider.User, string) {
	t.Helper()
	ctx := context.Background()
	if _, err := e.svc.Invite(ctx, by, providerID, email, role); err != nil {
		t.Fatalf("invite %s: %v", email, err)
	}
	if ok, err := e.svc.Admits(ctx, email); err != nil || !ok {
		t.Fatalf("an invited address is not admitted: %v %v", ok, err)
	}
	e.seq++
	hash := "session-hash-" + email
	err := sqlstore.Bind[provider.Tx](e.db).InTx(ctx, func(tx provider.Tx) error {
		ok, err := e.svc.Begin(ctx, tx, email, hash, e.clock.Now())
		if err == nil && !ok {
			t.Errorf("an invited address could not begin a session")
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	u, err := e.svc.SessionUser(ctx, hash)
	if err != nil {
		t.Fatalf("session of %s: %v", email, err)
	}
	if u.ProviderID != providerID || u.Role != role || u.Email != email {
		t.Fatalf("signed in as %+v, want %s %s %s", u, providerID, role, email)
	}
	return u, hash
}

func (e *env) audit(t *testing.T, providerID string) []string {
	t.Helper()
	entries, err := sqlstore.Bind[provider.Tx](e.db).ProviderAudit(context.Background(), providerID, 100)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i := len(entries) - 1; i >= 0; i-- {
		out = append(out, entries[i].Action+" "+entries[i].ObjectType)
	}
	return out
}

func TestAccountsAreInvitedSignedInAndRemoved(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		owner, _ := e.signIn(t, nil, providerA, "agare@vvs-ett.se", provider.Owner)
		staff, staffSession := e.signIn(t, &owner, providerA, "montor@vvs-ett.se", provider.Staff)
		otherOwner, _ := e.signIn(t, nil, providerB, "agare@vvs-tva.se", provider.Owner)

		if ok, err := e.svc.Admits(ctx, "okand@example.se"); err != nil || ok {
			t.Errorf("an unknown address is admitted: %v %v", ok, err)
		}
		for name, tc := range map[string]struct {
			by       *provider.User
			provider string
			email    string
			role     provider.Role
			want     error
		}{
			"staff invites":            {&staff, providerA, "ny@example.se", provider.Staff, provider.ErrForbidden},
			"owner invites an owner":   {&owner, providerA, "ny@example.se", provider.Owner, provider.ErrForbidden},
			"owner invites to another": {&owner, providerB, "ny@example.se", provider.Staff, provider.ErrForbidden},
			"address with an account":  {nil, providerB, "montor@vvs-ett.se", provider.Staff, bokat.ErrConflict},
			"unknown provider":         {nil, "prv_nobody", "ny@example.se", provider.Staff, bokat.ErrNotFound},
			"not an address":           {nil, providerA, "ny@", provider.Staff, provider.ErrInvalid},
			"unknown role":             {nil, providerA, "ny@example.se", provider.Role("admin"), provider.ErrInvalid},
		} {
			if _, err := e.svc.Invite(ctx, tc.by, tc.provider, tc.email, tc.role); !errors.Is(err, tc.want) {
				t.Errorf("%s: Invite = %v, want %v", name, err, tc.want)
			}
		}
		if err := e.svc.RemoveStaff(ctx, otherOwner, staff.ID); !errors.Is(err, bokat.ErrNotFound) {
			t.Errorf("another provider's owner removes staff: %v, want not found", err)
		}
		if err := e.svc.RemoveStaff(ctx, staff, owner.ID); !errors.Is(err, provider.ErrForbidden) {
			t.Errorf("staff removes the owner: %v, want forbidden", err)
		}
		if err := e.svc.RemoveStaff(ctx, owner, owner.ID); !errors.Is(err, provider.ErrForbidden) {
			t.Errorf("the owner removes an owner: %v, want forbidden", err)
		}
		if err := e.svc.RemoveStaff(ctx, owner, staff.ID); err != nil {
			t.Fatalf("remove staff: %v", err)
		}
		if _, err := e.svc.SessionUser(ctx, staffSession); !errors.Is(err, bokat.ErrNotFound) {
			t.Errorf("a removed user's session still works: %v", err)
		}
		if ok, err := e.svc.Admits(ctx, staff.Email); err != nil || ok {
			t.Errorf("a removed user is still admitted: %v %v", ok, err)
		}
		users, invs, err := e.svc.Team(ctx, owner)
		if err != nil || len(users) != 1 || users[0].ID != owner.ID || len(invs) != 0 {
			t.Errorf("team after removal: %+v %+v %v", users, invs, err)
		}
		want := []string{"user.invited invitation", "user.joined invitation", "user.invited invitation",
			"user.joined invitation", "user.removed user"}
		if got := e.audit(t, providerA); !equal(got, want) {
			t.Errorf("audit of %s:\n got %q\nwant %q", providerA, got, want)
		}

		// An invitation expires, and a withdrawn one admits nobody.
		inv, err := e.svc.Invite(ctx, &owner, providerA, "sen@example.se", provider.Staff)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.svc.Withdraw(ctx, otherOwner, inv.ID); !errors.Is(err, bokat.ErrNotFound) {
			t.Errorf("another provider's owner withdraws an invitation: %v", err)
		}
		if err := e.svc.Withdraw(ctx, owner, inv.ID); err != nil {
			t.Fatal(err)
		}
		if ok, _ := e.svc.Admits(ctx, "sen@example.se"); ok {
			t.Error("a withdrawn invitation admits its address")
		}
		if _, err := e.svc.Invite(ctx, nil, providerA, "gammal@example.se", provider.Staff); err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(provider.InvitationTTL + time.Second)
		if ok, _ := e.svc.Admits(ctx, "gammal@example.se"); ok {
			t.Error("an expired invitation admits its address")
		}

		// A removed account and a closed invitation keep no address.
		var kept int
		if err := db.R().QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM provider_users WHERE removed_at IS NOT NULL AND email <> '')
			+ (SELECT COUNT(*) FROM provider_invitations WHERE (accepted_at IS NOT NULL OR revoked_at IS NOT NULL) AND email <> '')`).Scan(&kept); err != nil || kept != 0 {
			t.Errorf("%d removed accounts or closed invitations keep their address (%v)", kept, err)
		}
		var removed int
		if err := db.R().QueryRowContext(ctx, `SELECT COUNT(*) FROM provider_users WHERE id = $1 AND removed_at IS NOT NULL`, staff.ID).Scan(&removed); err != nil || removed != 1 {
			t.Errorf("the removed account's row is gone: %d %v", removed, err)
		}

		// Addresses are sealed: no table holds one in clear.
		for _, table := range []string{"provider_users", "provider_invitations"} {
			var n int
			if err := db.R().QueryRowContext(ctx, `SELECT COUNT(*) FROM `+table+` WHERE email LIKE '%@%'`).Scan(&n); err != nil || n != 0 {
				t.Errorf("%s holds %d addresses in clear (%v)", table, n, err)
			}
		}
	})
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestProviderSeesOnlyItsOwnBookings(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		start := e.clock.Now().Add(48 * time.Hour)
		sqlstoretest.InsertBookingEntry(t, db, providerA, "bk_a_next", start, start.Add(time.Hour))
		sqlstoretest.InsertBookingEntry(t, db, providerA, "bk_a_past", start.Add(-96*time.Hour), start.Add(-95*time.Hour))
		sqlstoretest.InsertBookingEntry(t, db, providerB, "bk_b_next", start, start.Add(time.Hour))
		owner, _ := e.signIn(t, nil, providerA, "agare@vvs-ett.se", provider.Owner)
		staff, _ := e.signIn(t, &owner, providerA, "montor@vvs-ett.se", provider.Staff)

		for _, tc := range []struct {
			past bool
			want []string
		}{{false, []string{"bk_a_next"}}, {true, []string{"bk_a_past"}}} {
			list, err := e.svc.Bookings(ctx, staff, tc.past, "", 100)
			var got []string
			for _, b := range list.Bookings {
				got = append(got, b.ID)
			}
			if err != nil || !equal(got, tc.want) {
				t.Errorf("bookings (past %v) = %v %v, want %v", tc.past, got, err, tc.want)
			}
		}
		v, err := e.svc.Booking(ctx, staff, "bk_a_next")
		if err != nil || !v.ContactShown || v.Contact.Email != "test@example.se" || v.Contact.ServiceAddress != "Testgatan 1" {
			t.Fatalf("own booking: %+v %v", v, err)
		}
		if _, err := e.svc.Booking(ctx, staff, "bk_b_next"); !errors.Is(err, bokat.ErrNotFound) {
			t.Errorf("another provider's booking: %v, want not found", err)
		}
		if done, err := e.svc.Acknowledge(ctx, staff, "bk_b_next"); !errors.Is(err, bokat.ErrNotFound) || done {
			t.Errorf("acknowledge another provider's booking: %v %v", done, err)
		}
		if done, err := e.svc.Acknowledge(ctx, staff, "bk_a_next"); err != nil || !done {
			t.Fatalf("acknowledge: %v %v", done, err)
		}
		if done, err := e.svc.Acknowledge(ctx, owner, "bk_a_next"); err != nil || done {
			t.Errorf("a second acknowledgement: %v %v, want no change", done, err)
		}
		v, _ = e.svc.Booking(ctx, owner, "bk_a_next")
		if v.Booking.AcknowledgedBy != staff.ID || !v.Booking.AcknowledgedAt.Equal(e.clock.Now()) ||
			v.Booking.ProviderConfirmationStatus != bokat.NotificationSent {
			t.Errorf("acknowledged booking: by %q at %v status %q", v.Booking.AcknowledgedBy, v.Booking.AcknowledgedAt,
				v.Booking.ProviderConfirmationStatus)
		}
		var b bokat.Booking
		err = db.InTx(ctx, func(tx *sqlstore.Tx) error {
			var err error
			if b, err = tx.BookingByID(ctx, "bk_a_past"); err != nil {
				return err
			}
			b.Status, b.CancelledAt, b.CancelReason, b.Sequence = bokat.BookingCancelled, e.clock.Now(), "other", 1
			return tx.CancelBooking(ctx, b, "", e.clock.Now())
		})
		if err != nil {
			t.Fatal(err)
		}
		if v, err := e.svc.Booking(ctx, staff, "bk_a_past"); err != nil || v.ContactShown || v.Contact.Email != "" {
			t.Errorf("a cancelled booking shows contact data: %+v %v", v, err)
		}
		if _, err := e.svc.Acknowledge(ctx, staff, "bk_a_past"); !errors.Is(err, provider.ErrNotConfirmed) {
			t.Errorf("acknowledge a cancelled booking: %v", err)
		}
		want := []string{"user.invited invitation", "user.joined invitation", "user.invited invitation",
			"user.joined invitation", "booking.contact_opened booking", "booking.acknowledged booking",
			"booking.contact_opened booking"}
		if got := e.audit(t, providerA); !equal(got, want) {
			t.Errorf("audit of %s:\n got %q\nwant %q", providerA, got, want)
		}
		if got := e.audit(t, providerB); len(got) != 0 {
			t.Errorf("provider B's audit holds %q", got)
		}
	})
}

// events returns the event types and payloads written for a booking.
func (e *env) events(t *testing.T, bookingID string) (types, payloads []string) {
	t.Helper()
	rows, err := e.db.R().QueryContext(context.Background(), `SELECT event_type, payload FROM outbox_events
		WHERE booking_id = $1 ORDER BY created_at, id`, bookingID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var typ, payload string
		if err := rows.Scan(&typ, &payload); err != nil {
			t.Fatal(err)
		}
		types, payloads = append(types, typ), append(payloads, payload)
	}
	return types, payloads
}

// newBookedEnv is an env where providers A and B have one booking each,
// bk_a and bk_b, two days ahead, and a staff member of A is signed in.
func newBookedEnv(t *testing.T, db *sqlstore.DB) (*env, provider.User) {
	t.Helper()
	e := newEnv(t, db)
	start := e.clock.Now().Add(48 * time.Hour)
	sqlstoretest.InsertBookingEntry(t, db, providerA, "bk_a", start, start.Add(time.Hour))
	sqlstoretest.InsertBookingEntry(t, db, providerB, "bk_b", start, start.Add(time.Hour))
	staff, _ := e.signIn(t, nil, providerA, "montor@vvs-ett.se", provider.Staff)
	return e, staff
}

func TestFlagRaisesProviderActionRequiredWithTheNoteForTheOperatorOnly(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e, staff := newBookedEnv(t, db)
		ctx := context.Background()
		const note = "Adressen finns inte på kartan.\r\nRing mig."

		for name, tc := range map[string]struct {
			booking, note string
			want          error
		}{
			"another provider's booking": {"bk_b", note, bokat.ErrNotFound},
			"no note":                    {"bk_a", " ", provider.ErrInvalid},
			"too long a note":            {"bk_a", strings.Repeat("x", provider.NoteMax+1), provider.ErrInvalid},
			"a control character":        {"bk_a", "ring\x00mig", provider.ErrInvalid},
		} {
			if err := e.svc.Flag(ctx, staff, tc.booking, tc.note); !errors.Is(err, tc.want) {
				t.Errorf("%s: Flag = %v, want %v", name, err, tc.want)
			}
		}
		if types, _ := e.events(t, "bk_b"); len(types) != 0 {
			t.Errorf("refused flags wrote events: %v", types)
		}
		if err := e.svc.Flag(ctx, staff, "bk_a", note); err != nil {
			t.Fatalf("flag: %v", err)
		}
		types, payloads := e.events(t, "bk_a")
		if len(types) != 1 || types[0] != string(bokat.EventBookingProviderActionRequired) ||
			!strings.Contains(payloads[0], `"reason":"provider_flagged"`) {
			t.Fatalf("events: %v %v", types, payloads)
		}
		for _, secret := range []string{"kartan", "test@example.se", "Testgatan"} {
			if strings.Contains(payloads[0], secret) {
				t.Errorf("the event carries %q: %s", secret, payloads[0])
			}
		}
		entries, err := sqlstore.Bind[provider.Tx](db).ProviderAudit(ctx, providerA, 1)
		if err != nil || len(entries) != 1 || entries[0].Action != provider.ActionFlagged || entries[0].Actor != staff.ID ||
			entries[0].ObjectID != "bk_a" || entries[0].Note != "Adressen finns inte på kartan.\nRing mig." {
			t.Errorf("audit: %+v %v", entries, err)
		}
	})
}

func TestCancelGoesThroughTheBookingLifecycle(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e, staff := newBookedEnv(t, db)
		ctx := context.Background()
		for name, tc := range map[string]struct {
			booking, reason, notes string
			want                   error
		}{
			"another provider's booking": {"bk_b", "illness", "", bokat.ErrNotFound},
			"unknown reason":             {"bk_a", "bored", "", provider.ErrInvalid},
			"too long notes":             {"bk_a", "other", strings.Repeat("x", provider.CancelNotesMax+1), provider.ErrInvalid},
		} {
			if err := e.svc.Cancel(ctx, staff, tc.booking, tc.reason, tc.notes); !errors.Is(err, tc.want) {
				t.Errorf("%s: Cancel = %v, want %v", name, err, tc.want)
			}
		}
		if err := e.svc.Cancel(ctx, staff, "bk_a", "illness", "Sjuk hela veckan."); err != nil {
			t.Fatalf("cancel: %v", err)
		}
		if err := e.svc.Cancel(ctx, staff, "bk_a", "illness", ""); !errors.Is(err, provider.ErrNotConfirmed) {
			t.Errorf("a second cancel: %v", err)
		}
		var b bokat.Booking
		err := db.InTx(ctx, func(tx *sqlstore.Tx) error {
			var err error
			b, err = tx.BookingByID(ctx, "bk_a")
			return err
		})
		if err != nil || b.Status != bokat.BookingCancelled || b.CancelReason != "other" || b.Sequence != 1 ||
			!b.CancelledAt.Equal(e.clock.Now()) {
			t.Errorf("booking after cancel: %+v %v", b, err)
		}
		types, payloads := e.events(t, "bk_a")
		if len(types) != 1 || types[0] != string(bokat.EventBookingCancelled) ||
			!strings.Contains(payloads[0], `"reason":"provider_cancelled"`) || strings.Contains(payloads[0], "Sjuk") {
			t.Errorf("events: %v %v", types, payloads)
		}
		var jobs, busy int
		if err := db.R().QueryRowContext(ctx, `SELECT COUNT(*) FROM notification_jobs WHERE booking_id = 'bk_a'`).Scan(&jobs); err != nil || jobs != 2 {
			t.Errorf("notification jobs: %d %v, want the customer's and the provider's", jobs, err)
		}
		if err := db.R().QueryRowContext(ctx, `SELECT COUNT(*) FROM calendar_entries WHERE id = 'cal_bk_a' AND active`).Scan(&busy); err != nil || busy != 0 {
			t.Errorf("the slot is still taken: %d %v", busy, err)
		}
		entries, err := sqlstore.Bind[provider.Tx](db).ProviderAudit(ctx, providerA, 1)
		if err != nil || len(entries) != 1 || entries[0].Action != provider.ActionCancelled || entries[0].Note != "reason=illness" {
			t.Errorf("audit: %+v %v", entries, err)
		}
	})
}

// TestBookingsArePagedToTheEnd walks the upcoming and the past bookings a
// page at a time: every booking of the provider comes once, in order, the
// last page says no more follow, and another provider's booking is no
// cursor.
func TestBookingsArePagedToTheEnd(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		now := e.clock.Now()
		var upcoming, past []string
		for i := range 7 {
			id, start := fmt.Sprintf("bk_next_%d", i), now.Add(time.Duration(24+3*i)*time.Hour)
			sqlstoretest.InsertBookingEntry(t, db, providerA, id, start, start.Add(time.Hour))
			upcoming = append(upcoming, id)
		}
		for i := range 5 {
			id, start := fmt.Sprintf("bk_past_%d", i), now.Add(-time.Duration(24+3*i)*time.Hour)
			sqlstoretest.InsertBookingEntry(t, db, providerA, id, start, start.Add(time.Hour))
			past = append(past, id) // latest first
		}
		sqlstoretest.InsertBookingEntry(t, db, providerB, "bk_b", now.Add(30*time.Hour), now.Add(31*time.Hour))
		owner, _ := e.signIn(t, nil, providerA, "agare@vvs-ett.se", provider.Owner)

		for _, tc := range []struct {
			name string
			past bool
			want []string
		}{{"upcoming", false, upcoming}, {"past", true, past}} {
			t.Run(tc.name, func(t *testing.T) {
				var got []string
				after := ""
				for pages := 0; ; pages++ {
					if pages > len(tc.want) {
						t.Fatalf("more pages than bookings: %v", got)
					}
					page, err := e.svc.Bookings(ctx, owner, tc.past, after, 3)
					if err != nil {
						t.Fatal(err)
					}
					if len(page.Bookings) > 3 {
						t.Fatalf("a page of %d bookings, want at most 3", len(page.Bookings))
					}
					for _, b := range page.Bookings {
						got = append(got, b.ID)
					}
					if page.Next == "" {
						break
					}
					after = page.Next
				}
				if !equal(got, tc.want) {
					t.Errorf("bookings page by page: %v, want %v", got, tc.want)
				}
			})
		}
		for _, after := range []string{"bk_b", "bk_none"} {
			if _, err := e.svc.Bookings(ctx, owner, false, after, 3); !errors.Is(err, bokat.ErrNotFound) {
				t.Errorf("bookings after %s: %v, want not found", after, err)
			}
		}
	})
}
