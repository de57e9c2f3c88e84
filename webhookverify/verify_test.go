package webhookverify_test

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"bokat/webhookverify"
)

const testSecret = "whsec_q0Jd3TtZxW9k2mVnL5aP8rYcE1fH7gUoS4iB6vXzN0M"

func headers(id string, ts int64, sig string) http.Header {
	h := http.Header{}
	if id != "" {
		h.Set("Webhook-Id", id)
	}
	h.Set("Webhook-Timestamp", strconv.FormatInt(ts, 10))
	if sig != "" {
		h.Set("Webhook-Signature", sig)
	}
	return h
}

func TestVerify(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_790_000_000, 0)
	body := []byte(`{"id":"msg-1","type":"booking.cancelled"}`)
	good := webhookverify.Sign(testSecret, "msg-1", now, body)
	other := webhookverify.Sign("whsec_"+strings.Repeat("A", 43), "msg-1", now, body)
	cases := []struct {
		name    string
		header  http.Header
		body    []byte
		want    error
		wantID  string
		options []webhookverify.Option
	}{
		{name: "valid", header: headers("msg-1", now.Unix(), good), body: body, wantID: "msg-1"},
		{name: "valid among several signatures", header: headers("msg-1", now.Unix(), other+" v2,abc "+good), body: body, wantID: "msg-1"},
		{name: "300 s old is still valid", header: headers("msg-1", now.Unix()-300, webhookverify.Sign(testSecret, "msg-1", now.Add(-300*time.Second), body)), body: body, wantID: "msg-1"},
		{name: "301 s old", header: headers("msg-1", now.Unix()-301, webhookverify.Sign(testSecret, "msg-1", now.Add(-301*time.Second), body)), body: body, want: webhookverify.ErrTimestampTooOld},
		{name: "301 s ahead", header: headers("msg-1", now.Unix()+301, webhookverify.Sign(testSecret, "msg-1", now.Add(301*time.Second), body)), body: body, want: webhookverify.ErrTimestampTooNew},
		{name: "custom tolerance", header: headers("msg-1", now.Unix()-61, webhookverify.Sign(testSecret, "msg-1", now.Add(-61*time.Second), body)), body: body, want: webhookverify.ErrTimestampTooOld,
			options: []webhookverify.Option{webhookverify.WithTolerance(time.Minute)}},
		{name: "body altered", header: headers("msg-1", now.Unix(), good), body: []byte(`{"id":"msg-1","type":"booking.confirmed"}`), want: webhookverify.ErrNoMatchingSignature},
		{name: "body re-serialised", header: headers("msg-1", now.Unix(), good), body: []byte(`{"id": "msg-1", "type": "booking.cancelled"}`), want: webhookverify.ErrNoMatchingSignature},
		{name: "other id", header: headers("msg-2", now.Unix(), good), body: body, want: webhookverify.ErrNoMatchingSignature},
		{name: "other timestamp", header: headers("msg-1", now.Unix()+1, good), body: body, want: webhookverify.ErrNoMatchingSignature},
		{name: "wrong secret only", header: headers("msg-1", now.Unix(), other), body: body, want: webhookverify.ErrNoMatchingSignature},
		{name: "unknown version", header: headers("msg-1", now.Unix(), "v2,"+strings.TrimPrefix(good, "v1,")), body: body, want: webhookverify.ErrNoMatchingSignature},
		{name: "standard base64 is not our encoding", header: headers("msg-1", now.Unix(), toStd(good)+"x"), body: body, want: webhookverify.ErrNoMatchingSignature},
		{name: "unused low bits flipped", header: headers("msg-1", now.Unix(), flipUnusedBits(good)), body: body, want: webhookverify.ErrNoMatchingSignature},
		{name: "no id", header: headers("", now.Unix(), good), body: body, want: webhookverify.ErrMissingHeader},
		{name: "no signature", header: headers("msg-1", now.Unix(), ""), body: body, want: webhookverify.ErrMissingHeader},
		{name: "timestamp not a number", header: func() http.Header {
			h := headers("msg-1", now.Unix(), good)
			h.Set("Webhook-Timestamp", "2026-01-01T00:00:00Z")
			return h
		}(), body: body, want: webhookverify.ErrBadTimestamp},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v, err := webhookverify.New(testSecret, append([]webhookverify.Option{webhookverify.WithClock(func() time.Time { return now })}, tc.options...)...)
			if err != nil {
				t.Fatal(err)
			}
			id, err := v.Verify(tc.header, tc.body)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Verify error = %v, want %v", err, tc.want)
			}
			if id != tc.wantID {
				t.Fatalf("Verify id = %q, want %q", id, tc.wantID)
			}
		})
	}
}

