package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"bokat"
	"bokat/internal/oauth"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
)

// grantFixture stores a client, a user and a grant with an access and a
// refresh token.
func grantFixture(t *testing.T, db *sqlstore.DB, now time.Time) oauth.Grant {
	t.Helper()
	ctx := context.Background()
	if err := db.CreateOAuthClient(ctx, oauth.Client{ID: "oc_1", Name: "Appen", SecretHash: "h",
		RedirectURIs: []string{"https://a.example/cb", "http://127.0.0.1/cb"}, Scopes: bokat.AllScopes(), CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	g := oauth.Grant{ID: "g1", ClientID: "oc_1", Scopes: []bokat.Scope{bokat.ScopeBookingsRead}, CodeHash: "code-h",
		RedirectURI: "https://a.example/cb", RedirectURIGiven: true, CodeChallenge: "ch", Audience: bokat.AudienceMCP, CodeExpiresAt: now.Add(time.Minute), CreatedAt: now}
	err := db.InTx(ctx, func(tx *sqlstore.Tx) error {
		uid, err := tx.SignInUser(ctx, "usr_1", "kund@example.se", now)
		if err != nil {
			return err
		}
		g.UserID = uid
		if err := tx.InsertGrant(ctx, g); err != nil {
			return err
		}
		for _, tok := range []oauth.Token{
			{Hash: "access-h", Kind: oauth.TokenAccess, GrantID: g.ID, Scopes: g.Scopes, CreatedAt: now, ExpiresAt: now.Add(15 * time.Minute)},
			{Hash: "refresh-h", Kind: oauth.TokenRefresh, GrantID: g.ID, Scopes: g.Scopes, CreatedAt: now, ExpiresAt: now.Add(time.Hour)},
		} {
			if err := tx.InsertToken(ctx, tok); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestOAuthRecordsRoundTrip(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		now := time.UnixMilli(1_790_000_000_123).UTC()
		want := grantFixture(t, db, now)

		c, err := db.OAuthClient(ctx, "oc_1")
		if err != nil || c.Name != "Appen" || c.Registration != oauth.ClientOperator || len(c.RedirectURIs) != 2 || c.RedirectURIs[1] != "http://127.0.0.1/cb" || len(c.Scopes) != 8 {
			t.Fatalf("client = %+v, %v", c, err)
		}
		if _, err := db.OAuthClient(ctx, "oc_nope"); !errors.Is(err, bokat.ErrNotFound) {
			t.Fatalf("unknown client: %v", err)
		}
		tg, err := db.OAuthToken(ctx, oauth.TokenAccess, "access-h")
		if err != nil {
			t.Fatal(err)
		}
		g := tg.Grant
		if g.ID != want.ID || g.ClientID != "oc_1" || g.UserID != "usr_1" || !g.RedirectURIGiven || g.RedirectURI != want.RedirectURI ||
			g.CodeChallenge != "ch" || g.Audience != bokat.AudienceMCP || !g.CodeExpiresAt.Equal(want.CodeExpiresAt) || !g.CodeUsedAt.IsZero() || !g.RevokedAt.IsZero() ||
			!tg.ClientActive || tg.Token.Kind != oauth.TokenAccess || !tg.Token.ExpiresAt.Equal(now.Add(15*time.Minute)) {
			t.Fatalf("token and grant = %+v", tg)
		}
		if _, err := db.OAuthToken(ctx, oauth.TokenRefresh, "access-h"); !errors.Is(err, bokat.ErrNotFound) {
			t.Fatalf("an access token found as a refresh token: %v", err)
		}
		// The same e-mail signs in as the same user.
		err = db.InTx(ctx, func(tx *sqlstore.Tx) error {
			id, err := tx.SignInUser(ctx, "usr_2", "kund@example.se", now.Add(time.Hour))
			if err == nil && id != "usr_1" {
				err = fmt.Errorf("second sign-in got user %s, want usr_1", id)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		// Revoking the grant revokes every token of the family.
		if err := db.InTx(ctx, func(tx *sqlstore.Tx) error { return tx.RevokeGrant(ctx, "g1", "test", now) }); err != nil {
			t.Fatal(err)
		}
		for _, k := range []struct{ kind, hash string }{{oauth.TokenAccess, "access-h"}, {oauth.TokenRefresh, "refresh-h"}} {
			tg, err := db.OAuthToken(ctx, k.kind, k.hash)
			if err != nil || tg.Token.RevokedAt.IsZero() || tg.Grant.RevokedAt.IsZero() {
				t.Fatalf("%s after RevokeGrant: %+v, %v", k.kind, tg, err)
			}
		}
	})
}

// TestSingleUseMarksAreAtomic: of many concurrent redemptions of one code
// or one refresh token, exactly one wins, on both engines.
func TestSingleUseMarksAreAtomic(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		now := time.Now()
		grantFixture(t, db, now)
		for name, mark := range map[string]func(tx *sqlstore.Tx) (bool, error){
			"code":    func(tx *sqlstore.Tx) (bool, error) { return tx.MarkCodeUsed(ctx, "g1", now) },
			"refresh": func(tx *sqlstore.Tx) (bool, error) { return tx.MarkRefreshUsed(ctx, "refresh-h", now) },
		} {
			var wins atomic.Int32
			var wg sync.WaitGroup
			for i := 0; i < 12; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					err := db.InTx(ctx, func(tx *sqlstore.Tx) error {
						first, err := mark(tx)
						if first {
							wins.Add(1)
						}
						return err
					})
					if err != nil {
						t.Errorf("%s: %v", name, err)
					}
				}()
			}
			wg.Wait()
			if wins.Load() != 1 {
				t.Errorf("%s: %d first uses, want exactly 1", name, wins.Load())
			}
		}
	})
}

func TestSignInAttemptsAreCounted(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		now := time.Now()
		c := oauth.SignInCode{ID: "h1", Email: "a@example.se", EmailHash: "eh", BrowserHash: "bh", CodeHash: "ch",
			CreatedAt: now, ExpiresAt: now.Add(10 * time.Minute)}
		if err := db.InTx(ctx, func(tx *sqlstore.Tx) error { return tx.InsertSignInCode(ctx, c) }); err != nil {
			t.Fatal(err)
		}
		for want := 1; want <= 3; want++ {
			var got oauth.SignInCode
			err := db.InTx(ctx, func(tx *sqlstore.Tx) (err error) {
				got, err = tx.SpendSignInAttempt(ctx, "h1", 3, now)
				return err
			})
			if err != nil || got.Attempts != want || got.Email != "a@example.se" {
				t.Fatalf("attempt %d: %+v, %v", want, got, err)
			}
		}
		err := db.InTx(ctx, func(tx *sqlstore.Tx) error { _, err := tx.SpendSignInAttempt(ctx, "h1", 3, now); return err })
		if !errors.Is(err, bokat.ErrNotFound) {
			t.Fatalf("fourth attempt of three: %v", err)
		}
		var n int
		err = db.InTx(ctx, func(tx *sqlstore.Tx) (err error) {
			n, err = tx.SignInCodesSince(ctx, "eh", now.Add(-time.Hour))
			return err
		})
		if err != nil || n != 1 {
			t.Fatalf("codes since: %d, %v", n, err)
		}
	})
}

func TestPurgeOAuthKeepsWhatMayStillBeUsed(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		now := time.Now()
		grantFixture(t, db, now)
		// The access token's expiry plus a day: it goes, the refresh token stays.
		n, err := db.PurgeOAuth(ctx, now.Add(15*time.Minute+24*time.Hour+time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.OAuthToken(ctx, oauth.TokenAccess, "access-h"); !errors.Is(err, bokat.ErrNotFound) || n != 1 {
			t.Fatalf("expired access token not purged (n=%d, err=%v)", n, err)
		}
		if _, err := db.OAuthToken(ctx, oauth.TokenRefresh, "refresh-h"); err != nil {
			t.Fatalf("refresh token purged early: %v", err)
		}
		// Much later the refresh token and then its grant go too.
		if _, err := db.PurgeOAuth(ctx, now.Add(90*24*time.Hour)); err != nil {
			t.Fatal(err)
		}
		var grants int
		if err := db.R().QueryRowContext(ctx, `SELECT COUNT(*) FROM oauth_grants`).Scan(&grants); err != nil || grants != 0 {
			t.Fatalf("%d grants left (err %v)", grants, err)
		}
	})
}

// TestMetadataClients: a Client ID Metadata Document's client is stored
// under its URL and refreshed from the document, but never revives a
// revoked client nor takes over a client registered another way.
func TestMetadataClients(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		now := time.UnixMilli(1_790_000_000_123).UTC()
		const id = "https://app.example/client.json"
		c := oauth.Client{ID: id, Name: "Appen", RedirectURIs: []string{"https://app.example/cb"},
			Scopes: []bokat.Scope{bokat.ScopeBookingsRead}, CreatedAt: now}
		got, err := db.PutMetadataClient(ctx, c)
		if err != nil || got.Registration != oauth.ClientMetadata || !got.Public() || got.Name != "Appen" {
			t.Fatalf("first put = %+v, %v", got, err)
		}
		c.Name, c.RedirectURIs = "Appen 2", []string{"https://app.example/cb2", "http://127.0.0.1/cb"}
		got, err = db.PutMetadataClient(ctx, c)
		if err != nil || got.Name != "Appen 2" || len(got.RedirectURIs) != 2 || !got.CreatedAt.Equal(now) {
			t.Fatalf("refresh = %+v, %v", got, err)
		}
		if err := db.InTx(ctx, func(tx *sqlstore.Tx) error {
			_, err := tx.Q().ExecContext(ctx, `UPDATE oauth_clients SET revoked_at = 1 WHERE id = $1`, id)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.PutMetadataClient(ctx, c); !errors.Is(err, bokat.ErrNotFound) {
			t.Fatalf("put over a revoked client: %v, want not found", err)
		}
		if err := db.CreateOAuthClient(ctx, oauth.Client{ID: "https://op.example/c", Name: "Op",
			RedirectURIs: []string{"https://op.example/cb"}, Scopes: bokat.AllScopes(), CreatedAt: now}); err != nil {
			t.Fatal(err)
		}
		c.ID = "https://op.example/c"
		if _, err := db.PutMetadataClient(ctx, c); !errors.Is(err, bokat.ErrNotFound) {
			t.Fatalf("put over an operator client: %v, want not found", err)
		}
	})
}
