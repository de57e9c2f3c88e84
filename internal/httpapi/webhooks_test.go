package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"bokat"
	"bokat/internal/auth"
	"bokat/internal/followup"
	"bokat/internal/outbox"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/webhook"
	"bokat/internal/webhook/webhooktest"
	"bokat/webhookverify"
)

// webhookEnv is a server with the real webhook service, relay, dispatcher
// and sender on one store. Names resolve from a fixed table: DNS itself is
// never asked, and no delivery goes anywhere but 127.0.0.1.
type webhookEnv struct {
	*testEnv
	resolver *webhooktest.Resolver
	relay    *outbox.Relay
	disp     *outbox.Dispatcher
}

// newWebhookEnv starts a server; allowPrivate is the development mode that
// lets tests register http:// receivers on 127.0.0.1.
func newWebhookEnv(t *testing.T, db *sqlstore.DB, allowPrivate bool, opts ...envOption) *webhookEnv {
	t.Helper()
	key := make([]byte, webhook.KeySize)
	rand.Read(key)
	keys, err := webhook.NewKeyring(key)
	if err != nil {
		t.Fatal(err)
	}
	res := webhooktest.NewResolver("hooks.partner.se=93.184.216.34", "hooks6.partner.se=2a00:1450:4010:c0e::64",
		"rebind.partner.se=93.184.216.35", "loopback.partner.se=127.0.0.1", "private.partner.se=10.20.30.40",
		"metadata.partner.se=169.254.169.254", "mixed.partner.se=93.184.216.34,fd00::7")
	guard := webhook.NewGuard(res, allowPrivate)
	svc := webhook.NewService(webhook.ServiceConfig{Store: sqlstore.Bind[webhook.Tx](db), Guard: guard, Keys: keys})
	e := newTestEnv(t, db, append([]envOption{func(c *envConfig) {
		c.Webhooks = svc
		c.WebhookAllowPrivate = allowPrivate
	}}, opts...)...)
	// No test here times a delivery out: the minute only bounds a hang, and
	// a receiver slowed by a busy machine still answers within it.
	sender := webhook.NewSender(webhook.SenderConfig{Guard: guard, Keys: keys, Timeout: time.Minute})
	return &webhookEnv{
		testEnv:  e,
		resolver: res,
		relay:    outbox.NewRelay(sqlstore.Bind[outbox.Tx](db), outbox.RelayConfig{Now: e.now}),
		disp:     outbox.NewDispatcher(db, sender, outbox.DispatcherConfig{Now: e.now}),
	}
}

func forEachWebhookEngine(t *testing.T, allowPrivate bool, fn func(t *testing.T, e *webhookEnv), opts ...envOption) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		fn(t, newWebhookEnv(t, db, allowPrivate, opts...))
	})
}

// client creates a partner client with the scopes and returns its id and token.
func (e *webhookEnv) client(name string, scopes ...bokat.Scope) (bokat.Principal, string) {
	e.t.Helper()
	id, token, err := e.authn.CreatePartner(context.Background(), name, scopes, time.Now())
	if err != nil {
		e.t.Fatal(err)
	}
	return bokat.Principal{Kind: bokat.PrincipalPartner, ClientID: id}, token
}

func (e *webhookEnv) register(token, url string, types ...string) response {
	e.t.Helper()
	if len(types) == 0 {
		types = []string{"booking.confirmed"}
	}
	return e.do(request{Method: "POST", Path: "/v1/webhook-endpoints", Header: bearer(token),
		Body: map[string]any{"url": url, "event_types": types}})
}

// event writes an outbox event as the booking code does: in a transaction,
// through InsertOutboxEvent, with the redacted booking record.
func (e *webhookEnv) event(owner bokat.Principal, bookingID string, typ bokat.EventType) outbox.Event {
	e.t.Helper()
	data, _ := json.Marshal(map[string]any{
		"booking": map[string]any{
			"id": bookingID, "status": "confirmed", "provider_id": "prov_el_sthlm_2", "provider_name": "Elfirma Söder AB",
			"service_id": "electrician_install_dimmer_standard", "slot_start_at": "2026-05-06T07:00:00Z",
			"slot_end_at": "2026-05-06T09:00:00Z", "slot_label": "onsdag 6 maj 09:00–11:00", "price_sek": 1490,
			"currency": "SEK", "confirmed_at": "2026-05-04T10:15:02Z",
			"terms_version": "fixed_price_terms_v1:electrician_install_dimmer_standard",
		},
		"request_id": "rq_" + bookingID,
	})
	now := time.Now().UTC()
	ev := outbox.Event{ID: uuid.Must(uuid.NewV7()).String(), OwnerClientID: owner.ClientID, OwnerUserID: owner.UserID,
		BookingID: bookingID, EventType: string(typ), Payload: data, OccurredAt: now, CreatedAt: now}
	if err := e.db.InTx(context.Background(), func(tx *sqlstore.Tx) error { return tx.InsertOutboxEvent(context.Background(), ev) }); err != nil {
		e.t.Fatal(err)
	}
	return ev
}

