package webhook_test

import (
	"context"
	"crypto/rand"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"bokat"
	"bokat/internal/outbox"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/webhook"
	"bokat/internal/webhook/webhooktest"
	"bokat/webhookverify"
)

// TestEndpointIDsCarryTheirPrefixAndBareUUIDsStillWork: a new endpoint's id
// is whe_ and 32 hex digits; an endpoint registered before, under a bare
// UUID, is still listed, managed and delivered to (its secret sealed to
// that id); other forms are no endpoint.
func TestEndpointIDsCarryTheirPrefixAndBareUUIDsStillWork(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		key := make([]byte, webhook.KeySize)
		rand.Read(key)
		keys, err := webhook.NewKeyring(key)
		if err != nil {
			t.Fatal(err)
		}
		guard := webhook.NewGuard(webhooktest.NewResolver(), true)
		store := sqlstore.Bind[webhook.Tx](db)
		svc := webhook.NewService(webhook.ServiceConfig{Store: store, Guard: guard, Keys: keys})
		rc := webhooktest.NewReceiver(t, nil)
		owner := bokat.Principal{ClientID: "pc_ids"}

		ep, _, err := svc.RegisterEndpoint(ctx, owner, rc.URL, []bokat.EventType{bokat.EventBookingConfirmed})
		if err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(`^whe_[0-9a-f]{32}$`).MatchString(ep.ID) {
			t.Fatalf("endpoint id %q, want whe_ and 32 hex digits", ep.ID)
		}

		// An endpoint as the release before registered it.
		legacyID := uuid.Must(uuid.NewV7()).String()
		secret := webhook.NewSigningSecret()
		keyID, sealed, err := keys.Seal([]byte(secret), webhook.SecretContext(legacyID))
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now().UTC().Truncate(time.Millisecond)
		err = store.InTx(ctx, func(tx webhook.Tx) error {
			return tx.InsertWebhookEndpoint(ctx, webhook.Endpoint{ID: legacyID, OwnerClientID: owner.ClientID, URL: rc.URL,
				EventTypes: []string{string(bokat.EventBookingConfirmed)}, SigningKeyID: "whk_0011223344556677",
				SecretKeyID: keyID, SecretCiphertext: sealed, CreatedAt: now, UpdatedAt: now}, webhook.MaxEndpointsPerOwner)
		})
		if err != nil {
			t.Fatal(err)
		}
		list, err := svc.ListEndpoints(ctx, owner)
		if err != nil || len(list) != 2 {
			t.Fatalf("listed %d endpoints, err %v; want 2", len(list), err)
		}
		if _, err := svc.SetEndpointEnabled(ctx, owner, legacyID, false); err != nil {
			t.Fatalf("disable the bare-UUID endpoint: %v", err)
		}
		if _, err := svc.SetEndpointEnabled(ctx, owner, legacyID, true); err != nil {
			t.Fatalf("enable the bare-UUID endpoint: %v", err)
		}
		if _, err := svc.ListAttempts(ctx, owner, legacyID, "", 10); err != nil {
			t.Fatalf("attempts of the bare-UUID endpoint: %v", err)
		}

		// Its secret, sealed to the bare id, still signs its deliveries.
		ev := outbox.Event{ID: uuid.Must(uuid.NewV7()).String(), OwnerClientID: owner.ClientID, BookingID: "bkg_1",
			EventType: string(bokat.EventBookingConfirmed), Payload: []byte(`{"booking":{"id":"bkg_1"}}`), OccurredAt: now, CreatedAt: now}
		err = db.InTx(ctx, func(tx *sqlstore.Tx) error {
			if err := tx.InsertOutboxEvent(ctx, ev); err != nil {
				return err
			}
			_, err := tx.InsertWebhookDelivery(ctx, outbox.Delivery{ID: uuid.Must(uuid.NewV7()).String(),
				WebhookID: uuid.Must(uuid.NewV7()).String(), OutboxID: ev.ID, EndpointID: legacyID,
				Origin: outbox.OriginRelay, NextAttemptAt: now, CreatedAt: now})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		claimed, err := db.ClaimWebhookDeliveries(ctx, now, time.Second, 10, uuid.NewString())
		if err != nil || len(claimed) != 1 {
			t.Fatalf("claimed %d deliveries, err %v; want 1", len(claimed), err)
		}
		sender := webhook.NewSender(webhook.SenderConfig{Guard: guard, Keys: keys})
		if out := sender.Deliver(ctx, claimed[0]); out.Err != "" || out.StatusCode != http.StatusNoContent {
			t.Fatalf("Deliver to the bare-UUID endpoint = %+v", out)
		}
		got := rc.Deliveries()
		v, err := webhookverify.New(secret)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := v.Verify(got[len(got)-1].Header, got[len(got)-1].Body); err != nil {
			t.Fatalf("the bare-UUID endpoint's secret does not verify its delivery: %v", err)
		}

		for _, id := range []string{strings.ToUpper(legacyID), "{" + legacyID + "}", strings.ReplaceAll(legacyID, "-", ""),
			"whe_" + strings.ReplaceAll(legacyID, "-", ""), strings.ToUpper(ep.ID), ep.ID + "0", "whe_"} {
			if err := svc.DeleteEndpoint(ctx, owner, id); !isCode(err, bokat.CodeWebhookEndpointNotFound) {
				t.Errorf("DeleteEndpoint(%q) = %v, want webhook_endpoint_not_found", id, err)
			}
		}
		for _, id := range []string{legacyID, ep.ID} {
			if err := svc.DeleteEndpoint(ctx, owner, id); err != nil {
				t.Errorf("DeleteEndpoint(%q) = %v", id, err)
			}
		}
	})
}
