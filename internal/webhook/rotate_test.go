package webhook_test

import (
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"bokat"
	"bokat/internal/outbox"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/webhook"
	"bokat/internal/webhook/webhooktest"
	"bokat/webhookverify"
)

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.t = t }

// TestRotateSecretSignsWithBothSecretsFor24Hours: after a rotation a
// delivery carries the new secret's pair of signatures and the old one's,
// so receivers holding either secret verify it, with webhookverify and the
// Standard Webhooks library, until 24 hours after the rotation; from then on
// only the new secret verifies. Rotating again within the 24 hours drops the
// oldest secret at once.
func TestRotateSecretSignsWithBothSecretsFor24Hours(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		key := make([]byte, webhook.KeySize)
		rand.Read(key)
		keys, err := webhook.NewKeyring(key)
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Date(2026, 5, 4, 8, 0, 0, 0, time.UTC)
		clock := &fakeClock{t: t0}
		guard := webhook.NewGuard(webhooktest.NewResolver(), true)
		svc := webhook.NewService(webhook.ServiceConfig{Store: sqlstore.Bind[webhook.Tx](db), Guard: guard, Keys: keys, Now: clock.Now})
		// The sender stamps real time, as the Standard Webhooks library
		// checks the timestamp against the real clock; which secrets sign is
		// decided when a delivery is claimed, on the fake clock.
		sender := webhook.NewSender(webhook.SenderConfig{Guard: guard, Keys: keys})
		rc := webhooktest.NewReceiver(t, nil)
		owner := bokat.Principal{ClientID: "cl_rotate"}

		ep, original, err := svc.RegisterEndpoint(ctx, owner, rc.URL, []bokat.EventType{bokat.EventBookingConfirmed})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.RotateSecret(ctx, bokat.Principal{ClientID: "cl_other"}, ep.ID); !isCode(err, bokat.CodeWebhookEndpointNotFound) {
			t.Fatalf("another owner's rotation: err %v, want webhook_endpoint_not_found", err)
		}
		clock.Set(t0.Add(time.Minute))
		rot, err := svc.RotateSecret(ctx, owner, ep.ID)
		if err != nil {
			t.Fatal(err)
		}
		if rot.Secret == original || !strings.HasPrefix(rot.Secret, webhook.SecretPrefix) || len(rot.Secret) != 50 {
			t.Fatalf("rotated secret %q, want a fresh whsec_ secret", rot.Secret)
		}
		if rot.Endpoint.SigningKeyID == ep.SigningKeyID {
			t.Errorf("signing_key_id %s unchanged by the rotation", ep.SigningKeyID)
		}
		if want := t0.Add(time.Minute + 24*time.Hour); !rot.PreviousSecretExpiresAt.Equal(want) {
			t.Errorf("previous secret expires at %v, want %v", rot.PreviousSecretExpiresAt, want)
		}

		// deliver claims a new delivery at the instant and sends it.
		deliver := func(at time.Time) (http.Header, []byte) {
			t.Helper()
			ev := outbox.Event{ID: uuid.Must(uuid.NewV7()).String(), OwnerClientID: owner.ClientID,
				BookingID: "bk_1", EventType: string(bokat.EventBookingConfirmed),
				Payload: []byte(`{"booking":{"id":"bk_1"},"request_id":"rq_1"}`), OccurredAt: at, CreatedAt: at}
			err := db.InTx(ctx, func(tx *sqlstore.Tx) error {
				if err := tx.InsertOutboxEvent(ctx, ev); err != nil {
					return err
				}
				_, err := tx.InsertWebhookDelivery(ctx, outbox.Delivery{ID: uuid.Must(uuid.NewV7()).String(),
					WebhookID: uuid.Must(uuid.NewV7()).String(), OutboxID: ev.ID, EndpointID: ep.ID,
					Origin: outbox.OriginRelay, NextAttemptAt: at, CreatedAt: at})
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			claimed, err := db.ClaimWebhookDeliveries(ctx, at, time.Second, 10, uuid.NewString())
			if err != nil || len(claimed) != 1 {
				t.Fatalf("claimed %d deliveries, err %v; want 1", len(claimed), err)
			}
			if out := sender.Deliver(ctx, claimed[0]); out.Err != "" || out.StatusCode != http.StatusNoContent {
				t.Fatalf("Deliver = %+v", out)
			}
			if err := db.CancelWebhookDelivery(ctx, claimed[0].ID, claimed[0].LeaseToken, "test done", at); err != nil {
				t.Fatal(err)
			}
			got := rc.Deliveries()
			last := got[len(got)-1]
			return last.Header, last.Body
		}
		check := func(h http.Header, body []byte, signatures int, valid, invalid []string) {
			t.Helper()
			if n := len(strings.Fields(h.Get("Webhook-Signature"))); n != signatures {
				t.Errorf("Webhook-Signature has %d signatures, want %d", n, signatures)
			}
			for _, secret := range append(append([]string(nil), valid...), invalid...) {
				want := !slices.Contains(invalid, secret)
				v, err := webhookverify.New(secret)
				if err != nil {
					t.Fatal(err)
				}
				_, err = v.Verify(h, body)
				if want && err != nil {
					t.Errorf("webhookverify rejects a secret that should sign: %v", err)
				}
				if !want && !errors.Is(err, webhookverify.ErrNoMatchingSignature) {
					t.Errorf("webhookverify with a retired secret: err %v, want ErrNoMatchingSignature", err)
				}
				std, err := standardwebhooks.NewWebhook(secret)
				if err != nil {
					t.Fatal(err)
				}
				err = std.Verify(body, h)
				if want && err != nil {
					t.Errorf("the Standard Webhooks library rejects a secret that should sign: %v", err)
				}
				if !want && err == nil {
					t.Errorf("the Standard Webhooks library accepts a retired secret")
				}
			}
		}

		// The new pair first, then the old one, until 24 h after rotating.
		h, body := deliver(t0.Add(time.Minute + 24*time.Hour - time.Millisecond))
		check(h, body, 4, []string{rot.Secret, original}, nil)
		sigs := strings.Fields(h.Get("Webhook-Signature"))
		v, _ := webhookverify.New(rot.Secret)
		newOnly := h.Clone()
		newOnly.Set("Webhook-Signature", sigs[0]+" "+sigs[1])
		if _, err := v.Verify(newOnly, body); err != nil {
			t.Errorf("the first pair is not the new secret's: %v", err)
		}
		h, body = deliver(t0.Add(time.Minute + 24*time.Hour))
		check(h, body, 2, []string{rot.Secret}, []string{original})

		// Rotating again within 24 h: the secret it replaces signs for 24 h
		// from then, the one before it stops at once.
		clock.Set(t0.Add(26 * time.Hour))
		rot2, err := svc.RotateSecret(ctx, owner, ep.ID)
		if err != nil {
			t.Fatal(err)
		}
		clock.Set(t0.Add(27 * time.Hour))
		rot3, err := svc.RotateSecret(ctx, owner, ep.ID)
		if err != nil {
			t.Fatal(err)
		}
		h, body = deliver(t0.Add(51*time.Hour - time.Millisecond))
		check(h, body, 4, []string{rot3.Secret, rot2.Secret}, []string{rot.Secret, original})
		h, body = deliver(t0.Add(51 * time.Hour))
		check(h, body, 2, []string{rot3.Secret}, []string{rot2.Secret})
	})
}

func isCode(err error, code bokat.Code) bool {
	var e *bokat.Error
	return errors.As(err, &e) && e.Code == code
}
