package httpapi

import (
	"context"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"bokat"
	"bokat/internal/auth"
	"bokat/internal/oauth"
	"bokat/internal/sqlstore"
)

// TestRefreshTokensFromBeforeTheirPrefixChangedStillRefresh: refresh
// tokens are issued as bkf_ (no id starts so), and one issued as bkr_
// before (the booking request ids' prefix) still rotates until it expires.
func TestRefreshTokensFromBeforeTheirPrefixChangedStillRefresh(t *testing.T) {
	forEachOAuthEngine(t, func(t *testing.T, e *oauthEnv) {
		ctx := context.Background()
		conf := e.newClient("Hemhjälpen AI", false, bokat.ScopeBookingsRead)
		tok := e.exchange(conf, "kund@example.se")
		if !strings.HasPrefix(tok.RefreshToken, bokat.RefreshTokenPrefix) {
			t.Fatalf("refresh token %.8s…, want prefix %s", tok.RefreshToken, bokat.RefreshTokenPrefix)
		}
		issued, err := e.db.OAuthToken(ctx, oauth.TokenRefresh, e.hasher.Hash("refresh", tok.RefreshToken))
		if err != nil {
			t.Fatal(err)
		}
		// A refresh token of the same grant in the old form, stored as the
		// release before stored them.
		legacy := auth.NewSecret(bokat.LegacyRefreshTokenPrefix)
		now := e.clock.Now()
		err = sqlstore.Bind[oauth.Tx](e.db).InTx(ctx, func(tx oauth.Tx) error {
			return tx.InsertToken(ctx, oauth.Token{Hash: e.hasher.Hash("refresh", legacy), Kind: oauth.TokenRefresh,
				GrantID: issued.Grant.ID, Scopes: issued.Token.Scopes, CreatedAt: now, ExpiresAt: now.Add(oauth.RefreshTokenTTL)})
		})
		if err != nil {
			t.Fatal(err)
		}
		fresh, err := conf.TokenSource(ctx, &oauth2.Token{RefreshToken: legacy}).Token()
		if err != nil {
			t.Fatalf("refresh with a bkr_ refresh token: %v", err)
		}
		if !strings.HasPrefix(fresh.RefreshToken, bokat.RefreshTokenPrefix) || fresh.AccessToken == "" {
			t.Fatalf("rotated refresh token %.8s…, want prefix %s", fresh.RefreshToken, bokat.RefreshTokenPrefix)
		}
		if _, err := e.as.VerifyAccessToken(ctx, fresh.AccessToken); err != nil {
			t.Fatalf("access token from the legacy refresh: %v", err)
		}
	})
}