func TestNewRejectsAnythingButAWholeSecret(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "q0Jd3TtZxW9k2mVnL5aP8rYcE1fH7gUoS4iB6vXzN0M", "whsec_", "whsec_short"} {
		if _, err := webhookverify.New(s); err == nil {
			t.Errorf("New(%q) accepted it", s)
		}
	}
}

// toStd converts a "v1,<base64url>" signature to the standard base64 with
// padding that Standard Webhooks libraries compare.
// flipUnusedBits returns the signature sig ("v1,<43 base64url characters>")
// with the lowest unused bit of its last character flipped: the same bytes
// to a lenient decoder, not the canonical encoding.
func flipUnusedBits(sig string) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	i := strings.IndexByte(alphabet, sig[len(sig)-1])
	flipped := sig[:len(sig)-1] + string(alphabet[i^1])
	a, err1 := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(sig, "v1,"))
	b, err2 := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(flipped, "v1,"))
	if err1 != nil || err2 != nil || string(a) != string(b) {
		panic("flipUnusedBits changed the signature's bytes")
	}
	return flipped
}

func toStd(sig string) string {
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(sig, "v1,"))
	if err != nil {
		panic(err)
	}
	return "v1," + base64.StdEncoding.EncodeToString(raw)
}

// fromStd converts a Standard Webhooks signature to ours.
func fromStd(sig string) string {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(sig, "v1,"))
	if err != nil {
		panic(err)
	}
	return "v1," + base64.RawURLEncoding.EncodeToString(raw)
}

// TestAgreesWithTheStandardWebhooksLibrary cross-checks Sign and Verify with
// an independent implementation, keyed with the secret string's bytes.
func TestAgreesWithTheStandardWebhooksLibrary(t *testing.T) {
	t.Parallel()
	std, err := standardwebhooks.NewWebhookRaw([]byte(testSecret))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for i, body := range [][]byte{[]byte(`{}`), []byte(`{"data":{"booking":{"id":"bk_1","slot_label":"tisdag 5 maj 08:00–11:00"}}}`), []byte("not json \x00\xff")} {
		id := "msg-" + strconv.Itoa(i)
		ours := webhookverify.Sign(testSecret, id, now, body)
		h := headers(id, now.Unix(), toStd(ours))
		if err := std.Verify(body, h); err != nil {
			t.Errorf("body %d: the library rejects our signature: %v", i, err)
		}
		theirs, err := std.Sign(id, now, body)
		if err != nil {
			t.Fatal(err)
		}
		v, err := webhookverify.New(testSecret)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := v.Verify(headers(id, now.Unix(), fromStd(theirs)), body); err != nil || got != id {
			t.Errorf("body %d: we reject the library's signature: id %q err %v", i, got, err)
		}
		// Without conversion, the library rejects our base64url signature
		// (unless the digest happens to have no '-', '_' or padding).
		if err := std.Verify(body, headers(id, now.Unix(), ours)); err == nil && toStd(ours) != ours {
			t.Errorf("body %d: the library accepted an unconverted base64url signature", i)
		}
	}
}

// TestDocumentedVector keeps the test vector of docs/webhooks.md true.
func TestDocumentedVector(t *testing.T) {
	t.Parallel()
	const (
		secret = "whsec_MfKQ9r8GKYqrTwJSJ6QchjgNGPTFgzwe3GwxYmaHoXM"
		id     = "0196a6f0-3333-7000-8000-000000000001"
		body   = `{"id":"0196a6f0-3333-7000-8000-000000000001","type":"booking.cancelled","data":{"booking":{"id":"bk_01HZX","status":"cancelled","provider_name":"Rörmokare Stockholm AB"}}}`
		want   = "v1,tGK5WhXbRr0my5_w7hYClDYWBmKZZBOThncQESy2NSg"
	)
	ts := time.Unix(1777881600, 0)
	if got := webhookverify.Sign(secret, id, ts, []byte(body)); got != want {
		t.Fatalf("Sign = %s, want the documented %s", got, want)
	}
	v, _ := webhookverify.New(secret, webhookverify.WithClock(func() time.Time { return ts.Add(time.Minute) }))
	if got, err := v.Verify(headers(id, ts.Unix(), want), []byte(body)); err != nil || got != id {
		t.Fatalf("Verify = %q, %v", got, err)
	}
}
