package sqlstore_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"bokat"
	"bokat/internal/idem"
	"bokat/internal/operator"
	"bokat/internal/privacy"
	"bokat/internal/provider"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
)

// A key past its expiry is absent: the request runs again as a new one; an
// unexpired key replays. now is the caller's clock (a test owner's clock
// for a test key), the same clock its expiry was written on.
func TestExpiredIdempotencyKeyIsANewRequest(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		created := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
		ttl := 30 * 24 * time.Hour
		for _, mode := range []bokat.Mode{bokat.ModeLive, bokat.ModeTest} {
			t.Run(string(mode), func(t *testing.T) {
				k := idem.Key{Owner: "owner-" + string(mode), Operation: "requests.create", Key: "k1", Mode: mode}
				runs := 0
				call := func(now time.Time) (idem.Outcome, bool) {
					t.Helper()
					out, replay, err := db.InIdempotentTx(ctx, k, "fp", now, now.Add(ttl), func(tx *sqlstore.Tx) (idem.Outcome, error) {
						runs++
						return idem.Outcome{Body: []byte(`{}`), ResourceID: "req_" + string(rune('0'+runs))}, nil
					})
					if err != nil {
						t.Fatalf("InIdempotentTx at %s: %v", now, err)
					}
					return out, replay
				}
				first, _ := call(created)
				if out, replay := call(created.Add(ttl - time.Millisecond)); !replay || out.ResourceID != first.ResourceID {
					t.Fatalf("just before expiry: replay=%v resource %s, want a replay of %s", replay, out.ResourceID, first.ResourceID)
				}
				out, replay := call(created.Add(ttl))
				if replay || out.ResourceID == first.ResourceID || runs != 2 {
					t.Fatalf("at expiry: replay=%v resource %s runs %d, want a new request", replay, out.ResourceID, runs)
				}
				if again, replay := call(created.Add(ttl + time.Minute)); !replay || again.ResourceID != out.ResourceID {
					t.Fatalf("retry of the new request: replay=%v resource %s, want a replay of %s", replay, again.ResourceID, out.ResourceID)
				}
			})
		}
	})
}

// The retention pass deletes expired keys, in batches, and keeps the
// others and those kept as long as their resource.
func TestRetentionDeletesOnlyExpiredIdempotencyKeys(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
		put := func(key string, mode bokat.Mode, expires time.Time) {
			t.Helper()
			if err := db.InTx(ctx, func(tx *sqlstore.Tx) error {
				return tx.PutIdempotencyRecord(ctx, sqlstore.IdempotencyRecord{OwnerKey: "o", Operation: "op", Key: key,
					Fingerprint: "fp", CreatedAt: now.Add(-40 * 24 * time.Hour), ExpiresAt: expires, Mode: mode})
			}); err != nil {
				t.Fatal(err)
			}
		}
		const expired = 450 // more than two batches
		for i := 0; i < expired; i++ {
			mode := bokat.ModeLive
			if i%2 == 1 {
				mode = bokat.ModeTest
			}
			put("old-"+strconv.Itoa(i), mode, now.Add(-time.Duration(i+1)*time.Minute))
		}
		put("at-now", bokat.ModeLive, now)
		put("later", bokat.ModeLive, now.Add(time.Millisecond))
		put("later-test", bokat.ModeTest, now.Add(24*time.Hour))
		put("forever", bokat.ModeLive, time.Time{})

		got, err := privacy.New(sqlstore.Bind[privacy.Tx](db)).EraseExpired(ctx, func() time.Time { return now },
			privacy.Retention{Bookings: privacy.DefaultRetainBookings, Requests: privacy.DefaultRetainRequests}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got.IdempotencyKeys != expired+1 {
			t.Errorf("deleted %d keys, want %d", got.IdempotencyKeys, expired+1)
		}
		left, err := db.Strings(ctx, `SELECT idem_key FROM idempotency_keys ORDER BY idem_key`)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"forever", "later", "later-test"}; !slices.Equal(left, want) {
			t.Errorf("kept %v, want %v", left, want)
		}
	})
}

