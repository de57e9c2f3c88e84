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

// testSecret is in the form issued now (standard base64 of 32 bytes, keyed
// with the decoded bytes); legacySecret in the form issued before (base64url,
// keyed with the string's bytes).
const (
	testSecret   = "whsec_P+8YMVaDDoyCJcqghaJMfNC11bENmVu4U3+pE2B9wKM="
	legacySecret = "whsec_q0Jd3TtZxW9k2mVnL5aP8rYcE1fH7gUoS4iB6vXzN0M"
)

// split returns the two signatures of a Webhook-Signature value made by
// Sign: the base64url one and the standard base64 one.
func split(sig string) (url, std string) {
	f := strings.Fields(sig)
	if len(f) != 2 || strings.HasSuffix(f[0], "=") || !strings.HasSuffix(f[1], "=") {
		panic("Sign did not return a base64url and a standard base64 signature: " + sig)
	}
	return f[0], f[1]
}

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
	goodURL, goodStd := split(good)
	other := webhookverify.Sign("whsec_"+strings.Repeat("A", 43)+"=", "msg-1", now, body)
	cases := []struct {
		name    string
		header  http.Header
		body    []byte
		want    error
		wantID  string
		options []webhookverify.Option
	}{
		{name: "valid", header: headers("msg-1", now.Unix(), good), body: body, wantID: "msg-1"},
		{name: "base64url signature alone", header: headers("msg-1", now.Unix(), goodURL), body: body, wantID: "msg-1"},
		{name: "standard base64 signature alone", header: headers("msg-1", now.Unix(), goodStd), body: body, wantID: "msg-1"},
		{name: "valid among several signatures", header: headers("msg-1", now.Unix(), other+" v2,abc "+goodStd), body: body, wantID: "msg-1"},
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
		{name: "unknown version", header: headers("msg-1", now.Unix(), "v2,"+strings.TrimPrefix(goodURL, "v1,")+" v2,"+strings.TrimPrefix(goodStd, "v1,")), body: body, want: webhookverify.ErrNoMatchingSignature},
		{name: "standard base64 with a character added", header: headers("msg-1", now.Unix(), goodStd+"x"), body: body, want: webhookverify.ErrNoMatchingSignature},
		{name: "standard base64 without its padding", header: headers("msg-1", now.Unix(), strings.TrimSuffix(withPlusOrSlash(t, goodStd), "=")), body: body, want: webhookverify.ErrNoMatchingSignature},
		{name: "base64url unused low bits flipped", header: headers("msg-1", now.Unix(), flipUnusedBits(goodURL)), body: body, want: webhookverify.ErrNoMatchingSignature},
		{name: "standard base64 unused low bits flipped", header: headers("msg-1", now.Unix(), flipUnusedBits(goodStd)), body: body, want: webhookverify.ErrNoMatchingSignature},
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

// flipUnusedBits returns the signature sig ("v1,<base64url>" or
// "v1,<standard base64>=") with the lowest unused bit of its last data
// character flipped: the same bytes to a lenient decoder, not the canonical
// encoding.
func flipUnusedBits(sig string) string {
	alphabet, enc, pad := "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", base64.RawURLEncoding, ""
	if strings.HasSuffix(sig, "=") {
		alphabet, enc, pad = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", base64.StdEncoding, "="
	}
	data := strings.TrimSuffix(sig, pad)
	i := strings.IndexByte(alphabet, data[len(data)-1])
	flipped := data[:len(data)-1] + string(alphabet[i^1]) + pad
	a, err1 := enc.DecodeString(strings.TrimPrefix(sig, "v1,"))
	b, err2 := enc.DecodeString(strings.TrimPrefix(flipped, "v1,"))
	if err1 != nil || err2 != nil || string(a) != string(b) {
		panic("flipUnusedBits changed the signature's bytes")
	}
	return flipped
}

// withPlusOrSlash returns sig, failing the test unless it holds a character
// only standard base64 has (so that without padding it is no base64url).
func withPlusOrSlash(tb testing.TB, sig string) string {
	tb.Helper()
	if !strings.ContainsAny(strings.TrimPrefix(sig, "v1,"), "+/") {
		tb.Fatalf("signature %s has no '+' or '/': choose another test body", sig)
	}
	return sig
}

// TestTheStandardWebhooksLibraryVerifiesUnchanged cross-checks Sign and
// Verify with the official Go library: a secret in the form issued now is
// used as is (new Webhook(secret)), and the headers are passed unchanged.
func TestTheStandardWebhooksLibraryVerifiesUnchanged(t *testing.T) {
	t.Parallel()
	std, err := standardwebhooks.NewWebhook(testSecret)
	if err != nil {
		t.Fatal(err)
	}
	v, err := webhookverify.New(testSecret)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for i, body := range [][]byte{[]byte(`{}`), []byte(`{"data":{"booking":{"id":"bk_1","slot_label":"tisdag 5 maj 08:00–11:00"}}}`), []byte("not json \x00\xff")} {
		id := "msg-" + strconv.Itoa(i)
		if err := std.Verify(body, headers(id, now.Unix(), webhookverify.Sign(testSecret, id, now, body))); err != nil {
			t.Errorf("body %d: the library rejects our delivery: %v", i, err)
		}
		theirs, err := std.Sign(id, now, body)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := v.Verify(headers(id, now.Unix(), theirs), body); err != nil || got != id {
			t.Errorf("body %d: we reject the library's signature: id %q err %v", i, got, err)
		}
		// The key really is the decoded bytes: keyed with the string's
		// bytes, the library finds no match.
		raw, _ := standardwebhooks.NewWebhookRaw([]byte(testSecret))
		if err := raw.Verify(body, headers(id, now.Unix(), webhookverify.Sign(testSecret, id, now, body))); err == nil {
			t.Errorf("body %d: the library keyed with the secret string's bytes accepted it", i)
		}
	}
}

// TestLegacySecretsKeepTheirKey checks that a secret issued before the
// Standard Webhooks form is still keyed with its string's bytes, so the
// library verifies its deliveries in its raw-key form, headers unchanged.
func TestLegacySecretsKeepTheirKey(t *testing.T) {
	t.Parallel()
	now := time.Now()
	body := []byte(`{"id":"msg-1"}`)
	sig := webhookverify.Sign(legacySecret, "msg-1", now, body)
	std, _ := standardwebhooks.NewWebhookRaw([]byte(legacySecret))
	if err := std.Verify(body, headers("msg-1", now.Unix(), sig)); err != nil {
		t.Fatalf("the library in raw-key form rejects a legacy delivery: %v", err)
	}
	v, err := webhookverify.New(legacySecret)
	if err != nil {
		t.Fatal(err)
	}
	url, stdSig := split(sig)
	for _, s := range []string{sig, url, stdSig} {
		if got, err := v.Verify(headers("msg-1", now.Unix(), s), body); err != nil || got != "msg-1" {
			t.Errorf("Verify(%s) = %q, %v", s, got, err)
		}
	}
	if _, err := v.Verify(headers("msg-1", now.Unix(), webhookverify.Sign(testSecret, "msg-1", now, body)), body); !errors.Is(err, webhookverify.ErrNoMatchingSignature) {
		t.Fatalf("a legacy verifier accepted another secret's signature: %v", err)
	}
}

// TestDocumentedVectors keeps the test vectors of docs/webhooks.md true.
func TestDocumentedVectors(t *testing.T) {
	t.Parallel()
	const (
		id   = "0196a6f0-3333-7000-8000-000000000001"
		body = `{"id":"0196a6f0-3333-7000-8000-000000000001","type":"booking.cancelled","data":{"booking":{"id":"bk_01HZX","status":"cancelled","provider_name":"Rörmokare Stockholm AB"}}}`
	)
	ts := time.Unix(1777881600, 0)
	for _, tc := range []struct{ name, secret, want string }{
		{name: "standard", secret: "whsec_MfKQ9r8GKYqrTwJSJ6QchjgNGPTFgzwe3GwxYmaHoXM=",
			want: "v1,CgYrh6okZJHiBb2F4buyQcPQAPSusayT1wL1ZBMeK2Y v1,CgYrh6okZJHiBb2F4buyQcPQAPSusayT1wL1ZBMeK2Y="},
		{name: "legacy", secret: "whsec_MfKQ9r8GKYqrTwJSJ6QchjgNGPTFgzwe3GwxYmaHoXM",
			want: "v1,tGK5WhXbRr0my5_w7hYClDYWBmKZZBOThncQESy2NSg v1,tGK5WhXbRr0my5/w7hYClDYWBmKZZBOThncQESy2NSg="},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := webhookverify.Sign(tc.secret, id, ts, []byte(body)); got != tc.want {
				t.Fatalf("Sign = %s, want the documented %s", got, tc.want)
			}
			v, _ := webhookverify.New(tc.secret, webhookverify.WithClock(func() time.Time { return ts.Add(time.Minute) }))
			if got, err := v.Verify(headers(id, ts.Unix(), tc.want), []byte(body)); err != nil || got != id {
				t.Fatalf("Verify = %q, %v", got, err)
			}
		})
	}
}
