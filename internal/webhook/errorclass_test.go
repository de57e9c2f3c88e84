package webhook

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"testing"
	"time"

	"bokat"
)

// TestErrorClassOfFailures pins what docs/webhooks.md says of error_class:
// a connection the receiver refuses (nothing listening) is "network", and
// "refused" is only a destination our guard refused at connect (a private
// or loopback address, a port other than 443).
func TestErrorClassOfFailures(t *testing.T) {
	t.Parallel()
	s := &Sender{limit: 8 * time.Second}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, closedErr := http.Get("http://" + addr + "/hook")
	if closedErr == nil {
		t.Fatal("a closed port answered")
	}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"the receiver refuses the connection", closedErr, bokat.WebhookErrorNetwork},
		{"the guard refuses the destination", &DialRefusedError{Addr: netip.MustParseAddrPort(addr), Reason: "a loopback address"}, bokat.WebhookErrorRefused},
		{"no answer in time", context.DeadlineExceeded, bokat.WebhookErrorTimeout},
		{"a TLS failure", errors.New("tls: failed to verify certificate"), bokat.WebhookErrorNetwork},
	}
	for _, tc := range tests {
		if got := errorClass(0, s.describe(tc.err)); got != tc.want {
			t.Errorf("%s (%v): error_class %q, want %q", tc.name, tc.err, got, tc.want)
		}
	}
}
