package webhook

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"bokat/api"
	"bokat/internal/clocktest"
	"bokat/internal/outbox"
	"bokat/internal/webhook/webhooktest"
	"bokat/webhookverify"
)

var loadContract = sync.OnceValues(api.Load)

func testKeyring(tb testing.TB) *Keyring {
	tb.Helper()
	key := make([]byte, KeySize)
	rand.Read(key)
	k, err := NewKeyring(key)
	if err != nil {
		tb.Fatal(err)
	}
	return k
}

// claimed returns a delivery of a realistic redacted booking.confirmed event
// to url, with its secret sealed by keys.
func claimed(tb testing.TB, keys *Keyring, url, secret string) outbox.ClaimedDelivery {
	tb.Helper()
	const endpointID = "0196a6f0-1111-7000-8000-000000000001"
	keyID, sealed, err := keys.Seal([]byte(secret), secretContext(endpointID))
	if err != nil {
		tb.Fatal(err)
	}
	return outbox.ClaimedDelivery{
		ID: "0196a6f0-2222-7000-8000-000000000001", WebhookID: "0196a6f0-3333-7000-8000-000000000001",
		OutboxID: "0196a6f0-4444-7000-8000-000000000001", EndpointID: endpointID,
		CreatedAt: time.Date(2026, 5, 4, 8, 0, 0, 0, time.UTC), URL: url, SecretKeyID: keyID, SecretCiphertext: sealed,
		EndpointActive: true, EventType: "booking.confirmed", BookingID: "bk_01HZX",
		Payload: []byte(`{"booking": {"id": "bk_01HZX", "status": "confirmed", "provider_id": "prov_vvs_sthlm_1",
			"provider_name": "Rörmokare Stockholm AB", "service_id": "vvs_install_faucet_standard",
			"slot_start_at": "2026-05-05T06:00:00Z", "slot_end_at": "2026-05-05T09:00:00Z",
			"slot_label": "tisdag 5 maj 08:00–11:00", "price_sek": 1895, "currency": "SEK",
			"confirmed_at": "2026-05-04T07:59:59.123Z", "terms_version": "fixed_price_terms_v1:vvs_install_faucet_standard"},
			"request_id": "rq_01HZX"}`),
		OccurredAt: time.Date(2026, 5, 4, 7, 59, 59, 123e6, time.UTC),
	}
}

// TestDeliverKeepsTheKeyOfLegacySecrets: an endpoint registered before
// secrets took the Standard Webhooks form keeps its key (the string's bytes),
// so its receivers need no change, and now get a standard base64 signature
// too.
func TestDeliverKeepsTheKeyOfLegacySecrets(t *testing.T) {
	t.Parallel()
	rc := webhooktest.NewReceiver(t, nil)
	keys := testKeyring(t)
	const legacy = "whsec_q0Jd3TtZxW9k2mVnL5aP8rYcE1fH7gUoS4iB6vXzN0M"
	s := NewSender(SenderConfig{Guard: NewGuard(webhooktest.NewResolver(), true), Keys: keys})
	if out := s.Deliver(context.Background(), claimed(t, keys, rc.URL, legacy)); out.Err != "" {
		t.Fatal(out.Err)
	}
	got := rc.Deliveries()[0]
	v, err := webhookverify.New(legacy)
	if err != nil {
		t.Fatal(err)
	}
	urlOnly := got.Header.Clone()
	urlOnly.Set("Webhook-Signature", strings.Fields(got.Header.Get("Webhook-Signature"))[0])
	if _, err := v.Verify(urlOnly, got.Body); err != nil {
		t.Fatalf("the base64url signature alone does not verify with the legacy key: %v", err)
	}
	raw, _ := standardwebhooks.NewWebhookRaw([]byte(legacy))
	if err := raw.Verify(got.Body, got.Header); err != nil {
		t.Fatalf("the Standard Webhooks library (raw key) rejects the delivery: %v", err)
	}
}

