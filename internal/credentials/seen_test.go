package credentials_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"bokat"
	"bokat/internal/credentials"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
)

// A rotation that names the rotation it was shown happens once, however
// many times (and however concurrently) it is asked for: the others
// answer bokat.ErrConflict and write no audit row.
func TestRotatePartnerSeenRotatesOnce(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		svc, _, clock := testService(t, db)
		p, _, err := svc.CreatePartner(ctx, "cli:test", bokat.ModeLive, "Acme", bokat.AllScopes())
		if err != nil {
			t.Fatal(err)
		}
		var (
			wg              sync.WaitGroup
			mu              sync.Mutex
			done, conflicts int
		)
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := svc.RotatePartnerSeen(ctx, "op_1", p.ID, time.Hour, time.Time{})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					done++
				case errors.Is(err, bokat.ErrConflict):
					conflicts++
				default:
					t.Errorf("rotate: %v", err)
				}
			}()
		}
		wg.Wait()
		if done != 1 || conflicts != 3 {
			t.Errorf("%d rotations and %d conflicts, want 1 and 3", done, conflicts)
		}
		all, err := svc.Partners(ctx)
		if err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Minute)
		if _, err := svc.RotatePartnerSeen(ctx, "op_1", p.ID, 0, all[0].RotatedAt); err != nil {
			t.Errorf("a rotation that names the last one: %v", err)
		}
		a, err := svc.Audit(ctx, credentials.AuditQuery{ObjectKind: credentials.KindPartner, ObjectID: p.ID})
		if err != nil || len(a) != 3 {
			t.Errorf("audit rows: %d %v, want created and two rotations", len(a), err)
		}
	})
}
