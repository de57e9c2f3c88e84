// Package redistest gives tests the Redis server they share.
//
// The tests that need Redis use the server at BOKAT_TEST_REDIS_URL, or at
// redis://127.0.0.1:6379/0 when it is unset. When that default server does
// not answer, they skip with a message, so that `go test ./...` passes on
// a machine without Redis; setting BOKAT_TEST_REDIS_URL says Redis is
// expected (CI sets it), and then a server that does not answer fails them.
package redistest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

const envURL = "BOKAT_TEST_REDIS_URL"

// URL is the Redis server of the tests.
func URL() string {
	if u := os.Getenv(envURL); u != "" {
		return u
	}
	return "redis://127.0.0.1:6379/0"
}

// Require returns when the test Redis answers a PING. When it does not,
// the test is skipped, or fails when BOKAT_TEST_REDIS_URL asks for Redis.
func Require(tb testing.TB) {
	tb.Helper()
	if err := ping(); err != nil {
		if os.Getenv(envURL) != "" {
			tb.Fatalf("%s=%s does not answer: %v", envURL, URL(), err)
			return
		}
		tb.Skipf("no Redis answers at %s (%v): skipping; set %s to require one", URL(), err, envURL)
	}
}

func ping() error {
	opts, err := redis.ParseURL(URL())
	if err != nil {
		return err
	}
	opts.MaxRetries = -1
	c := redis.NewClient(opts)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	return c.Ping(ctx).Err()
}
