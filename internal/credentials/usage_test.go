package credentials_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"bokat"
	"bokat/internal/auth"
	"bokat/internal/clocktest"
	"bokat/internal/credentials"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
)

var testPepper = []byte("0123456789abcdef0123456789abcdef")

// testService is the lifecycle on db, hashing with testPepper, on a test
// clock at 2026-11-26 09:00 UTC.
func testService(tb testing.TB, db *sqlstore.DB) (*credentials.Service, *auth.Hasher, *clocktest.Clock) {
	tb.Helper()
	hasher, err := auth.NewHasher(testPepper)
	if err != nil {
		tb.Fatal(err)
	}
	clock := clocktest.New(time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC))
	return credentials.New(sqlstore.Bind[credentials.Tx](db), hasher, clock.Now), hasher, clock
}

func lastUsed(t testing.TB, svc *credentials.Service, id string) time.Time {
	t.Helper()
	all, err := svc.Partners(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range all {
		if p.ID == id {
			return p.LastUsedAt
		}
	}
	t.Fatalf("no partner %s", id)
	return time.Time{}
}

// The store's statement changes nothing within a minute of the recorded
// use, whoever writes: two processes (two recorders) using the same
// credential write its row once a minute between them.
func TestLastUseIsWrittenAtMostOnceAMinuteAcrossProcesses(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		svc, _, clock := testService(t, db)
		t0 := clock.Now()
		p, _, err := svc.CreatePartner(ctx, "cli:test", bokat.ModeLive, "Acme", bokat.AllScopes())
		if err != nil {
			t.Fatal(err)
		}
		one, two := auth.NewUsage(db, nil), auth.NewUsage(db, nil)
		one.Record(ctx, auth.UsePartner, p.ID, t0)
		two.Record(ctx, auth.UsePartner, p.ID, t0.Add(30*time.Second))
		if got := lastUsed(t, svc, p.ID); !got.Equal(t0) {
			t.Errorf("after a second process's use within the minute: %v, want %v", got, t0)
		}
		one.Record(ctx, auth.UsePartner, p.ID, t0.Add(40*time.Second))
		if one.Writes() != 1 {
			t.Errorf("the first process wrote %d times within its minute, want 1", one.Writes())
		}
		// The second process wrote (a statement that changed nothing) at
		// 30 s, so it waits for its own minute; the first one's has passed.
		two.Record(ctx, auth.UsePartner, p.ID, t0.Add(time.Minute))
		if two.Writes() != 1 {
			t.Errorf("the second process wrote %d times, want 1", two.Writes())
		}
		one.Record(ctx, auth.UsePartner, p.ID, t0.Add(time.Minute))
		if got := lastUsed(t, svc, p.ID); !got.Equal(t0.Add(time.Minute)) {
			t.Errorf("a minute later: %v, want %v", got, t0.Add(time.Minute))
		}
	})
}

// BenchmarkAuthenticate measures a partner request's authentication with
// and without recording last use, alternated in one run; writes/op shows
// that the write is per credential and minute, not per request.
func BenchmarkAuthenticate(b *testing.B) {
	db := sqlstoretest.Open(b, sqlstore.SQLite)
	ctx := context.Background()
	svc, hasher, clock := testService(b, db)
	_, token, err := svc.CreatePartner(ctx, "cli:bench", bokat.ModeLive, "Acme", bokat.AllScopes())
	if err != nil {
		b.Fatal(err)
	}
	req := httptest.NewRequest("GET", "/v1/webhook-endpoints", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	for _, withUsage := range []bool{false, true} {
		name := "without-usage"
		if withUsage {
			name = "with-usage"
		}
		b.Run(name, func(b *testing.B) {
			a := auth.NewAuthenticator(hasher, db, nil).WithClock(clock.Now)
			var usage *auth.Usage
			if withUsage {
				usage = auth.NewUsage(db, nil)
				a.WithUsage(usage)
			}
			for i := 0; b.Loop(); i++ {
				if i%1000 == 0 {
					clock.Advance(time.Second) // 1000 requests a second: a write a minute
				}
				if _, err := a.Authenticate(ctx, req, bokat.AudienceAPI); err != nil {
					b.Fatal(err)
				}
			}
			if usage != nil {
				b.ReportMetric(float64(usage.Writes())/float64(b.N), "writes/op")
			}
		})
	}
}

// A rotated token keeps its credential's realm: a test credential's new
// token starts with the test prefix, a live one's never does.
func TestRotationKeepsTheRealm(t *testing.T) {
	t.Parallel()
	db := sqlstoretest.Open(t, sqlstore.SQLite)
	ctx := context.Background()
	hasher, _ := auth.NewHasher(testPepper)
	svc := credentials.New(sqlstore.Bind[credentials.Tx](db), hasher, nil)
	for _, mode := range []bokat.Mode{bokat.ModeTest, bokat.ModeLive} {
		p, _, err := svc.CreatePartner(ctx, "cli:test", mode, "Realm "+string(mode), bokat.AllScopes())
		if err != nil {
			t.Fatal(err)
		}
		r, err := svc.RotatePartner(ctx, "cli:test", p.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(r.Token, bokat.PartnerTestTokenPrefix) != mode.Test() || r.Partner.Mode != mode {
			t.Errorf("%s credential rotated to %q (%+v)", mode, r.Token[:12], r.Partner)
		}
	}
}
