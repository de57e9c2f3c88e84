package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"bokat"
	"bokat/internal/outbox"
)

// DeliveryTimeout is the contract's limit on one delivery attempt.
const DeliveryTimeout = 8 * time.Second

// UserAgent is sent with every delivery.
const UserAgent = "Bokat-Webhooks/1.0"

// SenderConfig configures a Sender.
type SenderConfig struct {
	Guard *Guard
	Keys  *Keyring
	// Timeout bounds one attempt, from connecting to reading the answer;
	// default DeliveryTimeout.
	Timeout time.Duration
	// Now is the clock of Webhook-Timestamp; default time.Now.
	Now func() time.Time
	// TLS, when set, replaces the default TLS client configuration (tests
	// trust their own certificate authority with it).
	TLS *tls.Config
}

// Sender makes webhook delivery attempts over HTTP: it builds the event body,
// signs the exact bytes it sends, connects only where the Guard allows (the
// check runs on the address dialled), never follows redirects, and gives up
// after the timeout. It implements outbox.Deliverer.
type Sender struct {
	client *http.Client
	keys   *Keyring
	now    func() time.Time
	limit  time.Duration
}

var _ outbox.Deliverer = (*Sender)(nil)

// NewSender returns a Sender.
func NewSender(cfg SenderConfig) *Sender {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DeliveryTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	transport := &http.Transport{
		Proxy:                  nil, // never through a proxy: the guard must see the real destination
		DialContext:            cfg.Guard.DialContext,
		TLSClientConfig:        cfg.TLS,
		TLSHandshakeTimeout:    cfg.Timeout,
		ResponseHeaderTimeout:  cfg.Timeout,
		MaxResponseHeaderBytes: 64 << 10,
		MaxIdleConns:           64,
		MaxIdleConnsPerHost:    4,
		IdleConnTimeout:        60 * time.Second,
		ForceAttemptHTTP2:      true,
	}
	return &Sender{
		client: &http.Client{
			Transport: transport,
			Timeout:   cfg.Timeout,
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			},
		},
		keys:  cfg.Keys,
		now:   cfg.Now,
		limit: cfg.Timeout,
	}
}

// eventData is the `data` of an event body. Only the fields the contract
// names are sent, so that whatever else an outbox payload may carry (such as
// customer contact data written by mistake) never leaves the service.
type eventData struct {
	Booking   publicBooking   `json:"booking"`
	RequestID json.RawMessage `json:"request_id,omitempty"`
	Reason    json.RawMessage `json:"reason,omitempty"`
}

// publicBooking is the contract's BookingLifecycleRecord, field by field.
type publicBooking struct {
	ID                         json.RawMessage    `json:"id,omitempty"`
	Status                     json.RawMessage    `json:"status,omitempty"`
	ProviderID                 json.RawMessage    `json:"provider_id,omitempty"`
	ProviderName               json.RawMessage    `json:"provider_name,omitempty"`
	ServiceID                  json.RawMessage    `json:"service_id,omitempty"`
	SlotStartAt                json.RawMessage    `json:"slot_start_at,omitempty"`
	SlotEndAt                  json.RawMessage    `json:"slot_end_at,omitempty"`
	SlotLabel                  json.RawMessage    `json:"slot_label,omitempty"`
	PriceSEK                   json.RawMessage    `json:"price_sek,omitempty"`
	Currency                   json.RawMessage    `json:"currency,omitempty"`
	ConfirmedAt                json.RawMessage    `json:"confirmed_at,omitempty"`
	TermsVersion               json.RawMessage    `json:"terms_version,omitempty"`
	TaxReductionEstimate       *publicTaxEstimate `json:"tax_reduction_estimate,omitempty"`
	CustomerConfirmationStatus json.RawMessage    `json:"customer_confirmation_status,omitempty"`
	ProviderConfirmationStatus json.RawMessage    `json:"provider_confirmation_status,omitempty"`
}

// publicTaxEstimate is the contract's TaxReductionEstimate, field by field:
// the booking's preliminary ROT/RUT figure, as status carries it.
type publicTaxEstimate struct {
	Preliminary            json.RawMessage      `json:"preliminary,omitempty"`
	LabelSV                json.RawMessage      `json:"label_sv,omitempty"`
	LabelEN                json.RawMessage      `json:"label_en,omitempty"`
	Kind                   json.RawMessage      `json:"kind,omitempty"`
	RatePercent            json.RawMessage      `json:"rate_percent,omitempty"`
	LabourPercent          json.RawMessage      `json:"labour_percent,omitempty"`
	LabourAmountSEK        json.RawMessage      `json:"labour_amount_sek,omitempty"`
	EstimatedReductionSEK  json.RawMessage      `json:"estimated_reduction_sek,omitempty"`
	PriceAfterReductionSEK json.RawMessage      `json:"price_after_reduction_sek,omitempty"`
	Currency               json.RawMessage      `json:"currency,omitempty"`
	RulesVersion           json.RawMessage      `json:"rules_version,omitempty"`
	YearlyCapSEK           json.RawMessage      `json:"yearly_cap_sek,omitempty"`
	KindYearlyCapSEK       json.RawMessage      `json:"kind_yearly_cap_sek,omitempty"`
	CapsApplied            json.RawMessage      `json:"caps_applied,omitempty"`
	Conditions             []publicTaxCondition `json:"conditions"`
}

