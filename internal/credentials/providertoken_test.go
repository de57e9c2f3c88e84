package credentials_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"bokat"
	"bokat/internal/auth"
	"bokat/internal/credentials"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
)

// A provider API token is listed without its secret, with its last use;
// revoking it refuses it from the next authentication on, writes its audit
// row, and a second revocation is refused.
func TestProviderTokenListAndRevoke(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		svc, hasher, clock := testService(t, db)
		t0 := clock.Now()
		sqlstoretest.WithProvider(t, db, "prv_tok")
		authn := auth.NewAuthenticator(hasher, db, nil).WithProviderTokens(db).WithClock(clock.Now).WithUsage(auth.NewUsage(db, nil))
		id, token, err := authn.CreateProviderToken(ctx, "prv_tok", "Kassan", bokat.ProviderScopes(), t0)
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest("GET", "/v1/provider/hours", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		if _, err := authn.Authenticate(ctx, req, bokat.AudienceAPI); err != nil {
			t.Fatalf("the new token: %v", err)
		}
		list, err := svc.ProviderTokens(ctx, "prv_tok")
		if err != nil || len(list) != 1 || list[0].ID != id || list[0].Name != "Kassan" || !list[0].LastUsedAt.Equal(t0) ||
			!list[0].RevokedAt.IsZero() {
			t.Fatalf("list: %+v %v", list, err)
		}
		if other, err := svc.ProviderTokens(ctx, "prv_other"); err != nil || len(other) != 0 {
			t.Errorf("another provider's list: %+v %v", other, err)
		}
		clock.Advance(time.Hour)
		got, err := svc.RevokeProviderToken(ctx, "op_1", id)
		if err != nil || !got.RevokedAt.Equal(t0.Add(time.Hour)) {
			t.Fatalf("revoke: %+v %v", got, err)
		}
		if _, err := authn.Authenticate(ctx, req, bokat.AudienceAPI); err == nil {
			t.Error("the revoked token still authenticates")
		}
		if _, err := svc.RevokeProviderToken(ctx, "op_1", id); err == nil {
			t.Error("a second revocation succeeded")
		}
		if _, err := svc.RevokeProviderToken(ctx, "op_1", "pt_nobody"); err == nil {
			t.Error("revoking an unknown token succeeded")
		}
		a, err := svc.Audit(ctx, credentials.AuditQuery{ObjectKind: credentials.KindProviderToken, ObjectID: id})
		if err != nil || len(a) != 1 || a[0].Action != credentials.ActionProviderTokenRevoked || a[0].Actor != "op_1" ||
			a[0].Details["provider_id"] != "prv_tok" {
			t.Errorf("audit: %+v %v", a, err)
		}
	})
}
