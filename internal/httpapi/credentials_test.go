package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"bokat"
	"bokat/internal/auth"
	"bokat/internal/clocktest"
	"bokat/internal/credentials"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
)

// The credential lifecycle (docs/operators.md) proved at the HTTP edge, on
// both engines and the injected clock: the use cases the CLI and the
// console call change what the next request is answered.

const credentialsPath = "/v1/webhook-endpoints"

// lifecycleEnv is a server whose authenticator runs on clock and records
// last use through usage, with the lifecycle on the same store.
func lifecycleEnv(t *testing.T, db *sqlstore.DB, clock *clocktest.Clock) (*testEnv, *credentials.Service, *auth.Usage) {
	t.Helper()
	hasher, err := auth.NewHasher([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	usage := auth.NewUsage(db, nil)
	e := newTestEnv(t, db, func(c *envConfig) {
		c.Now = clock.Now
		c.hasher = hasher
		c.Auth = auth.NewAuthenticator(hasher, db, nil).WithClock(clock.Now).WithUsage(usage)
	})
	return e, credentials.New(sqlstore.Bind[credentials.Tx](db), hasher, clock.Now), usage
}

// call is GET /v1/webhook-endpoints with the token.
func (e *testEnv) callWith(token string) response {
	e.t.Helper()
	return e.do(request{Method: "GET", Path: credentialsPath, Header: bearer(token)})
}

func expectOK(t *testing.T, r response, what string) {
	t.Helper()
	if r.Status != http.StatusOK {
		t.Fatalf("%s: %d %s, want 200", what, r.Status, r.Body)
	}
}

func partnerByID(t *testing.T, svc *credentials.Service, id string) credentials.Partner {
	t.Helper()
	all, err := svc.Partners(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range all {
		if p.ID == id {
			return p
		}
	}
	t.Fatalf("partner %s is not listed", id)
	return credentials.Partner{}
}

// checkNoSecret fails when v, as JSON, holds any of the secrets or their
// keyed hashes.
func checkNoSecret(t *testing.T, what string, v any, hasher *auth.Hasher, secrets ...string) {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets {
		if strings.Contains(string(raw), s) || strings.Contains(string(raw), hasher.HashPartnerToken(s)) {
			t.Errorf("%s shows a token or its hash: %s", what, raw)
		}
	}
}

func TestPartnerRotationRevocationAndLastUseAtTheHTTPEdge(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		t0 := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
		clock := clocktest.New(t0)
		e, svc, usage := lifecycleEnv(t, db, clock)
		hasher, _ := auth.NewHasher([]byte("0123456789abcdef0123456789abcdef"))
		const actor = "op_0001"

		p, tok0, err := svc.CreatePartner(ctx, actor, bokat.ModeLive, "Acme Assist", bokat.AllScopes())
		if err != nil {
			t.Fatal(err)
		}
		if got := partnerByID(t, svc, p.ID); !got.LastUsedAt.IsZero() || got.State(clock.Now()) != credentials.StateActive {
			t.Fatalf("a fresh credential: %+v", got)
		}

		// Last use: the first request writes it; the next ones within the
		// minute write nothing; a request a minute later writes it again.
		expectOK(t, e.callWith(tok0), "the new token")
		writes := usage.Writes()
		for range 20 {
			clock.Advance(2 * time.Second)
			expectOK(t, e.callWith(tok0), "the token within the minute")
		}
		if n := usage.Writes() - writes; n != 0 {
			t.Errorf("%d last-use writes for 20 requests within a minute of the first, want 0", n)
		}
		if got := partnerByID(t, svc, p.ID); !got.LastUsedAt.Equal(t0) {
			t.Errorf("last used %v, want %v (the first request of the minute)", got.LastUsedAt, t0)
		}
		clock.Set(t0.Add(time.Minute))
		expectOK(t, e.callWith(tok0), "the token a minute later")
		if n := usage.Writes() - writes; n != 1 {
			t.Errorf("%d writes after a minute, want 1", n)
		}
		if got := partnerByID(t, svc, p.ID); !got.LastUsedAt.Equal(t0.Add(time.Minute)) {
			t.Errorf("last used %v, want %v", got.LastUsedAt, t0.Add(time.Minute))
		}

		// Rotation with an hour's overlap: both tokens work until it ends.
		t1 := t0.Add(10 * time.Minute)
		clock.Set(t1)
		rot, err := svc.RotatePartner(ctx, actor, p.ID, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		tok1 := rot.Token
		if tok1 == tok0 || !strings.HasPrefix(tok1, "bkp_") || strings.HasPrefix(tok1, bokat.PartnerTestTokenPrefix) ||
			!rot.PreviousValidUntil.Equal(t1.Add(time.Hour)) || rot.EndedEarlier {
			t.Fatalf("rotation %+v", rot)
		}
		expectOK(t, e.callWith(tok1), "the new token")
		expectOK(t, e.callWith(tok0), "the old token during the overlap")
		got := partnerByID(t, svc, p.ID)
		if got.State(clock.Now()) != credentials.StateRotating || !got.PreviousLastUsedAt.Equal(t1) || !got.RotatedAt.Equal(t1) ||
			!got.PreviousValidUntil.Equal(t1.Add(time.Hour)) {
			t.Errorf("during the overlap: %+v", got)
		}
		clock.Set(t1.Add(time.Hour - time.Millisecond))
		expectOK(t, e.callWith(tok0), "the old token a millisecond before the overlap ends")
		clock.Set(t1.Add(time.Hour))
		checkProblem(t, e.callWith(tok0), http.StatusUnauthorized, bokat.CodeUnauthorized, credentialsPath)
		expectOK(t, e.callWith(tok1), "the new token after the overlap")
		if got := partnerByID(t, svc, p.ID); got.State(clock.Now()) != credentials.StateActive {
			t.Errorf("after the overlap: state %s", got.State(clock.Now()))
		}

		// A rotation during an overlap ends the token replaced before at
		// once: at most two tokens work.
		rot2, err := svc.RotatePartner(ctx, actor, p.ID, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		rot3, err := svc.RotatePartner(ctx, actor, p.ID, 2*time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if !rot3.EndedEarlier {
			t.Error("the third rotation did not report ending the second one's overlap")
		}
		checkProblem(t, e.callWith(tok1), http.StatusUnauthorized, bokat.CodeUnauthorized, credentialsPath)
		expectOK(t, e.callWith(rot2.Token), "the token replaced by the latest rotation")
		expectOK(t, e.callWith(rot3.Token), "the latest token")

		// Bad rotations change nothing.
		if _, err := svc.RotatePartner(ctx, actor, p.ID, 31*24*time.Hour); err == nil {
			t.Error("an overlap of 31 days was accepted")
		}
		if _, err := svc.RotatePartner(ctx, actor, "pc_nobody", time.Hour); err == nil {
			t.Error("an unknown partner was rotated")
		}
		expectOK(t, e.callWith(rot3.Token), "the latest token after refused rotations")

		// Revocation: the next call with either working token is 401.
		if _, err := svc.RevokePartner(ctx, actor, p.ID); err != nil {
			t.Fatal(err)
		}
		for name, tok := range map[string]string{"latest": rot3.Token, "in its overlap": rot2.Token} {
			r := e.callWith(tok)
			checkProblem(t, r, http.StatusUnauthorized, bokat.CodeUnauthorized, credentialsPath)
			if t.Failed() {
				t.Fatalf("the %s token still works after the revocation", name)
			}
		}
		if _, err := svc.RevokePartner(ctx, actor, p.ID); err == nil {
			t.Error("a second revocation succeeded")
		}
		if _, err := svc.RotatePartner(ctx, actor, p.ID, 0); err == nil {
			t.Error("a revoked credential was rotated")
		}
		if got := partnerByID(t, svc, p.ID); got.State(clock.Now()) != credentials.StateRevoked || !got.RevokedAt.Equal(clock.Now()) {
			t.Errorf("after the revocation: %+v", got)
		}

		// The list never shows a token or a hash.
		list, err := svc.Partners(ctx)
		if err != nil {
			t.Fatal(err)
		}
		checkNoSecret(t, "the partner list", list, hasher, tok0, tok1, rot2.Token, rot3.Token, e.token)

		// One audit row per action, newest first, by the actor, without a
		// token.
		rows, err := svc.Audit(ctx, credentials.AuditQuery{ObjectKind: credentials.KindPartner, ObjectID: p.ID})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{credentials.ActionPartnerRevoked, credentials.ActionPartnerRotated, credentials.ActionPartnerRotated,
			credentials.ActionPartnerRotated, credentials.ActionPartnerCreated}
		if len(rows) != len(want) {
			t.Fatalf("%d audit rows, want %d: %+v", len(rows), len(want), rows)
		}
		for i, r := range rows {
			if r.Action != want[i] || r.Actor != actor || r.ObjectKind != credentials.KindPartner || r.ObjectID != p.ID || r.ID == "" {
				t.Errorf("audit row %d: %+v, want %s", i, r, want[i])
			}
		}
		if rows[0].At != clock.Now() || rows[3].Details["overlap"] != "1h0m0s" ||
			rows[3].Details["previous_token_valid_until"] != t1.Add(time.Hour).Format(time.RFC3339) ||
			rows[1].Details["earlier_previous_token_ended"] != "true" {
			t.Errorf("audit details: %+v", rows)
		}
		checkNoSecret(t, "the audit", rows, hasher, tok0, tok1, rot2.Token, rot3.Token)
	})
}

// registerPublic registers a dynamic client (RFC 7591) and returns its
// x/oauth2 configuration.
func (e *oauthEnv) registerPublic(name string) *oauth2.Config {
	e.t.Helper()
	status, body, _ := e.register("", `{"redirect_uris":["`+callbackURI+`"],"client_name":"`+name+`","scope":"service.bookings.read"}`)
	if status != http.StatusCreated {
		e.t.Fatalf("register %s: %d %v", name, status, body)
	}
	return &oauth2.Config{ClientID: body["client_id"].(string), RedirectURL: callbackURI, Scopes: []string{"service.bookings.read"},
		Endpoint: oauth2.Endpoint{AuthURL: e.http.URL + "/oauth/authorize", TokenURL: e.http.URL + "/oauth/token", AuthStyle: oauth2.AuthStyleInParams}}
}

func oauthClientByID(t *testing.T, svc *credentials.Service, id string) (credentials.OAuthClient, bool) {
	t.Helper()
	all, err := svc.OAuthClients(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range all {
		if c.ID == id {
			return c, true
		}
	}
	return credentials.OAuthClient{}, false
}

func TestOAuthClientRevocationAndPurgeAtTheHTTPEdge(t *testing.T) {
	forEachOAuthEngine(t, func(t *testing.T, e *oauthEnv) {
		ctx := context.Background()
		svc := credentials.New(sqlstore.Bind[credentials.Tx](e.db), e.hasher, e.clock.Now)
		const actor = "cli:ops"

		// A client with tokens; its use is recorded by the wiring's
		// recorder (the token endpoint, then the API).
		conf := e.newClient("Hemhjälpen AI", false, bokat.ScopeBookingsRead, bokat.ScopeWebhooksManage)
		verifier := oauth2.GenerateVerifier()
		tok, err := conf.Exchange(ctx, e.authorize(conf, verifier, "kund@example.se"), oauth2.VerifierOption(verifier))
		if err != nil {
			t.Fatal(err)
		}
		expectOK(t, e.callWith(tok.AccessToken), "the access token")
		c, _ := oauthClientByID(t, svc, conf.ClientID)
		if !c.LastUsedAt.Equal(e.clock.Now().Truncate(time.Millisecond)) || c.State() != credentials.StateActive || c.Registration != "operator" {
			t.Fatalf("the client after use: %+v (clock %v)", c, e.clock.Now())
		}
		all, err := svc.OAuthClients(ctx)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(all)
		for _, s := range []string{conf.ClientSecret, tok.AccessToken, tok.RefreshToken} {
			if strings.Contains(string(raw), s) {
				t.Errorf("the client list shows a secret or token: %s", raw)
			}
		}

		// Revoking the client revokes its tokens: the next call is 401,
		// the refresh token and the client's authentication are refused.
		if _, err := svc.RevokeOAuthClient(ctx, actor, conf.ClientID); err != nil {
			t.Fatal(err)
		}
		checkInvalidToken(t, e.callWith(tok.AccessToken), credentialsPath)
		if _, err := conf.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token(); err == nil {
			t.Error("the refresh token of a revoked client still works")
		}
		var live int
		if err := e.db.R().QueryRowContext(ctx, `SELECT COUNT(*) FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id
			WHERE g.client_id = $1 AND (t.revoked_at IS NULL OR g.revoked_at IS NULL)`, conf.ClientID).Scan(&live); err != nil || live != 0 {
			t.Errorf("%d tokens or grants of the revoked client left unrevoked (%v)", live, err)
		}
		if _, err := svc.RevokeOAuthClient(ctx, actor, conf.ClientID); err == nil {
			t.Error("a second revocation succeeded")
		}

		// Purge: dynamic clients unused for 90 days go; a dynamic client
		// used since, one holding a valid token, and the operator's stay.
		unused := e.registerPublic("Unused")
		usedLater := e.registerPublic("Used later")
		operatorsIdle := e.newClient("Operator idle", true, bokat.ScopeBookingsRead)
		e.clock.Advance(91 * 24 * time.Hour)
		verifier = oauth2.GenerateVerifier()
		if _, err := usedLater.Exchange(ctx, e.authorize(usedLater, verifier, "kund@example.se"), oauth2.VerifierOption(verifier)); err != nil {
			t.Fatal(err)
		}
		holding := e.registerPublic("Holding a token")
		verifier = oauth2.GenerateVerifier()
		if _, err := holding.Exchange(ctx, e.authorize(holding, verifier, "kund@example.se"), oauth2.VerifierOption(verifier)); err != nil {
			t.Fatal(err)
		}
		// As if its last use had been recorded long ago: its valid token
		// still keeps it.
		if err := e.db.InTx(ctx, func(tx *sqlstore.Tx) error {
			_, err := tx.Q().ExecContext(ctx, `UPDATE oauth_clients SET last_used_at = 1, created_at = 1 WHERE id = $1`, holding.ClientID)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.PurgeDynamicClients(ctx, actor, time.Hour); err == nil {
			t.Error("a purge of clients unused for an hour was accepted")
		}
		purged, err := svc.PurgeDynamicClients(ctx, actor, 90*24*time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if len(purged) != 1 || purged[0] != unused.ClientID {
			t.Fatalf("purged %v, want only %s", purged, unused.ClientID)
		}
		if _, ok := oauthClientByID(t, svc, unused.ClientID); ok {
			t.Error("the purged client is still listed")
		}
		for _, id := range []string{usedLater.ClientID, holding.ClientID, operatorsIdle.ClientID, conf.ClientID} {
			if _, ok := oauthClientByID(t, svc, id); !ok {
				t.Errorf("client %s was purged", id)
			}
		}
		// The purged client is unknown to the authorization server.
		status, body, _ := e.tokenRequest(map[string][]string{"grant_type": {"refresh_token"}, "refresh_token": {"bkf_x"},
			"client_id": {unused.ClientID}}, "", "")
		if status != http.StatusUnauthorized || body["error"] != "invalid_client" {
			t.Errorf("token request of the purged client: %d %v", status, body)
		}
		if again, err := svc.PurgeDynamicClients(ctx, actor, 90*24*time.Hour); err != nil || len(again) != 0 {
			t.Errorf("a second purge: %v, %v", again, err)
		}

		// Audit rows of the revocation and the purge.
		for id, action := range map[string]string{conf.ClientID: credentials.ActionOAuthClientRevoked, unused.ClientID: credentials.ActionOAuthClientPurged} {
			rows, err := svc.Audit(ctx, credentials.AuditQuery{ObjectKind: credentials.KindOAuthClient, ObjectID: id})
			if err != nil || len(rows) != 1 || rows[0].Action != action || rows[0].Actor != actor {
				t.Errorf("audit of %s: %+v, %v; want one %s by %s", id, rows, err, action, actor)
			}
		}
	})
}