// publicTaxCondition is one condition of an estimate, in Swedish and English.
type publicTaxCondition struct {
	ID json.RawMessage `json:"id,omitempty"`
	SV json.RawMessage `json:"sv,omitempty"`
	EN json.RawMessage `json:"en,omitempty"`
}

// Body returns the JSON body of a delivery: the same bytes for every retry
// of it. The event's data keeps only the fields of the contract.
func Body(d outbox.ClaimedDelivery) ([]byte, error) {
	var data eventData
	if err := json.Unmarshal(d.Payload, &data); err != nil {
		return nil, fmt.Errorf("the outbox event's data is not the contract's shape: %w", err)
	}
	if len(data.Booking.ID) == 0 {
		return nil, errors.New("the outbox event's data has no booking record")
	}
	if d.EventType != string(bokat.EventBookingProviderActionRequired) && d.EventType != string(bokat.EventBookingCancelled) {
		data.Reason = nil
	}
	return json.Marshal(struct {
		ID          string    `json:"id"`
		OutboxID    string    `json:"outbox_id"`
		Type        string    `json:"type"`
		OccurredAt  string    `json:"occurred_at"`
		CreatedAt   string    `json:"created_at"`
		SpecVersion string    `json:"spec_version"`
		Data        eventData `json:"data"`
	}{
		ID:          d.WebhookID,
		OutboxID:    d.OutboxID,
		Type:        d.EventType,
		OccurredAt:  d.OccurredAt.UTC().Format(time.RFC3339Nano),
		CreatedAt:   d.CreatedAt.UTC().Format(time.RFC3339Nano),
		SpecVersion: bokat.BookingsContractVersion,
		Data:        data,
	})
}

// secretContext binds a sealed signing secret to its endpoint.
func secretContext(endpointID string) string { return "webhook-endpoint-secret:" + endpointID }

// Deliver makes one attempt of the delivery.
func (s *Sender) Deliver(ctx context.Context, d outbox.ClaimedDelivery) outbox.Outcome {
	secret, err := s.keys.Open(d.SecretKeyID, d.SecretCiphertext, secretContext(d.EndpointID))
	if err != nil {
		return outbox.Outcome{Err: "cannot unseal the signing secret: " + err.Error()}
	}
	body, err := Body(d)
	if err != nil {
		return outbox.Outcome{Err: err.Error()}
	}
	ts := s.now().Unix()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.URL, bytes.NewReader(body))
	if err != nil {
		return outbox.Outcome{Err: "the endpoint URL is not usable"}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	req.Header.Set("Webhook-Id", d.WebhookID)
	req.Header.Set("Webhook-Timestamp", strconv.FormatInt(ts, 10))
	signature := Sign(string(secret), d.WebhookID, ts, body)
	if d.PreviousSecretCiphertext != "" {
		// After a rotation the previous secret signs too, for 24 hours.
		previous, err := s.keys.Open(d.PreviousSecretKeyID, d.PreviousSecretCiphertext, secretContext(d.EndpointID))
		if err != nil {
			return outbox.Outcome{Err: "cannot unseal the previous signing secret: " + err.Error()}
		}
		signature += " " + Sign(string(previous), d.WebhookID, ts, body)
	}
	req.Header.Set("Webhook-Signature", signature)

	start := time.Now()
	resp, err := s.client.Do(req)
	if err != nil {
		return outbox.Outcome{Latency: time.Since(start), Err: s.describe(err)}
	}
	// Read a little of the answer so the connection can be reused; its
	// content is never stored.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 16<<10))
	resp.Body.Close()
	out := outbox.Outcome{StatusCode: resp.StatusCode, Latency: time.Since(start)}
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		out.Err = fmt.Sprintf("the endpoint answered a redirect (HTTP %d), which is never followed", resp.StatusCode)
	default:
		out.Err = fmt.Sprintf("the endpoint answered HTTP %d", resp.StatusCode)
	}
	return out
}

// describe words a transport error without the URL (its query may hold the
// receiver's own secrets).
func (s *Sender) describe(err error) string {
	var refused *DialRefusedError
	if errors.As(err, &refused) {
		return refused.Error()
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
		return fmt.Sprintf("no answer within %s (timeout)", s.limit)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return err.Error()
}
