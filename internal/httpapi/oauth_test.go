package httpapi

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"golang.org/x/oauth2"

	"bokat"
	"bokat/internal/outbox"
	"bokat/internal/sqlstore"
)

const wantResourceMetadata = `resource_metadata="http://bokat.test/.well-known/oauth-protected-resource"`

// checkInvalidToken asserts the 401 of a refused access token.
func checkInvalidToken(t *testing.T, r response, path string) {
	t.Helper()
	checkProblem(t, r, http.StatusUnauthorized, bokat.CodeUnauthorized, path)
	h := r.Header.Get("WWW-Authenticate")
	if !strings.HasPrefix(h, "Bearer ") || !strings.Contains(h, `error="invalid_token"`) || !strings.Contains(h, wantResourceMetadata) {
		t.Errorf("WWW-Authenticate = %q, want Bearer with error=\"invalid_token\" and %s", h, wantResourceMetadata)
	}
}

// TestOAuthFlowWithAStandardClient runs the whole delegated flow with
// golang.org/x/oauth2 as the client: sign-in, consent, code exchange with
// PKCE S256, API calls, refresh with rotation, and the family revocation a
// replayed refresh token causes.
func TestOAuthFlowWithAStandardClient(t *testing.T) {
	forEachOAuthEngine(t, func(t *testing.T, e *oauthEnv) {
		ctx := context.Background()
		conf := e.newClient("Hemhjälpen AI", false, bokat.ScopeCapabilitiesRead, bokat.ScopeBookingsRead, bokat.ScopeBookingsConfirm)
		verifier := oauth2.GenerateVerifier()
		code := e.authorize(conf, verifier, "Kund@Example.se")

		tok, err := conf.Exchange(ctx, code, oauth2.VerifierOption(verifier))
		if err != nil {
			t.Fatalf("exchange: %v", err)
		}
		if !strings.HasPrefix(tok.AccessToken, "bka_") || !strings.HasPrefix(tok.RefreshToken, "bkf_") || tok.TokenType != "Bearer" {
			t.Fatalf("token = %+v, want bka_ access and bkf_ refresh tokens of type Bearer", tok)
		}
		// expires_in as the server sent it: the client's Expiry adds it to
		// the time the answer arrived, which a slow machine delays.
		if got := tok.Extra("expires_in"); got != float64(15*60) {
			t.Errorf("expires_in = %v, want 900 (15 minutes)", got)
		}
		if got := tok.Extra("scope"); got != "service.capabilities.read service.bookings.read service.bookings.confirm" {
			t.Errorf("scope = %v", got)
		}

		// The access token works on an open route and on a scoped one.
		r := e.do(request{Method: "GET", Path: "/v1/capabilities", Header: bearer(tok.AccessToken)})
		if r.Status != http.StatusOK {
			t.Fatalf("capabilities with the access token: %d %s", r.Status, r.Body)
		}
		p, err := e.as.VerifyAccessToken(ctx, tok.AccessToken)
		if err != nil || p.Kind != bokat.PrincipalOAuth || !strings.HasPrefix(p.ClientID, "oc_") || !strings.HasPrefix(p.UserID, "usr_") ||
			p.OwnerKey() != p.ClientID+"/"+p.UserID {
			t.Fatalf("principal = %+v, %v; want the OAuth client together with the user", p, err)
		}
		// A real booking made and read with the delegated token.
		e.withDemoSupply()
		r = e.do(request{Method: "POST", Path: "/v1/bookings", Body: confirmBody(e.options(t, faucetSearch())[0], "flow-1"), Header: bearer(tok.AccessToken)})
		if r.Status != http.StatusCreated {
			t.Fatalf("confirm with the access token: %d %s", r.Status, r.Body)
		}
		bookingPath := "/v1/bookings/" + r.JSON["booking"].(map[string]any)["id"].(string)
		r = e.do(request{Method: "GET", Path: bookingPath, Header: bearer(tok.AccessToken)})
		if r.Status != http.StatusOK || r.JSON["found"] != true {
			t.Fatalf("status with the access token: %d %s", r.Status, r.Body)
		}

		// Refresh rotates: a new refresh token and a new access token.
		fresh, err := conf.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
		if err != nil {
			t.Fatalf("refresh: %v", err)
		}
		if fresh.RefreshToken == tok.RefreshToken || fresh.AccessToken == tok.AccessToken || fresh.RefreshToken == "" {
			t.Fatal("refresh did not rotate both tokens")
		}
		newest, err := conf.TokenSource(ctx, &oauth2.Token{RefreshToken: fresh.RefreshToken}).Token()
		if err != nil {
			t.Fatalf("second refresh: %v", err)
		}
		if r := e.do(request{Method: "GET", Path: bookingPath, Header: bearer(newest.AccessToken)}); r.Status != http.StatusOK || r.JSON["found"] != true {
			t.Fatalf("newest access token: %d %s", r.Status, r.Body)
		}

		// Replaying an old refresh token fails and revokes the whole family.
		_, err = conf.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
		if code := retrieveErrorCode(err); code != "invalid_grant" {
			t.Fatalf("replayed refresh token: err %v, want invalid_grant", err)
		}
		_, err = conf.TokenSource(ctx, &oauth2.Token{RefreshToken: newest.RefreshToken}).Token()
		if code := retrieveErrorCode(err); code != "invalid_grant" {
			t.Fatalf("newest refresh token after the replay: err %v, want invalid_grant", err)
		}
		for name, access := range map[string]string{"first": tok.AccessToken, "rotated": fresh.AccessToken, "newest": newest.AccessToken} {
			r := e.do(request{Method: "GET", Path: bookingPath, Header: bearer(access)})
			checkInvalidToken(t, r, bookingPath)
			if t.Failed() {
				t.Fatalf("%s access token still works after the family was revoked", name)
			}
		}
	})
}

