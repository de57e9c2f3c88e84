package credentials_test

import (
	"context"
	"errors"
	"maps"
	"testing"
	"time"

	"bokat"
	"bokat/internal/auth"
	"bokat/internal/credentials"
	"bokat/internal/oauth"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
)

// Every kind of credential is revoked alike: once, at the clock's now,
// with one audit record of the operator and the kind's details; an
// unknown id is not_found and a second revocation validation_failed, each
// naming the kind and the id.
func TestEveryKindIsRevokedOnceWithItsAuditRecord(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		svc, hasher, clock := testService(t, db)
		t0 := clock.Now()
		partner, _, err := svc.CreatePartner(ctx, "cli:test", bokat.ModeLive, "Acme", bokat.AllScopes())
		if err != nil {
			t.Fatal(err)
		}
		client, _, err := svc.CreateOAuthClient(ctx, "cli:test", oauth.ClientSpec{Name: "Kalendern",
			RedirectURIs: []string{"https://app.example.se/cb"}, Scopes: bokat.AllScopes()})
		if err != nil {
			t.Fatal(err)
		}
		sqlstoretest.WithProvider(t, db, "prv_rev")
		token, _, err := auth.NewAuthenticator(hasher, db, nil).WithProviderTokens(db).
			CreateProviderToken(ctx, "prv_rev", "Kassan", bokat.ProviderScopes(), t0)
		if err != nil {
			t.Fatal(err)
		}
		revokedAt := func(c any) time.Time {
			switch c := c.(type) {
			case credentials.Partner:
				return c.RevokedAt
			case credentials.OAuthClient:
				return c.RevokedAt
			case credentials.ProviderToken:
				return c.RevokedAt
			}
			return time.Time{}
		}
		for _, tc := range []struct {
			kind, id, action, unknown string
			revoke                    func(id string) (any, error)
			details                   map[string]string
			notFound, again           string
			records                   int // the kind's audit records: its creation's too, where it writes one
		}{
			{kind: credentials.KindPartner, id: partner.ID, action: credentials.ActionPartnerRevoked, unknown: "pc_nobody",
				revoke:   func(id string) (any, error) { return svc.RevokePartner(ctx, "op_1", id) },
				details:  map[string]string{"name": "Acme"},
				notFound: "no partner pc_nobody", again: "partner " + partner.ID + " was already revoked at 2026-11-26T10:00:00Z",
				records: 2},
			{kind: credentials.KindOAuthClient, id: client, action: credentials.ActionOAuthClientRevoked, unknown: "oc_nobody",
				revoke:   func(id string) (any, error) { return svc.RevokeOAuthClient(ctx, "op_1", id) },
				details:  map[string]string{"name": "Kalendern", "registration": oauth.ClientOperator, "grants_revoked": "0"},
				notFound: "no oauth client oc_nobody", again: "OAuth client " + client + " was already revoked at 2026-11-26T10:00:00Z",
				records: 2},
			{kind: credentials.KindProviderToken, id: token, action: credentials.ActionProviderTokenRevoked, unknown: "pt_nobody",
				revoke:   func(id string) (any, error) { return svc.RevokeProviderToken(ctx, "op_1", id) },
				details:  map[string]string{"provider_id": "prv_rev", "name": "Kassan"},
				notFound: "no provider token pt_nobody", again: "provider token " + token + " was already revoked at 2026-11-26T10:00:00Z",
				records: 1},
		} {
			clock.Set(t0.Add(time.Hour))
			got, err := tc.revoke(tc.id)
			if err != nil || !revokedAt(got).Equal(t0.Add(time.Hour)) {
				t.Fatalf("%s: revoke: %+v %v", tc.kind, got, err)
			}
			clock.Advance(time.Minute)
			for name, want := range map[string]struct {
				id, detail string
				code       bokat.Code
			}{
				"unknown":    {tc.unknown, tc.notFound, bokat.CodeNotFound},
				"once again": {tc.id, tc.again, bokat.CodeValidationFailed},
			} {
				_, err := tc.revoke(want.id)
				var be *bokat.Error
				if !errors.As(err, &be) || be.Code != want.code || be.Detail != want.detail {
					t.Errorf("%s %s: %v, want %s: %s", tc.kind, name, err, want.code, want.detail)
				}
			}
			a, err := svc.Audit(ctx, credentials.AuditQuery{ObjectKind: tc.kind, ObjectID: tc.id})
			if err != nil || len(a) != tc.records {
				t.Fatalf("%s: audit %+v %v, want %d records", tc.kind, a, err, tc.records)
			}
			if r := a[0]; r.Action != tc.action || r.Actor != "op_1" || !r.At.Equal(t0.Add(time.Hour)) || !maps.Equal(r.Details, tc.details) {
				t.Errorf("%s: newest audit record %+v, want %s by op_1 at the revocation with %v", tc.kind, r, tc.action, tc.details)
			}
		}
	})
}