func TestDeliverSendsASignedEventMatchingTheContract(t *testing.T) {
	t.Parallel()
	rc := webhooktest.NewReceiver(t, nil)
	keys := testKeyring(t)
	secret := NewSigningSecret()
	s := NewSender(SenderConfig{Guard: NewGuard(webhooktest.NewResolver(), true), Keys: keys})
	d := claimed(t, keys, rc.URL, secret)

	out := s.Deliver(context.Background(), d)
	if !(out.Err == "" && out.StatusCode == 204) {
		t.Fatalf("Deliver = %+v, want 204 and no error", out)
	}
	got := rc.Deliveries()
	if len(got) != 1 {
		t.Fatalf("receiver got %d requests, want 1", len(got))
	}
	h, body := got[0].Header, got[0].Body
	for k, want := range map[string]string{"Content-Type": "application/json", "User-Agent": UserAgent, "Webhook-Id": d.WebhookID} {
		if h.Get(k) != want {
			t.Errorf("%s = %q, want %q", k, h.Get(k), want)
		}
	}
	v, err := webhookverify.New(secret)
	if err != nil {
		t.Fatal(err)
	}
	if id, err := v.Verify(h, body); err != nil || id != d.WebhookID {
		t.Fatalf("webhookverify: id %q err %v", id, err)
	}
	// The contract's base64url signature comes first, then the standard
	// base64 one; the official Standard Webhooks library verifies the
	// delivery as sent, given the secret as issued.
	sigs := strings.Fields(h.Get("Webhook-Signature"))
	if len(sigs) != 2 {
		t.Fatalf("Webhook-Signature = %q, want two signatures", h.Get("Webhook-Signature"))
	}
	if _, err := base64.RawURLEncoding.Strict().DecodeString(strings.TrimPrefix(sigs[0], "v1,")); err != nil {
		t.Errorf("first signature %s is not base64url without padding: %v", sigs[0], err)
	}
	if _, err := base64.StdEncoding.Strict().DecodeString(strings.TrimPrefix(sigs[1], "v1,")); err != nil {
		t.Errorf("second signature %s is not standard base64: %v", sigs[1], err)
	}
	std, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	if err := std.Verify(body, h); err != nil {
		t.Fatalf("the Standard Webhooks library rejects the delivery: %v", err)
	}

	contract, err := loadContract()
	if err != nil {
		t.Fatal(err)
	}
	if err := contract.ValidateWebhookEvent(body); err != nil {
		t.Fatalf("body does not match the contract: %v\n%s", err, body)
	}
	var ev map[string]any
	if err := json.Unmarshal(body, &ev); err != nil {
		t.Fatal(err)
	}
	if ev["id"] != d.WebhookID || ev["outbox_id"] != d.OutboxID || ev["type"] != "booking.confirmed" ||
		ev["spec_version"] != "public_bookings_api_v1" || ev["occurred_at"] != "2026-05-04T07:59:59.123Z" ||
		ev["created_at"] != "2026-05-04T08:00:00Z" {
		t.Errorf("event envelope = %v", ev)
	}
	booking := ev["data"].(map[string]any)["booking"].(map[string]any)
	if booking["price_sek"] != float64(1895) || booking["slot_label"] != "tisdag 5 maj 08:00–11:00" {
		t.Errorf("booking = %v", booking)
	}

	// A retry sends the same bytes under the same Webhook-Id.
	if out := s.Deliver(context.Background(), d); out.Err != "" {
		t.Fatal(out.Err)
	}
	again := rc.Deliveries()[1]
	if string(again.Body) != string(body) || again.Header.Get("Webhook-Id") != d.WebhookID {
		t.Errorf("retry body/id differ:\n%s\n%s", again.Body, body)
	}
}

func TestDeliverOverTLS(t *testing.T) {
	t.Parallel()
	var got atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Add(1)
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	keys := testKeyring(t)
	s := NewSender(SenderConfig{Guard: NewGuard(webhooktest.NewResolver(), true), Keys: keys, TLS: &tls.Config{RootCAs: pool}})
	if out := s.Deliver(context.Background(), claimed(t, keys, srv.URL+"/hook", NewSigningSecret())); !out.Succeeded() || got.Load() != 1 {
		t.Fatalf("Deliver over TLS = %+v, receiver got %d", out, got.Load())
	}
}