// The retention pass erases the address of every invitation that expired
// unanswered, in batches, and keeps the rows, the open invitation's address
// and the invitations closed before (their address went when they closed).
func TestRetentionErasesTheAddressesOfExpiredInvitations(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
		sqlstoretest.WithProvider(t, db, "prov_a")
		invite := func(id, email string, expires time.Time) {
			t.Helper()
			if err := db.InTx(ctx, func(tx *sqlstore.Tx) error {
				return tx.InsertInvitation(ctx, provider.Invitation{ID: id, ProviderID: "prov_a", Email: email,
					Role: provider.Staff, InvitedBy: "pu_owner", CreatedAt: expires.Add(-7 * 24 * time.Hour), ExpiresAt: expires})
			}); err != nil {
				t.Fatal(err)
			}
		}
		const expired = 210 // more than one batch
		for i := range expired {
			invite(fmt.Sprintf("inv_old_%03d", i), fmt.Sprintf("gammal%d@example.se", i), now.Add(-time.Duration(i+1)*time.Minute))
		}
		invite("inv_at_now", "nu@example.se", now)
		invite("inv_open", "oppen@example.se", now.Add(time.Millisecond))
		for _, accepted := range []bool{true, false} {
			id := fmt.Sprintf("inv_closed_%v", accepted)
			invite(id, id+"@example.se", now.Add(-time.Hour))
			if err := db.InTx(ctx, func(tx *sqlstore.Tx) error {
				return tx.CloseInvitation(ctx, "prov_a", id, accepted, now.Add(-2*time.Hour))
			}); err != nil {
				t.Fatal(err)
			}
		}
		while := now.Add(-48 * time.Hour) // every invitation but the closed ones open then
		if found, err := db.ProviderAccountExists(ctx, "gammal0@example.se", while); err != nil || !found {
			t.Fatalf("before the pass, an invitation open then is not found by its address: %v %v", found, err)
		}

		got, err := privacy.New(sqlstore.Bind[privacy.Tx](db)).EraseExpired(ctx, func() time.Time { return now },
			privacy.Retention{Bookings: privacy.DefaultRetainBookings, Requests: privacy.DefaultRetainRequests}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got.InvitationAddresses != expired+1 {
			t.Errorf("erased %d invitation addresses, want %d", got.InvitationAddresses, expired+1)
		}
		held, err := db.Strings(ctx, `SELECT id FROM provider_invitations WHERE email <> '' OR email_index <> '' ORDER BY id`)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"inv_open"}; !slices.Equal(held, want) {
			t.Errorf("invitations holding an address: %v, want %v", held, want)
		}
		if rows, err := db.Strings(ctx, `SELECT id FROM provider_invitations`); err != nil || len(rows) != expired+4 {
			t.Errorf("%d invitation rows left, want all %d (%v)", len(rows), expired+4, err)
		}
		for _, email := range []string{"gammal0@example.se", "gammal209@example.se", "nu@example.se"} {
			if found, err := db.ProviderAccountExists(ctx, email, while); err != nil || found {
				t.Errorf("after the pass, %s still finds an invitation: %v %v", email, found, err)
			}
		}
		if found, err := db.ProviderAccountExists(ctx, "oppen@example.se", now); err != nil || !found {
			t.Errorf("the open invitation is not found by its address: %v %v", found, err)
		}
		open, err := db.OpenInvitations(ctx, "prov_a", now)
		if err != nil || len(open) != 1 || open[0].Email != "oppen@example.se" {
			t.Errorf("open invitations %+v (%v), want inv_open with its address", open, err)
		}
	})
}

// The retention pass deletes the operator audit rows older than the
// period, in batches, and keeps the rest; without a period it keeps all.
func TestRetentionDeletesOldOperatorAuditRows(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
		const period = 730 * 24 * time.Hour
		write := func(id string, at time.Time) {
			t.Helper()
			if err := db.InTx(ctx, func(tx *sqlstore.Tx) error {
				return tx.AppendOperatorAudit(ctx, operator.AuditEntry{ID: id, At: at, Actor: "cli:drift", Action: "partner.key_rotated",
					ObjectKind: "partner", ObjectID: "pc_1", Details: map[string]string{"mode": "live"}})
			}); err != nil {
				t.Fatal(err)
			}
		}
		const old = 230 // more than one batch
		for i := range old {
			write(fmt.Sprintf("opa_old_%03d", i), now.Add(-period-time.Duration(i+1)*time.Minute))
		}
		write("opa_at_bound", now.Add(-period))
		write("opa_recent", now.Add(-time.Hour))
		erase := func(r privacy.Retention) privacy.Expired {
			t.Helper()
			got, err := privacy.New(sqlstore.Bind[privacy.Tx](db)).EraseExpired(ctx, func() time.Time { return now }, r, nil)
			if err != nil {
				t.Fatal(err)
			}
			return got
		}
		if got := erase(privacy.Retention{Bookings: privacy.DefaultRetainBookings, Requests: privacy.DefaultRetainRequests}); got.OperatorAudit != 0 {
			t.Errorf("without a period: deleted %d rows, want none", got.OperatorAudit)
		}
		if got := erase(privacy.Retention{Bookings: privacy.DefaultRetainBookings, Requests: privacy.DefaultRetainRequests,
			OperatorAudit: period}); got.OperatorAudit != old {
			t.Errorf("deleted %d operator audit rows, want %d", got.OperatorAudit, old)
		}
		left, err := db.Strings(ctx, `SELECT id FROM operator_audit ORDER BY id`)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"opa_at_bound", "opa_recent"}; !slices.Equal(left, want) {
			t.Errorf("kept %v, want %v", left, want)
		}
	})
}