func insertOwnedEvent(t *testing.T, db *sqlstore.DB, clientID, userID, bookingID string) {
	t.Helper()
	now := time.Now()
	err := db.InTx(context.Background(), func(tx *sqlstore.Tx) error {
		return tx.InsertOutboxEvent(context.Background(), outbox.Event{
			ID: uuid.NewString(), OwnerClientID: clientID, OwnerUserID: userID, BookingID: bookingID,
			EventType: string(bokat.EventBookingConfirmed), Payload: []byte(`{}`), OccurredAt: now, CreatedAt: now,
		})
	})
	if err != nil {
		t.Fatal(err)
	}
}

// exchange authorizes conf for the address and exchanges the code.
func (e *oauthEnv) exchange(conf *oauth2.Config, email string) *oauth2.Token {
	e.t.Helper()
	verifier := oauth2.GenerateVerifier()
	code := e.authorize(conf, verifier, email)
	tok, err := conf.Exchange(context.Background(), code, oauth2.VerifierOption(verifier))
	if err != nil {
		e.t.Fatalf("exchange: %v", err)
	}
	return tok
}

func TestPublicClientUsesPKCEWithoutASecret(t *testing.T) {
	t.Parallel()
	e := newOAuthEnv(t, sqliteDB(t), oauthSetup{})
	conf := e.newClient("Mobilappen", true, bokat.ScopeBookingsRead)
	tok := e.exchange(conf, "app@example.se")
	if _, err := e.as.VerifyAccessToken(context.Background(), tok.AccessToken); err != nil {
		t.Fatalf("public client's access token: %v", err)
	}
	if _, err := conf.TokenSource(context.Background(), &oauth2.Token{RefreshToken: tok.RefreshToken}).Token(); err != nil {
		t.Fatalf("public client's refresh: %v", err)
	}
	// A public client that presents a secret is refused.
	status, body, _ := e.tokenRequest(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken},
		"client_id": {conf.ClientID}, "client_secret": {"bks_guess"}}, "", "")
	if status != http.StatusUnauthorized || body["error"] != "invalid_client" {
		t.Fatalf("public client with a secret: %d %v", status, body)
	}
}