func TestDeliverFailures(t *testing.T) {
	t.Parallel()
	var followed atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/landing", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/landing", func(w http.ResponseWriter, r *http.Request) { followed.Add(1) })
	mux.HandleFunc("/error", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusInternalServerError) })
	mux.HandleFunc("/gone", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusGone) })
	release := make(chan struct{})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	defer close(release)

	keys := testKeyring(t)
	// Only /slow is to time out, and it never answers until the test ends;
	// the others answer at once, under a time-out no pause of a busy
	// machine reaches.
	fast := NewSender(SenderConfig{Guard: NewGuard(webhooktest.NewResolver(), true), Keys: keys, Timeout: time.Minute})
	slow := NewSender(SenderConfig{Guard: NewGuard(webhooktest.NewResolver(), true), Keys: keys, Timeout: 200 * time.Millisecond})
	cases := []struct {
		path       string
		wantStatus int
		wantErr    string
	}{
		{"/redirect", 307, "redirect (HTTP 307), which is never followed"},
		{"/error", 500, "HTTP 500"},
		{"/gone", 410, "HTTP 410"},
		{"/slow", 0, "no answer within 200ms (timeout)"},
	}
	for _, tc := range cases {
		t.Run(tc.path, func(t *testing.T) {
			s := fast
			if tc.path == "/slow" {
				s = slow
			}
			out := s.Deliver(context.Background(), claimed(t, keys, srv.URL+tc.path+"?token=receiver-secret", NewSigningSecret()))
			if out.StatusCode != tc.wantStatus || !strings.Contains(out.Err, tc.wantErr) || out.Succeeded() {
				t.Fatalf("Deliver = %+v, want status %d and error %q", out, tc.wantStatus, tc.wantErr)
			}
			if strings.Contains(out.Err, "receiver-secret") {
				t.Errorf("error %q leaks the URL's query", out.Err)
			}
		})
	}
	if followed.Load() != 0 {
		t.Fatalf("the redirect was followed %d times", followed.Load())
	}
}

// countingListener accepts on 127.0.0.1 and counts connections.
func countingListener(t *testing.T) (port uint16, accepted *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	accepted = new(atomic.Int32)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	return uint16(ln.Addr().(*net.TCPAddr).Port), accepted
}

// TestProductionDeliveryToLoopbackIsRefusedAtDialTime proves the check on
// the socket address: the guard allows the listener's port (so only the
// address decides), the name resolves to 127.0.0.1 at delivery, and the
// listener never sees a connection.
func TestProductionDeliveryToLoopbackIsRefusedAtDialTime(t *testing.T) {
	t.Parallel()
	port, accepted := countingListener(t)
	res := webhooktest.NewResolver("hooks.partner.se=127.0.0.1", "v6.partner.se=::1", "mapped.partner.se=::ffff:127.0.0.1")
	g := NewGuard(res, false)
	g.port = port
	keys := testKeyring(t)
	s := NewSender(SenderConfig{Guard: g, Keys: keys, Timeout: 2 * time.Second})
	for _, host := range []string{"hooks.partner.se", "v6.partner.se", "mapped.partner.se", "127.0.0.1"} {
		url := "https://" + net.JoinHostPort(host, itoa(port)) + "/hook"
		out := s.Deliver(context.Background(), claimed(t, keys, url, NewSigningSecret()))
		if out.StatusCode != 0 || !strings.Contains(out.Err, "destination refused at connect") || !strings.Contains(out.Err, "loopback") {
			t.Errorf("%s: Deliver = %+v, want refused at connect as loopback", host, out)
		}
	}
	// The same guard in development mode connects: the refusal above was the guard's.
	dev := NewGuard(res, true)
	d := NewSender(SenderConfig{Guard: dev, Keys: keys, Timeout: 2 * time.Second})
	d.Deliver(context.Background(), claimed(t, keys, "http://hooks.partner.se:"+itoa(port)+"/hook", NewSigningSecret()))
	clocktest.Wait(t, "the development connection", func() bool { return accepted.Load() != 0 })
	if accepted.Load() != 1 {
		t.Fatalf("listener accepted %d connections, want exactly the development one", accepted.Load())
	}
}