// pump relays new events and makes one round of due attempts.
func (e *webhookEnv) pump() {
	e.t.Helper()
	if _, err := e.relay.RunOnce(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.disp.RunOnce(context.Background()); err != nil {
		e.t.Fatal(err)
	}
}

var secretRe = regexp.MustCompile(`^whsec_[A-Za-z0-9+/]{43}=$`)

func TestWebhookEndpointRegistrationDeliveryReplayAndDeletion(t *testing.T) {
	t.Parallel()
	forEachWebhookEngine(t, true, func(t *testing.T, e *webhookEnv) {
		owner, token := e.client("Acme", bokat.ScopeWebhooksManage)
		rc := webhooktest.NewReceiver(t, nil)

		r := e.register(token, rc.URL, "booking.confirmed", "booking.cancelled")
		if r.Status != http.StatusCreated {
			t.Fatalf("register: %d %s", r.Status, r.Body)
		}
		checkMetadata(t, r, bokat.BookingsContractVersion)
		secret, _ := r.JSON["signing_secret"].(string)
		ep := r.JSON["endpoint"].(map[string]any)
		if !secretRe.MatchString(secret) || r.JSON["signing_secret_shown_once"] != true || r.JSON["ok"] != true {
			t.Fatalf("registration body %s", r.Body)
		}
		endpointID, _ := ep["id"].(string)
		if !regexp.MustCompile(`^whe_[0-9a-f]{32}$`).MatchString(endpointID) || ep["url"] != rc.URL || ep["enabled"] != true || ep["signing_key_id"] == "" ||
			fmt.Sprint(ep["event_types"]) != "[booking.confirmed booking.cancelled]" {
			t.Fatalf("endpoint %v", ep)
		}

		// The list never shows the secret; the store keeps it only sealed.
		list := e.do(request{Method: "GET", Path: "/v1/webhook-endpoints", Header: bearer(token)})
		if list.Status != 200 || len(list.JSON["endpoints"].([]any)) != 1 || strings.Contains(string(list.Body), secret) ||
			strings.Contains(string(list.Body), "signing_secret") {
			t.Fatalf("list: %d %s", list.Status, list.Body)
		}
		if got := list.JSON["endpoints"].([]any)[0].(map[string]any); got["id"] != endpointID || got["signing_key_id"] != ep["signing_key_id"] {
			t.Fatalf("listed %v, want %v", got, ep)
		}
		var sealed string
		if err := e.db.R().QueryRowContext(context.Background(), `SELECT url || event_types || signing_key_id || secret_key_id || secret_ciphertext FROM webhook_endpoints WHERE id = $1`, endpointID).Scan(&sealed); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(sealed, secret) || strings.Contains(sealed, strings.TrimPrefix(secret, "whsec_")) {
			t.Fatal("the signing secret is stored in clear")
		}

		// A booking event reaches the receiver, signed with that secret.
		ev := e.event(owner, "bk_7", bokat.EventBookingConfirmed)
		e.pump()
		got := rc.Deliveries()
		if len(got) != 1 {
			t.Fatalf("receiver got %d deliveries, want 1", len(got))
		}
		v, err := webhookverify.New(secret)
		if err != nil {
			t.Fatal(err)
		}
		firstID, err := v.Verify(got[0].Header, got[0].Body)
		if err != nil {
			t.Fatalf("delivery does not verify: %v", err)
		}
		if err := e.contract.ValidateWebhookEvent(got[0].Body); err != nil {
			t.Fatal(err)
		}
		var body map[string]any
		json.Unmarshal(got[0].Body, &body)
		if body["id"] != firstID || body["outbox_id"] != ev.ID || body["type"] != "booking.confirmed" {
			t.Fatalf("delivery body %s", got[0].Body)
		}

		// Replay: a new delivery event with a new Webhook-Id for the same outbox event.
		rp := e.do(request{Method: "POST", Path: "/v1/webhook-events/" + ev.ID + "/replay", Header: bearer(token)})
		if rp.Status != http.StatusAccepted {
			t.Fatalf("replay: %d %s", rp.Status, rp.Body)
		}
		replay := rp.JSON["replay"].(map[string]any)
		replayID, _ := replay["id"].(string)
		if !uuidRe.MatchString(replayID) || replayID == firstID || replay["booking_id"] != "bk_7" ||
			replay["event_type"] != "booking.confirmed" || replay["status"] != "pending" {
			t.Fatalf("replay %v", replay)
		}
		e.pump()
		got = rc.Deliveries()
		if len(got) != 2 {
			t.Fatalf("after replay the receiver has %d deliveries, want 2", len(got))
		}
		secondID, err := v.Verify(got[1].Header, got[1].Body)
		if err != nil {
			t.Fatal(err)
		}
		json.Unmarshal(got[1].Body, &body)
		if secondID != replayID || body["id"] != replayID || body["outbox_id"] != ev.ID {
			t.Fatalf("replayed delivery id %s body %s, want id %s and outbox_id %s", secondID, got[1].Body, replayID, ev.ID)
		}

		// Deletion.
		del := e.do(request{Method: "DELETE", Path: "/v1/webhook-endpoints/" + endpointID, Header: bearer(token)})
		if del.Status != 200 || del.JSON["ok"] != true {
			t.Fatalf("delete: %d %s", del.Status, del.Body)
		}
		if list := e.do(request{Method: "GET", Path: "/v1/webhook-endpoints", Header: bearer(token)}); len(list.JSON["endpoints"].([]any)) != 0 {
			t.Fatalf("list after delete: %s", list.Body)
		}
		again := e.do(request{Method: "DELETE", Path: "/v1/webhook-endpoints/" + endpointID, Header: bearer(token)})
		checkProblem(t, again, 404, bokat.CodeWebhookEndpointNotFound, "/v1/webhook-endpoints/"+endpointID)
		noEndpoint := e.do(request{Method: "POST", Path: "/v1/webhook-events/" + ev.ID + "/replay", Header: bearer(token)})
		checkProblem(t, noEndpoint, 404, bokat.CodeWebhookEndpointNotFound, "/v1/webhook-events/"+ev.ID+"/replay")
	})
}

// fixedTokens is an OAuth access-token verifier for tests: each token maps
// to a delegated principal.
type fixedTokens map[string]bokat.Principal

func (f fixedTokens) VerifyAccessToken(_ context.Context, token string) (bokat.Principal, error) {
	if p, ok := f[token]; ok {
		return p, nil
	}
	return bokat.Principal{}, auth.ErrInvalidCredential
}

func TestWebhookOperationsSeeOnlyTheCallersOwn(t *testing.T) {
	t.Parallel()
	alice := bokat.Principal{Kind: bokat.PrincipalOAuth, ClientID: "oc_app", UserID: "u_alice", Scopes: []bokat.Scope{bokat.ScopeWebhooksManage}, Audience: bokat.AudienceAPI}
	bob := bokat.Principal{Kind: bokat.PrincipalOAuth, ClientID: "oc_app", UserID: "u_bob", Scopes: []bokat.Scope{bokat.ScopeWebhooksManage}, Audience: bokat.AudienceAPI}
	forEachWebhookEngine(t, true, func(t *testing.T, e *webhookEnv) {
		acme, acmeToken := e.client("Acme", bokat.ScopeWebhooksManage)
		_, globexToken := e.client("Globex", bokat.ScopeWebhooksManage)
		rc := webhooktest.NewReceiver(t, nil)

		acmeEP := e.register(acmeToken, rc.URL).JSON["endpoint"].(map[string]any)["id"].(string)
		aliceEP := e.register("bka_alice", rc.URL).JSON["endpoint"].(map[string]any)["id"].(string)
		acmeEv := e.event(acme, "bk_acme", bokat.EventBookingConfirmed)
		aliceEv := e.event(alice, "bk_alice", bokat.EventBookingConfirmed)

		for _, tc := range []struct {
			name, token string
			see         []string
		}{
			{"acme", acmeToken, []string{acmeEP}},
			{"globex", globexToken, nil},
			{"alice", "bka_alice", []string{aliceEP}},
			{"bob, same client as alice", "bka_bob", nil},
		} {
			list := e.do(request{Method: "GET", Path: "/v1/webhook-endpoints", Header: bearer(tc.token)})
			var ids []string
			for _, ep := range list.JSON["endpoints"].([]any) {
				ids = append(ids, ep.(map[string]any)["id"].(string))
			}
			if fmt.Sprint(ids) != fmt.Sprint(tc.see) {
				t.Errorf("%s lists %v, want %v", tc.name, ids, tc.see)
			}
		}

		notFound := []struct {
			name, token, method, path string
			code                      bokat.Code
		}{
			{"delete another client's endpoint", globexToken, "DELETE", "/v1/webhook-endpoints/" + acmeEP, bokat.CodeWebhookEndpointNotFound},
			{"delete another user's endpoint", "bka_bob", "DELETE", "/v1/webhook-endpoints/" + aliceEP, bokat.CodeWebhookEndpointNotFound},
			{"delete a user's endpoint as the client's partner", acmeToken, "DELETE", "/v1/webhook-endpoints/" + aliceEP, bokat.CodeWebhookEndpointNotFound},
			{"delete an unknown endpoint", acmeToken, "DELETE", "/v1/webhook-endpoints/" + uuid.NewString(), bokat.CodeWebhookEndpointNotFound},
			{"delete a malformed id", acmeToken, "DELETE", "/v1/webhook-endpoints/not-a-uuid", bokat.CodeWebhookEndpointNotFound},
			{"replay another client's event", globexToken, "POST", "/v1/webhook-events/" + acmeEv.ID + "/replay", bokat.CodeWebhookEventNotFound},
			{"replay another user's event", "bka_bob", "POST", "/v1/webhook-events/" + aliceEv.ID + "/replay", bokat.CodeWebhookEventNotFound},
			{"replay a user's event as another principal", acmeToken, "POST", "/v1/webhook-events/" + aliceEv.ID + "/replay", bokat.CodeWebhookEventNotFound},
			{"replay an unknown event", acmeToken, "POST", "/v1/webhook-events/" + uuid.NewString() + "/replay", bokat.CodeWebhookEventNotFound},
			{"replay a malformed id", acmeToken, "POST", "/v1/webhook-events/nope/replay", bokat.CodeWebhookEventNotFound},
		}
		for _, tc := range notFound {
			t.Run(tc.name, func(t *testing.T) {
				r := e.do(request{Method: tc.method, Path: tc.path, Header: bearer(tc.token)})
				checkProblem(t, r, 404, tc.code, tc.path)
			})
		}
		// Nothing of the owners changed; each can still act on its own.
		if r := e.do(request{Method: "POST", Path: "/v1/webhook-events/" + aliceEv.ID + "/replay", Header: bearer("bka_alice")}); r.Status != 202 {
			t.Fatalf("alice replays her own event: %d %s", r.Status, r.Body)
		}
		if r := e.do(request{Method: "DELETE", Path: "/v1/webhook-endpoints/" + acmeEP, Header: bearer(acmeToken)}); r.Status != 200 {
			t.Fatalf("acme deletes its own endpoint: %d %s", r.Status, r.Body)
		}
	}, withAccessTokens(fixedTokens{"bka_alice": alice, "bka_bob": bob}))
}

func TestWebhookOperationsRequireTheScope(t *testing.T) {
	t.Parallel()
	e := newWebhookEnv(t, sqlstoretest.Open(t, sqlstore.SQLite), false)
	_, token := e.client("Reader", bokat.ScopeBookingsRead)
	for _, rq := range []request{
		{Method: "GET", Path: "/v1/webhook-endpoints"},
		{Method: "POST", Path: "/v1/webhook-endpoints", Body: map[string]any{"url": "https://hooks.partner.se/x", "event_types": []string{"booking.confirmed"}}},
		{Method: "DELETE", Path: "/v1/webhook-endpoints/" + uuid.NewString()},
		{Method: "POST", Path: "/v1/webhook-events/" + uuid.NewString() + "/replay"},
	} {
		anonymous := e.do(rq)
		checkProblem(t, anonymous, 401, bokat.CodeUnauthorized, rq.Path)
		rq.Header = bearer(token)
		scoped := e.do(rq)
		checkProblem(t, scoped, 403, bokat.CodeInsufficientScope, rq.Path)
	}
}

func TestWebhookRegistrationRejectsNonPublicDestinations(t *testing.T) {
	t.Parallel()
	forEachWebhookEngine(t, false, func(t *testing.T, e *webhookEnv) {
		_, token := e.client("Acme", bokat.ScopeWebhooksManage)
		cases := []struct {
			name, url, reason string
		}{
			{"port other than 443", "https://hooks.partner.se:8443/bokat", "port 443"},
			{"user information", "https://bokat:pw@hooks.partner.se/bokat", "user information"},
			{"localhost", "https://localhost/bokat", "internal name"},
			{"*.localhost", "https://hooks.localhost/bokat", "internal name"},
			{"*.local", "https://hooks.local/bokat", "internal name"},
			{"*.internal", "https://hooks.corp.internal/bokat", "internal name"},
			{"loopback address", "https://127.0.0.1/bokat", "loopback"},
			{"IPv6 loopback", "https://[::1]/bokat", "loopback"},
			{"private address", "https://192.168.1.10/bokat", "private"},
			{"cloud metadata address", "https://169.254.169.254/latest/meta-data", "link-local"},
			{"CGNAT address", "https://100.64.1.1/bokat", "carrier-grade NAT"},
			{"documentation address", "https://203.0.113.5/bokat", "documentation"},
			{"IPv4-mapped loopback", "https://[::ffff:127.0.0.1]/bokat", "IPv4-mapped"},
			{"NAT64 of a private address", "https://[64:ff9b::a00:1]/bokat", "NAT64"},
			{"name resolving to loopback", "https://loopback.partner.se/bokat", "resolves to 127.0.0.1"},
			{"name resolving to a private address", "https://private.partner.se/bokat", "resolves to 10.20.30.40"},
			{"name resolving to metadata", "https://metadata.partner.se/bokat", "resolves to 169.254.169.254"},
			{"one unique local address among public", "https://mixed.partner.se/bokat", "resolves to fd00::7"},
			{"name that does not resolve", "https://nowhere.partner.se/bokat", "could not be resolved"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				r := e.register(token, tc.url)
				checkProblem(t, r, 422, bokat.CodeWebhookDestinationRejected, "/v1/webhook-endpoints")
				issues := fmt.Sprint(r.JSON["issues"])
				if !strings.Contains(r.JSON["detail"].(string), tc.reason) || !strings.Contains(issues, "url: ") || !strings.Contains(issues, tc.reason) {
					t.Fatalf("detail %q issues %s, want the reason %q", r.JSON["detail"], issues, tc.reason)
				}
			})
		}
		// The contract's schema refuses what is not https, and bad event types.
		for _, tc := range []struct {
			name  string
			body  map[string]any
			issue string
		}{
			{"plain http", map[string]any{"url": "http://hooks.partner.se/bokat", "event_types": []string{"booking.confirmed"}}, "url: must match"},
			{"no event types", map[string]any{"url": "https://hooks.partner.se/bokat", "event_types": []string{}}, "event_types: must have at least 1 item"},
			{"repeated event type", map[string]any{"url": "https://hooks.partner.se/bokat", "event_types": []string{"booking.confirmed", "booking.confirmed"}}, "event_types: must not repeat"},
			{"unknown event type", map[string]any{"url": "https://hooks.partner.se/bokat", "event_types": []string{"booking.created"}}, "event_types[0]"},
			{"unknown field", map[string]any{"url": "https://hooks.partner.se/bokat", "event_types": []string{"booking.confirmed"}, "secret": "x"}, "unknown field"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := e.do(request{Method: "POST", Path: "/v1/webhook-endpoints", Header: bearer(token), Body: tc.body})
				checkProblem(t, r, 400, bokat.CodeValidationFailed, "/v1/webhook-endpoints")
				if issues := fmt.Sprint(r.JSON["issues"]); !strings.Contains(issues, tc.issue) {
					t.Fatalf("issues %s, want %q", issues, tc.issue)
				}
			})
		}
		for _, u := range []string{"https://hooks.partner.se/bokat", "https://hooks.partner.se:443/bokat?tenant=7", "https://hooks6.partner.se/b"} {
			if r := e.register(token, u); r.Status != 201 {
				t.Errorf("register %s: %d %s", u, r.Status, r.Body)
			}
		}
		if list := e.do(request{Method: "GET", Path: "/v1/webhook-endpoints", Header: bearer(token)}); len(list.JSON["endpoints"].([]any)) != 3 {
			t.Fatalf("only the public destinations are stored; list: %s", list.Body)
		}
	})
}

