package redistest

import (
	"net"
	"strings"
	"testing"
)

// fakeTB records how Require ended a test.
type fakeTB struct {
	testing.TB
	skipped, failed string
}

func (f *fakeTB) Helper()                           {}
func (f *fakeTB) Skipf(format string, args ...any)  { f.skipped = format }
func (f *fakeTB) Fatalf(format string, args ...any) { f.failed = format }

// deadURL is a Redis URL on a port nothing listens on.
func deadURL(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "redis://" + addr + "/0"
}

func TestRequireFailsWhenRedisIsAskedForAndDoesNotAnswer(t *testing.T) {
	t.Setenv(envURL, deadURL(t))
	var f fakeTB
	Require(&f)
	if f.failed == "" || f.skipped != "" {
		t.Fatalf("failed %q, skipped %q: want a failure", f.failed, f.skipped)
	}
}

func TestRequirePassesWhenRedisAnswers(t *testing.T) {
	Require(t) // skips here without a Redis
	var f fakeTB
	Require(&f)
	if f.failed != "" || f.skipped != "" {
		t.Fatalf("failed %q, skipped %q: want neither", f.failed, f.skipped)
	}
	if !strings.HasPrefix(URL(), "redis") {
		t.Fatalf("URL() = %q", URL())
	}
}
