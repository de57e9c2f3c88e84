package webhookverify_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"bokat/webhookverify"
)

// FuzzVerify feeds Verify arbitrary headers and bodies. Properties:
//   - it never panics, and every refusal is one of the package's errors,
//     the one the headers call for;
//   - it accepts a delivery only when one of the Webhook-Signature entries
//     is exactly one of the two signatures Bokat sends for that id,
//     timestamp text and body (base64url or standard base64, computed here
//     independently with crypto/hmac);
//   - sign → verify round-trips for any id and body;
//   - a valid signature with any one character changed never verifies.
func FuzzVerify(f *testing.F) {
	now := time.Unix(1_790_000_000, 0)
	ts := strconv.FormatInt(now.Unix(), 10)
	body := []byte(`{"id":"msg-1","type":"booking.cancelled"}`)
	good := webhookverify.Sign(testSecret, "msg-1", now, body)
	other := webhookverify.Sign("whsec_"+strings.Repeat("A", 43), "msg-1", now, body)
	// Seeds: the cases of TestVerify.
	f.Add("msg-1", ts, good, body, uint16(0), uint8(0))
	f.Add("msg-1", ts, other+" v2,abc "+good, body, uint16(7), uint8(1))
	f.Add("msg-1", strconv.FormatInt(now.Unix()-300, 10), webhookverify.Sign(testSecret, "msg-1", now.Add(-300*time.Second), body), body, uint16(20), uint8(2))
	f.Add("msg-1", strconv.FormatInt(now.Unix()-301, 10), webhookverify.Sign(testSecret, "msg-1", now.Add(-301*time.Second), body), body, uint16(3), uint8(3))
	f.Add("msg-1", strconv.FormatInt(now.Unix()+301, 10), webhookverify.Sign(testSecret, "msg-1", now.Add(301*time.Second), body), body, uint16(4), uint8(4))
	f.Add("msg-1", ts, good, []byte(`{"id": "msg-1", "type": "booking.cancelled"}`), uint16(5), uint8(5))
	f.Add("msg-2", ts, good, body, uint16(6), uint8(6))
	f.Add("msg-1", strconv.FormatInt(now.Unix()+1, 10), good, body, uint16(8), uint8(7))
	f.Add("msg-1", ts, "v2,"+strings.TrimPrefix(good, "v1,"), body, uint16(9), uint8(8))
	f.Add("msg-1", ts, stdOf(good)+"x", body, uint16(10), uint8(9))
	f.Add("", ts, good, body, uint16(11), uint8(10))
	f.Add("msg-1", ts, "", body, uint16(12), uint8(11))
	f.Add("msg-1", "2026-01-01T00:00:00Z", good, body, uint16(13), uint8(12))
	f.Add("msg-1", "+"+ts, good, []byte("not json \x00\xff"), uint16(14), uint8(13))

	v, err := webhookverify.New(testSecret, webhookverify.WithClock(func() time.Time { return now }))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, id, tsText, sigs string, body []byte, pos uint16, delta uint8) {
		h := http.Header{}
		h.Set("Webhook-Id", id)
		h.Set("Webhook-Timestamp", tsText)
		h.Set("Webhook-Signature", sigs)
		gotID, err := v.Verify(h, body)
		tsNum, tsErr := strconv.ParseInt(tsText, 10, 64)
		switch {
		case id == "" || tsText == "" || sigs == "":
			if !errors.Is(err, webhookverify.ErrMissingHeader) {
				t.Fatalf("Verify with an empty header = %v, want ErrMissingHeader", err)
			}
		case tsErr != nil:
			if !errors.Is(err, webhookverify.ErrBadTimestamp) {
				t.Fatalf("Verify with timestamp %q = %v, want ErrBadTimestamp", tsText, err)
			}
		case now.Unix()-tsNum > 300:
			if !errors.Is(err, webhookverify.ErrTimestampTooOld) {
				t.Fatalf("Verify with timestamp %d = %v, want ErrTimestampTooOld", tsNum, err)
			}
		case tsNum-now.Unix() > 300:
			if !errors.Is(err, webhookverify.ErrTimestampTooNew) {
				t.Fatalf("Verify with timestamp %d = %v, want ErrTimestampTooNew", tsNum, err)
			}
		case err == nil:
			if gotID != id {
				t.Fatalf("Verify returned id %q, want %q", gotID, id)
			}
			// Only the exact signature verifies. This needs strict
			// (canonical) base64url decoding: a signature whose unused low
			// bits in its last character differ decodes to the same bytes
			// and must still be refused (issue 11, item 4).
			wantURL, wantStd := independentSignatures(id, tsText, body)
			fields := " " + strings.Join(strings.Fields(sigs), " ") + " "
			if !strings.Contains(fields, " "+wantURL+" ") && !strings.Contains(fields, " "+wantStd+" ") {
				t.Fatalf("Verify accepted signatures %q; none is the exact signature %q or %q", sigs, wantURL, wantStd)
			}
		case !errors.Is(err, webhookverify.ErrNoMatchingSignature):
			t.Fatalf("Verify = %v, want nil or ErrNoMatchingSignature", err)
		}
		if err != nil && gotID != "" {
			t.Fatalf("Verify failed (%v) but returned id %q", err, gotID)
		}
		if id == "" {
			return
		}

		// Round trip: what Sign produces verifies, alone or among others.
		signed := webhookverify.Sign(testSecret, id, now, body)
		rt := http.Header{}
		rt.Set("Webhook-Id", id)
		rt.Set("Webhook-Timestamp", strconv.FormatInt(now.Unix(), 10))
		for _, header := range []string{signed, sigs + " " + signed} {
			rt.Set("Webhook-Signature", header)
			if got, err := v.Verify(rt, body); err != nil || got != id {
				t.Fatalf("Verify(Sign(...)) with signatures %q = %q, %v; want %q, nil", header, got, err, id)
			}
		}

		// A valid signature with one character changed to another base64url
		// character never verifies. As above, this holds only with strict
		// base64url decoding (issue 11, item 4): changing the last
		// character within its unused low bits must be refused too.
		const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
		urlSig, _ := split(signed)
		sig := []byte(strings.TrimPrefix(urlSig, "v1,"))
		i := int(pos) % len(sig)
		j := strings.IndexByte(alphabet, sig[i])
		sig[i] = alphabet[(j+1+int(delta)%63)%64]
		rt.Set("Webhook-Signature", "v1,"+string(sig))
		if got, err := v.Verify(rt, body); !errors.Is(err, webhookverify.ErrNoMatchingSignature) {
			t.Fatalf("Verify of a signature altered at character %d = %q, %v; want ErrNoMatchingSignature", i, got, err)
		}
	})
}

// independentSignatures computes the two signatures of the package
// documentation (base64url and standard base64) without using the package:
// the key of a whsec_ secret in the standard form is its decoded bytes.
func independentSignatures(id, ts string, body []byte) (url, std string) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(testSecret, "whsec_"))
	if err != nil {
		panic(err)
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + ts + "."))
	m.Write(body)
	sum := m.Sum(nil)
	return "v1," + base64.RawURLEncoding.EncodeToString(sum), "v1," + base64.StdEncoding.EncodeToString(sum)
}

// stdOf returns the standard base64 signature of a Webhook-Signature value
// made by Sign.
func stdOf(sig string) string {
	_, std := split(sig)
	return std
}