func TestWebhookEndpointLimitPerClient(t *testing.T) {
	t.Parallel()
	e := newWebhookEnv(t, sqlstoretest.Open(t, sqlstore.SQLite), false)
	_, token := e.client("Acme", bokat.ScopeWebhooksManage)
	var first string
	for i := range webhook.MaxEndpointsPerOwner {
		r := e.register(token, fmt.Sprintf("https://hooks.partner.se/bokat/%d", i))
		if r.Status != 201 {
			t.Fatalf("endpoint %d: %d %s", i+1, r.Status, r.Body)
		}
		if i == 0 {
			first = r.JSON["endpoint"].(map[string]any)["id"].(string)
		}
	}
	over := e.register(token, "https://hooks.partner.se/bokat/one-too-many")
	checkProblem(t, over, 422, bokat.CodeWebhookEndpointLimitReached, "/v1/webhook-endpoints")
	_, otherToken := e.client("Globex", bokat.ScopeWebhooksManage)
	if r := e.register(otherToken, "https://hooks.partner.se/globex"); r.Status != 201 {
		t.Fatalf("another client is not limited by Acme's endpoints: %d", r.Status)
	}
	e.do(request{Method: "DELETE", Path: "/v1/webhook-endpoints/" + first, Header: bearer(token)})
	if r := e.register(token, "https://hooks.partner.se/bokat/after-delete"); r.Status != 201 {
		t.Fatalf("after a deletion: %d %s", r.Status, r.Body)
	}
}