func TestDialRefusesOtherPortsInProduction(t *testing.T) {
	t.Parallel()
	port, accepted := countingListener(t)
	g := NewGuard(webhooktest.NewResolver("hooks.partner.se=93.184.216.34"), false)
	if err := g.checkDial("127.0.0.1:" + itoa(port)); err == nil {
		t.Fatal("checkDial admitted a loopback address on a non-443 port")
	}
	if err := g.checkDial("93.184.216.34:8443"); err == nil || !strings.Contains(err.Error(), "not port 443") {
		t.Fatalf("checkDial(public:8443) = %v, want refused for the port", err)
	}
	if err := g.checkDial("93.184.216.34:443"); err != nil {
		t.Fatalf("checkDial(public:443) = %v, want allowed", err)
	}
	if accepted.Load() != 0 {
		t.Fatal("a connection was made")
	}
}

func itoa(p uint16) string { return strconv.Itoa(int(p)) }

// TestBodyCarriesOnlyTheContractsFields: contact data that an outbox payload
// carries by mistake never reaches a receiver.
func TestBodyCarriesOnlyTheContractsFields(t *testing.T) {
	t.Parallel()
	keys := testKeyring(t)
	d := claimed(t, keys, "http://127.0.0.1/hook", NewSigningSecret())
	var payload map[string]any
	if err := json.Unmarshal(d.Payload, &payload); err != nil {
		t.Fatal(err)
	}
	payload["customer"] = map[string]any{"name": "Anna Andersson", "email": "anna@example.se", "phone": "+46701234567"}
	payload["reason"] = "provider_flagged"
	booking := payload["booking"].(map[string]any)
	booking["customer_email"] = "anna@example.se"
	booking["service_address"] = "Storgatan 1, 114 32 Stockholm"
	d.Payload, _ = json.Marshal(payload)

	body, err := Body(d)
	if err != nil {
		t.Fatal(err)
	}
	for _, leaked := range []string{"Anna", "anna@example.se", "+46701234567", "Storgatan", "customer\"", "reason"} {
		if strings.Contains(string(body), leaked) {
			t.Errorf("body carries %q: %s", leaked, body)
		}
	}
	contract, err := loadContract()
	if err != nil {
		t.Fatal(err)
	}
	if err := contract.ValidateWebhookEvent(body); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(body), `"price_sek":1895`) || !strings.Contains(string(body), `"request_id":"rq_01HZX"`) {
		t.Fatalf("body lost contract fields: %s", body)
	}
	d.EventType = "booking.provider_action_required"
	if body, _ := Body(d); !strings.Contains(string(body), `"reason":"provider_flagged"`) {
		t.Fatalf("provider_action_required body lacks its reason: %s", body)
	}
	payload["reason"] = "provider_cancelled"
	d.Payload, _ = json.Marshal(payload)
	d.EventType = "booking.cancelled"
	if body, _ := Body(d); !strings.Contains(string(body), `"reason":"provider_cancelled"`) {
		t.Fatalf("a provider's booking.cancelled body lacks its reason: %s", body)
	} else if err := contract.ValidateWebhookEvent(body); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{`{"booking": "not an object"}`, `{"request_id": "rq_1"}`, `not json`} {
		d.Payload = []byte(bad)
		if _, err := Body(d); err == nil {
			t.Fatalf("payload %s was accepted", bad)
		}
	}
}

func TestSenderDefaultsToTheContractsTimeout(t *testing.T) {
	t.Parallel()
	s := NewSender(SenderConfig{Guard: NewGuard(webhooktest.NewResolver(), false), Keys: testKeyring(t)})
	if s.client.Timeout != 8*time.Second || s.limit != DeliveryTimeout {
		t.Fatalf("timeout %s, want 8s", s.client.Timeout)
	}
	if s.client.Transport.(*http.Transport).Proxy != nil {
		t.Fatal("deliveries may go through a proxy")
	}
}
