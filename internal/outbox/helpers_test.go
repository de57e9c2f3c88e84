package outbox_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"bokat"
	"bokat/internal/clocktest"
	"bokat/internal/outbox"
	"bokat/internal/sqlstore"
	"bokat/internal/webhook"
	"bokat/internal/webhook/webhooktest"
	"bokat/webhookverify"
)

// newClock returns a fake clock tests advance by hand.
func newClock() *clocktest.Clock { return clocktest.New(time.Date(2026, 5, 4, 8, 0, 0, 0, time.UTC)) }

// fixture wires the real relay, dispatcher, sender and service on a store,
// in development mode (receivers are httptest servers on 127.0.0.1), on a
// fake clock without jitter.
type fixture struct {
	t     *testing.T
	db    *sqlstore.DB
	clock *clocktest.Clock
	keys  *webhook.Keyring
	svc   *webhook.Service
	relay *outbox.Relay
	disp  *outbox.Dispatcher
	// sc and dc configured disp.
	sc webhook.SenderConfig
	dc outbox.DispatcherConfig
}

type fixtureOption func(*outbox.DispatcherConfig, *webhook.SenderConfig)

func newFixture(t *testing.T, db *sqlstore.DB, opts ...fixtureOption) *fixture {
	t.Helper()
	key := make([]byte, webhook.KeySize)
	rand.Read(key)
	keys, err := webhook.NewKeyring(key)
	if err != nil {
		t.Fatal(err)
	}
	c := newClock()
	guard := webhook.NewGuard(webhooktest.NewResolver(), true)
	// Receivers answer at once: the minute only bounds a hang, so that a
	// busy machine never turns a slow answer into a time-out. A test of
	// the time-out shortens it for the attempt that is to time out
	// (withSenderTimeout).
	sc := webhook.SenderConfig{Guard: guard, Keys: keys, Timeout: time.Minute, Now: c.Now}
	dc := outbox.DispatcherConfig{Now: c.Now, Jitter: func(d time.Duration) time.Duration { return d }}
	for _, o := range opts {
		o(&dc, &sc)
	}
	return &fixture{
		t: t, db: db, clock: c, keys: keys,
		svc:   webhook.NewService(webhook.ServiceConfig{Store: sqlstore.Bind[webhook.Tx](db), Guard: guard, Keys: keys, Now: c.Now}),
		relay: outbox.NewRelay(sqlstore.Bind[outbox.Tx](db), outbox.RelayConfig{Now: c.Now}),
		disp:  outbox.NewDispatcher(db, webhook.NewSender(sc), dc),
		sc:    sc, dc: dc,
	}
}

// withSenderTimeout runs fn with the dispatcher's sender giving up after d.
func (f *fixture) withSenderTimeout(d time.Duration, fn func()) {
	f.t.Helper()
	was := f.disp
	sc := f.sc
	sc.Timeout = d
	f.disp = outbox.NewDispatcher(f.db, webhook.NewSender(sc), f.dc)
	defer func() { f.disp = was }()
	fn()
}

var (
	acme   = bokat.Principal{Kind: bokat.PrincipalPartner, ClientID: "pc_acme", Scopes: bokat.AllScopes()}
	globex = bokat.Principal{Kind: bokat.PrincipalPartner, ClientID: "pc_globex", Scopes: bokat.AllScopes()}
)

// endpoint registers an endpoint and returns it with its secret.
func (f *fixture) endpoint(p bokat.Principal, url string, types ...bokat.EventType) (bokat.WebhookEndpoint, string) {
	f.t.Helper()
	ep, secret, err := f.svc.RegisterEndpoint(context.Background(), p, url, types)
	if err != nil {
		f.t.Fatalf("register %s: %v", url, err)
	}
	return ep, secret
}

// bookingData is the `data` of an event as the booking code writes it: the
// redacted lifecycle record and the request id, no customer contact data.
func bookingData(bookingID, status string, slotStart time.Time) []byte {
	b, _ := json.Marshal(map[string]any{
		"booking": map[string]any{
			"id": bookingID, "status": status, "provider_id": "prov_vvs_sthlm_1",
			"provider_name": "Rörmokare Stockholm AB", "service_id": "vvs_install_faucet_standard",
			"slot_start_at": slotStart.UTC().Format(time.RFC3339), "slot_end_at": slotStart.Add(3 * time.Hour).UTC().Format(time.RFC3339),
			"slot_label": "tisdag 5 maj 08:00–11:00", "price_sek": 1895, "currency": "SEK",
			"confirmed_at": "2026-05-04T07:59:59Z", "terms_version": "fixed_price_terms_v1:vvs_install_faucet_standard",
		},
		"request_id": "rq_" + bookingID,
	})
	return b
}

// event writes an outbox event through the function the booking code uses.
func (f *fixture) event(p bokat.Principal, bookingID string, typ bokat.EventType) outbox.Event {
	f.t.Helper()
	return insertEvent(f.t, f.db, p, bookingID, typ, f.clock.Now())
}

func insertEvent(tb testing.TB, db *sqlstore.DB, p bokat.Principal, bookingID string, typ bokat.EventType, now time.Time) outbox.Event {
	tb.Helper()
	status := "confirmed"
	if typ == bokat.EventBookingCancelled {
		status = "cancelled"
	}
	ev := outbox.Event{
		ID: uuid.Must(uuid.NewV7()).String(), OwnerClientID: p.ClientID, OwnerUserID: p.UserID, BookingID: bookingID,
		EventType: string(typ), Payload: bookingData(bookingID, status, time.Date(2026, 5, 5, 6, 0, 0, 0, time.UTC)),
		OccurredAt: now, CreatedAt: now,
	}
	err := db.InTx(context.Background(), func(tx *sqlstore.Tx) error { return tx.InsertOutboxEvent(context.Background(), ev) })
	if err != nil {
		tb.Fatalf("insert outbox event: %v", err)
	}
	return ev
}

// pump relays new events and makes one round of due attempts.
func (f *fixture) pump() (relayed, attempted int) {
	f.t.Helper()
	relayed, err := f.relay.RunOnce(context.Background())
	if err != nil {
		f.t.Fatalf("relay: %v", err)
	}
	attempted, err = f.disp.RunOnce(context.Background())
	if err != nil {
		f.t.Fatalf("dispatch: %v", err)
	}
	return relayed, attempted
}

func (f *fixture) deliveries(outboxID string) []outbox.Delivery {
	f.t.Helper()
	ds, err := f.db.WebhookDeliveriesOfOutboxEvent(context.Background(), outboxID)
	if err != nil {
		f.t.Fatal(err)
	}
	return ds
}

func (f *fixture) attempts(deliveryID string) []outbox.RecordedAttempt {
	f.t.Helper()
	as, err := f.db.WebhookDeliveryAttempts(context.Background(), deliveryID)
	if err != nil {
		f.t.Fatal(err)
	}
	return as
}

// verify checks a received delivery with the receivers' package and returns
// its Webhook-Id.
func (f *fixture) verify(secret string, d webhooktest.Delivery) string {
	f.t.Helper()
	v, err := webhookverify.New(secret, webhookverify.WithClock(f.clock.Now))
	if err != nil {
		f.t.Fatal(err)
	}
	id, err := v.Verify(d.Header, d.Body)
	if err != nil {
		f.t.Fatalf("delivery does not verify: %v\n%s", err, d.Body)
	}
	return id
}

func bodyField(tb testing.TB, body []byte, field string) string {
	tb.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		tb.Fatal(err)
	}
	return fmt.Sprint(m[field])
}