// TestDNSRebindingIsRefusedAtDialTime registers a name that resolves to a
// public address, then makes it resolve to loopback: the delivery is refused
// on the address dialled and the attempt says so.
func TestDNSRebindingIsRefusedAtDialTime(t *testing.T) {
	t.Parallel()
	forEachWebhookEngine(t, false, func(t *testing.T, e *webhookEnv) {
		owner, token := e.client("Acme", bokat.ScopeWebhooksManage)
		if r := e.register(token, "https://rebind.partner.se/bokat"); r.Status != 201 {
			t.Fatalf("register: %d %s", r.Status, r.Body)
		}
		e.resolver.Set("rebind.partner.se", "127.0.0.1")
		ev := e.event(owner, "bk_1", bokat.EventBookingConfirmed)
		e.pump()
		ds, err := e.db.WebhookDeliveriesOfOutboxEvent(context.Background(), ev.ID)
		if err != nil || len(ds) != 1 {
			t.Fatalf("deliveries %v %v", ds, err)
		}
		attempts, err := e.db.WebhookDeliveryAttempts(context.Background(), ds[0].ID)
		if err != nil || len(attempts) != 1 {
			t.Fatalf("attempts %v %v", attempts, err)
		}
		a := attempts[0]
		if a.StatusCode != 0 || !strings.Contains(a.Error, "destination refused at connect: 127.0.0.1:443 is a loopback address") {
			t.Fatalf("attempt %+v, want refused at connect", a)
		}
		if ds[0].Status != outbox.DeliveryPending {
			t.Fatalf("delivery %+v, want pending for a retry", ds[0])
		}
	})
}

func TestRedirectingReceiverIsNotFollowed(t *testing.T) {
	t.Parallel()
	forEachWebhookEngine(t, true, func(t *testing.T, e *webhookEnv) {
		owner, token := e.client("Acme", bokat.ScopeWebhooksManage)
		landing := webhooktest.NewReceiver(t, nil)
		var redirected atomic.Int32
		redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			redirected.Add(1)
			http.Redirect(w, r, landing.URL, http.StatusFound)
		}))
		t.Cleanup(redirector.Close)
		if r := e.register(token, redirector.URL+"/hook"); r.Status != 201 {
			t.Fatalf("register: %d %s", r.Status, r.Body)
		}
		ev := e.event(owner, "bk_1", bokat.EventBookingConfirmed)
		e.pump()
		ds, _ := e.db.WebhookDeliveriesOfOutboxEvent(context.Background(), ev.ID)
		attempts, _ := e.db.WebhookDeliveryAttempts(context.Background(), ds[0].ID)
		if len(attempts) != 1 || attempts[0].StatusCode != 302 || !strings.Contains(attempts[0].Error, "never followed") {
			t.Fatalf("attempts %+v, want one 302 recorded as a failure", attempts)
		}
		if ds[0].Status != outbox.DeliveryPending || redirected.Load() != 1 || landing.Count() != 0 {
			t.Fatalf("delivery %+v, redirect target hit %d times; want a pending retry and no request to the target", ds[0], landing.Count())
		}
	})
}

// TestNoServerWithoutAWebhooksService: the webhook operations have no
// answer for a server without the service, so no such server is built; New
// names each dependency a Config lacks.
func TestNoServerWithoutAWebhooksService(t *testing.T) {
	t.Parallel()
	db := sqlstoretest.Open(t, sqlstore.SQLite)
	contract, err := loadContract()
	if err != nil {
		t.Fatal(err)
	}
	cat, err := loadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	hasher, err := auth.NewHasher([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	full := envConfig{Config: Config{BaseURL: "http://bokat.test", Logger: slog.New(slog.DiscardHandler), Now: time.Now,
		Contract: contract, Catalog: cat, Store: db, Followups: followup.New(sqlstore.Bind[followup.Tx](db), cat, nil, nil)}}
	completeConfig(t, db, hasher, &full)
	if _, err := New(full.Config); err != nil {
		t.Fatalf("a complete Config: %v", err)
	}
	for name, drop := range map[string]func(*Config){
		"Webhooks":     func(c *Config) { c.Webhooks = nil },
		"Search":       func(c *Config) { c.Search = nil },
		"Bookings":     func(c *Config) { c.Bookings = nil },
		"CalendarFeed": func(c *Config) { c.CalendarFeed = nil },
		"OAuth":        func(c *Config) { c.OAuth = nil },
		"Metrics":      func(c *Config) { c.Metrics = nil },
		"Health":       func(c *Config) { c.Health = nil },
		"RateLimiter":  func(c *Config) { c.RateLimiter = nil },
		"Now":          func(c *Config) { c.Now = nil },
	} {
		c := full.Config
		drop(&c)
		if _, err := New(c); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("New without %s: %v, want an error naming it", name, err)
		}
	}
}

// TestWebhookEndpointDisableAndEnable: an owner disables an endpoint by hand
// (its pending deliveries are cancelled, new events are not delivered) and
// enables it again, also after the endpoint answered 410; another owner sees
// no such endpoint.
func TestWebhookEndpointDisableAndEnable(t *testing.T) {
	t.Parallel()
	forEachWebhookEngine(t, true, func(t *testing.T, e *webhookEnv) {
		owner, token := e.client("Acme", bokat.ScopeWebhooksManage)
		_, otherToken := e.client("Other", bokat.ScopeWebhooksManage)
		rc := webhooktest.NewReceiver(t, func(n int, r *http.Request) int {
			if n == 0 {
				return http.StatusGone
			}
			return http.StatusNoContent
		})
		reg := e.register(token, rc.URL)
		if reg.Status != http.StatusCreated {
			t.Fatalf("register: %d %s", reg.Status, reg.Body)
		}
		id := reg.JSON["endpoint"].(map[string]any)["id"].(string)
		set := func(tok, verb string) response {
			t.Helper()
			return e.do(request{Method: "POST", Path: "/v1/webhook-endpoints/" + id + "/" + verb, Header: bearer(tok)})
		}
		enabled := func(r response) any {
			t.Helper()
			if r.Status != 200 || r.JSON["ok"] != true {
				t.Fatalf("%d %s", r.Status, r.Body)
			}
			checkMetadata(t, r, bokat.BookingsContractVersion)
			return r.JSON["endpoint"].(map[string]any)["enabled"]
		}

		// The first delivery is answered 410: the endpoint is disabled.
		e.event(owner, "bk_1", bokat.EventBookingConfirmed)
		e.pump()
		if list := e.do(request{Method: "GET", Path: "/v1/webhook-endpoints", Header: bearer(token)}); list.JSON["endpoints"].([]any)[0].(map[string]any)["enabled"] != false {
			t.Fatalf("after 410 the endpoint is listed %s", list.Body)
		}
		if got := enabled(set(token, "enable")); got != true {
			t.Fatalf("enable answered enabled %v", got)
		}
		e.event(owner, "bk_2", bokat.EventBookingConfirmed)
		e.pump()
		if n := rc.Count(); n != 2 {
			t.Fatalf("after re-enabling, the receiver has %d deliveries, want 2", n)
		}

		// Disabled by hand: a delivery already queued is cancelled, and
		// later events are not delivered.
		e.event(owner, "bk_3", bokat.EventBookingConfirmed)
		if _, err := e.relay.RunOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := enabled(set(token, "disable")); got != false {
			t.Fatalf("disable answered enabled %v", got)
		}
		if got := enabled(set(token, "disable")); got != false {
			t.Fatalf("a second disable answered enabled %v", got)
		}
		e.event(owner, "bk_4", bokat.EventBookingConfirmed)
		e.pump()
		if n := rc.Count(); n != 2 {
			t.Fatalf("while disabled, the receiver got %d deliveries, want still 2", n)
		}
		if got := enabled(set(token, "enable")); got != true {
			t.Fatalf("enable answered enabled %v", got)
		}
		e.event(owner, "bk_5", bokat.EventBookingConfirmed)
		e.pump()
		got := rc.Deliveries()
		if len(got) != 3 || !strings.Contains(string(got[2].Body), `"id":"bk_5"`) {
			t.Fatalf("after enabling again the receiver has %d deliveries, want the third of bk_5", len(got))
		}

		// Not the caller's, or no such endpoint.
		for _, verb := range []string{"enable", "disable"} {
			checkProblem(t, set(otherToken, verb), 404, bokat.CodeWebhookEndpointNotFound, "/v1/webhook-endpoints/"+id+"/"+verb)
			bad := e.do(request{Method: "POST", Path: "/v1/webhook-endpoints/not-a-uuid/" + verb, Header: bearer(token)})
			checkProblem(t, bad, 404, bokat.CodeWebhookEndpointNotFound, "/v1/webhook-endpoints/not-a-uuid/"+verb)
		}
	})
}

// TestWebhookEndpointRotateSecret: the owner gets a new secret once, in the
// registration's form, and deliveries then verify with the new secret and
// the old one; another owner, an unknown id and a token without the scope
// are refused.
func TestWebhookEndpointRotateSecret(t *testing.T) {
	t.Parallel()
	forEachWebhookEngine(t, true, func(t *testing.T, e *webhookEnv) {
		owner, token := e.client("Acme", bokat.ScopeWebhooksManage)
		_, otherToken := e.client("Other", bokat.ScopeWebhooksManage)
		_, readToken := e.client("Reader", bokat.ScopeBookingsRead)
		rc := webhooktest.NewReceiver(t, nil)
		reg := e.register(token, rc.URL)
		if reg.Status != http.StatusCreated {
			t.Fatalf("register: %d %s", reg.Status, reg.Body)
		}
		old := reg.JSON["signing_secret"].(string)
		ep := reg.JSON["endpoint"].(map[string]any)
		id := ep["id"].(string)
		path := "/v1/webhook-endpoints/" + id + "/rotate-secret"

		before := time.Now()
		r := e.do(request{Method: "POST", Path: path, Header: bearer(token)})
		if r.Status != 200 || r.JSON["ok"] != true || r.JSON["signing_secret_shown_once"] != true {
			t.Fatalf("rotate: %d %s", r.Status, r.Body)
		}
		checkMetadata(t, r, bokat.BookingsContractVersion)
		secret := r.JSON["signing_secret"].(string)
		if !secretRe.MatchString(secret) || secret == old {
			t.Fatalf("rotated secret %q: want a new whsec_ secret", secret)
		}
		if got := r.JSON["endpoint"].(map[string]any)["signing_key_id"]; got == ep["signing_key_id"] {
			t.Errorf("signing_key_id %v unchanged", got)
		}
		expires, err := time.Parse(time.RFC3339Nano, r.JSON["previous_secret_expires_at"].(string))
		if err != nil || expires.Before(before.Add(24*time.Hour).Truncate(time.Millisecond)) || expires.After(time.Now().Add(24*time.Hour)) {
			t.Errorf("previous_secret_expires_at %v (%v), want 24 h from now", r.JSON["previous_secret_expires_at"], err)
		}
		if strings.Contains(e.logs.String(), secret) {
			t.Error("the new secret appears in the logs")
		}

		e.event(owner, "bk_1", bokat.EventBookingConfirmed)
		e.pump()
		got := rc.Deliveries()
		if len(got) != 1 {
			t.Fatalf("receiver got %d deliveries, want 1", len(got))
		}
		for _, s := range []string{secret, old} {
			v, err := webhookverify.New(s)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := v.Verify(got[0].Header, got[0].Body); err != nil {
				t.Errorf("a delivery after rotating does not verify with the %s secret: %v", map[bool]string{true: "new", false: "old"}[s == secret], err)
			}
		}

		checkProblem(t, e.do(request{Method: "POST", Path: path, Header: bearer(otherToken)}), 404, bokat.CodeWebhookEndpointNotFound, path)
		checkProblem(t, e.do(request{Method: "POST", Path: "/v1/webhook-endpoints/not-a-uuid/rotate-secret", Header: bearer(token)}),
			404, bokat.CodeWebhookEndpointNotFound, "/v1/webhook-endpoints/not-a-uuid/rotate-secret")
		if r := e.do(request{Method: "POST", Path: path, Header: bearer(readToken)}); r.Status != 403 {
			t.Errorf("without service.webhooks.manage: %d, want 403", r.Status)
		}
		if r := e.do(request{Method: "POST", Path: path}); r.Status != 401 {
			t.Errorf("without a token: %d, want 401", r.Status)
		}
	})
}

// TestWebhookEndpointDeliveryAttempts: the owner pages through every
// attempt to an endpoint, newest first, with status or error class; pages
// stay stable while attempts are added; bad limits and cursors are 400,
// other owners get 404.
func TestWebhookEndpointDeliveryAttempts(t *testing.T) {
	t.Parallel()
	forEachWebhookEngine(t, true, func(t *testing.T, e *webhookEnv) {
		owner, token := e.client("Acme", bokat.ScopeWebhooksManage)
		_, otherToken := e.client("Other", bokat.ScopeWebhooksManage)
		rc := webhooktest.NewReceiver(t, func(n int, r *http.Request) int {
			if n%2 == 0 {
				return http.StatusInternalServerError
			}
			return http.StatusNoContent
		})
		reg := e.register(token, rc.URL)
		if reg.Status != http.StatusCreated {
			t.Fatalf("register: %d %s", reg.Status, reg.Body)
		}
		id := reg.JSON["endpoint"].(map[string]any)["id"].(string)
		path := "/v1/webhook-endpoints/" + id + "/deliveries"
		list := func(query string) response {
			t.Helper()
			return e.do(request{Method: "GET", Path: path + query, Header: bearer(token)})
		}
		if r := list(""); r.Status != 200 || len(r.JSON["attempts"].([]any)) != 0 || r.JSON["next_cursor"] != nil {
			t.Fatalf("empty list: %d %s", r.Status, r.Body)
		}
		// Three events, one attempt each: 500, 204, 500.
		for _, b := range []string{"bk_1", "bk_2", "bk_3"} {
			e.event(owner, b, bokat.EventBookingConfirmed)
			e.pump()
			time.Sleep(2 * time.Millisecond) // distinct attempted_at, so newest first is checkable
		}
		first := list("?limit=2")
		if first.Status != 200 {
			t.Fatalf("first page: %d %s", first.Status, first.Body)
		}
		checkMetadata(t, first, bokat.BookingsContractVersion)
		page := first.JSON["attempts"].([]any)
		if len(page) != 2 {
			t.Fatalf("first page has %d attempts, want 2: %s", len(page), first.Body)
		}
		a0, a1 := page[0].(map[string]any), page[1].(map[string]any)
		if a0["status_code"] != float64(500) || a0["error_class"] != "http_status" || a0["attempt"] != float64(1) ||
			a0["event_type"] != "booking.confirmed" || a0["latency_ms"] == nil {
			t.Errorf("newest attempt = %v, want bk_3's 500", a0)
		}
		if a1["status_code"] != float64(204) || a1["error_class"] != nil {
			t.Errorf("second attempt = %v, want bk_2's 204 without error class", a1)
		}
		if got := rc.Deliveries(); a0["webhook_id"] != got[2].Header.Get("Webhook-Id") || a1["webhook_id"] != got[1].Header.Get("Webhook-Id") {
			t.Errorf("webhook ids %v %v do not match the deliveries", a0["webhook_id"], a1["webhook_id"])
		}
		cursor, _ := first.JSON["next_cursor"].(string)
		if cursor == "" {
			t.Fatalf("first page has no next_cursor: %s", first.Body)
		}

		// A new event attempted meanwhile does not shift the next page.
		e.event(owner, "bk_4", bokat.EventBookingConfirmed)
		e.pump()
		second := list("?limit=2&cursor=" + cursor)
		page2 := second.JSON["attempts"].([]any)
		if second.Status != 200 || len(page2) != 1 || second.JSON["next_cursor"] != nil {
			t.Fatalf("second page: %d %s, want bk_1's attempt alone and no cursor", second.Status, second.Body)
		}
		if got := page2[0].(map[string]any)["webhook_id"]; got != rc.Deliveries()[0].Header.Get("Webhook-Id") {
			t.Errorf("second page holds %v, want the oldest attempt", got)
		}
		if all := list(""); len(all.JSON["attempts"].([]any)) != 4 {
			t.Errorf("default page has %d attempts, want 4", len(all.JSON["attempts"].([]any)))
		}

		for _, q := range []string{"?limit=0", "?limit=101", "?limit=x", "?cursor=bm90LWEtY3Vyc29y", "?cursor=%25", "?limit=1&limit=2", "?page=2"} {
			checkProblem(t, list(q), 400, bokat.CodeValidationFailed, path)
		}
		if r := list("?limit=100"); r.Status != 200 {
			t.Errorf("limit=100: %d", r.Status)
		}
		checkProblem(t, e.do(request{Method: "GET", Path: path, Header: bearer(otherToken)}), 404, bokat.CodeWebhookEndpointNotFound, path)
		checkProblem(t, e.do(request{Method: "GET", Path: "/v1/webhook-endpoints/not-a-uuid/deliveries", Header: bearer(token)}),
			404, bokat.CodeWebhookEndpointNotFound, "/v1/webhook-endpoints/not-a-uuid/deliveries")
	})
}

// failPending ends every pending delivery as failed, as a delivery whose
// last attempt failed does.
func (e *webhookEnv) failPending() {
	e.t.Helper()
	ctx := context.Background()
	later := time.Now().Add(48 * time.Hour)
	claimed, err := e.db.ClaimWebhookDeliveries(ctx, later, time.Minute, 100, uuid.NewString())
	if err != nil {
		e.t.Fatal(err)
	}
	for _, c := range claimed {
		if _, err := e.db.RecordWebhookAttempt(ctx, outbox.Attempt{DeliveryID: c.ID, LeaseToken: c.LeaseToken,
			AttemptedAt: later, StatusCode: 500, Error: "the endpoint answered HTTP 500", Status: outbox.DeliveryFailed,
			Now: later}); err != nil {
			e.t.Fatal(err)
		}
	}
}

// TestWebhookEndpointRecover: recovery queues again, with new Webhook-Ids,
// each event whose delivery failed since the given time, once; a disabled
// endpoint is refused with 409.
func TestWebhookEndpointRecover(t *testing.T) {
	t.Parallel()
	forEachWebhookEngine(t, true, func(t *testing.T, e *webhookEnv) {
		owner, token := e.client("Acme", bokat.ScopeWebhooksManage)
		_, otherToken := e.client("Other", bokat.ScopeWebhooksManage)
		rc := webhooktest.NewReceiver(t, func(n int, r *http.Request) int {
			if n < 3 {
				return http.StatusInternalServerError
			}
			return http.StatusNoContent
		})
		reg := e.register(token, rc.URL)
		if reg.Status != http.StatusCreated {
			t.Fatalf("register: %d %s", reg.Status, reg.Body)
		}
		id := reg.JSON["endpoint"].(map[string]any)["id"].(string)
		path := "/v1/webhook-endpoints/" + id + "/recover"
		recoverSince := func(tok string, body string) response {
			t.Helper()
			return e.do(request{Method: "POST", Path: path, Header: bearer(tok), Body: body})
		}

		e.event(owner, "bk_0", bokat.EventBookingConfirmed)
		e.pump()
		e.failPending()
		time.Sleep(5 * time.Millisecond)
		since := time.Now().UTC().Format(time.RFC3339Nano)
		time.Sleep(5 * time.Millisecond)
		e.event(owner, "bk_1", bokat.EventBookingConfirmed)
		e.event(owner, "bk_2", bokat.EventBookingConfirmed)
		e.pump()
		e.failPending()
		failedIDs := map[string]bool{}
		for _, d := range rc.Deliveries() {
			failedIDs[d.Header.Get("Webhook-Id")] = true
		}
		if len(failedIDs) != 3 {
			t.Fatalf("receiver saw %d deliveries, want 3 failed ones", len(failedIDs))
		}

		body := `{"since":"` + since + `"}`
		set := func(verb string) {
			t.Helper()
			if r := e.do(request{Method: "POST", Path: "/v1/webhook-endpoints/" + id + "/" + verb, Header: bearer(token)}); r.Status != 200 {
				t.Fatalf("%s: %d %s", verb, r.Status, r.Body)
			}
		}
		set("disable")
		checkProblem(t, recoverSince(token, body), 409, bokat.CodeWebhookEndpointDisabled, path)
		set("enable")

		r := recoverSince(token, body)
		if r.Status != 202 || r.JSON["queued"] != float64(2) {
			t.Fatalf("recover: %d %s, want 202 with 2 queued", r.Status, r.Body)
		}
		checkMetadata(t, r, bokat.BookingsContractVersion)
		e.pump()
		got := rc.Deliveries()
		if len(got) != 5 {
			t.Fatalf("after recovering the receiver has %d deliveries, want 5", len(got))
		}
		var bookings []string
		for _, d := range got[3:] {
			if failedIDs[d.Header.Get("Webhook-Id")] {
				t.Errorf("a recovered delivery reuses Webhook-Id %s", d.Header.Get("Webhook-Id"))
			}
			var ev struct {
				Data struct {
					Booking struct {
						ID string `json:"id"`
					} `json:"booking"`
				} `json:"data"`
			}
			if err := json.Unmarshal(d.Body, &ev); err != nil {
				t.Fatal(err)
			}
			bookings = append(bookings, ev.Data.Booking.ID)
		}
		slices.Sort(bookings) // sent concurrently, received in any order
		if strings.Join(bookings, ",") != "bk_1,bk_2" {
			t.Errorf("recovered events %v, want bk_1,bk_2 (bk_0 failed before since)", bookings)
		}
		if r := recoverSince(token, body); r.Status != 202 || r.JSON["queued"] != float64(0) {
			t.Errorf("a second recovery: %d %s, want 202 with 0 queued", r.Status, r.Body)
		}

		future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
		for _, bad := range []string{`{}`, `{"since":"yesterday"}`, `{"since":"` + future + `"}`, `{"since":"` + since + `","x":1}`} {
			checkProblem(t, recoverSince(token, bad), 400, bokat.CodeValidationFailed, path)
		}
		checkProblem(t, recoverSince(otherToken, body), 404, bokat.CodeWebhookEndpointNotFound, path)
	})
}
