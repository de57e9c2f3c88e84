package httpapi

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/oauth2"

	"bokat"
	"bokat/internal/clocktest"
	"bokat/internal/oauth"
	"bokat/internal/ratelimit"
	"bokat/internal/ratelimit/redislimit"
	"bokat/internal/ratelimit/redistest"
)

// The OAuth budgets run on the API's limiter, in process and on Redis. The
// server trusts the loopback peer as a proxy, so each test's callers are
// told apart by X-Forwarded-For, as behind a load balancer.

// forEachOAuthLimiter runs fn with the in-process limiter and with Redis,
// each on a clock that stands still: the tests count budgets exactly, so
// no request may be refilled while a slow machine runs them.
func forEachOAuthLimiter(t *testing.T, fn func(t *testing.T, l oauth.Limiter)) {
	t.Run("memory", func(t *testing.T) {
		t.Parallel()
		fn(t, ratelimit.NewMemory(ratelimit.MemoryOptions{Now: newTestClock().Now}))
	})
	t.Run("redis", func(t *testing.T) {
		t.Parallel()
		fn(t, patientRedisLimiter(t, newTestClock()))
	})
}

// patientRedisLimiter is a Redis limiter on the test server whose quotas
// run on clk, on a patient client (see patientRedisClient).
func patientRedisLimiter(t *testing.T, clk *clocktest.Clock) *redislimit.Limiter {
	t.Helper()
	prefix := "bokat-test:" + strings.ToLower(rand.Text()[:12]) + ":"
	return redislimit.New(patientRedisClient(t, prefix), redislimit.Options{Prefix: prefix, Now: clk.Now})
}

// patientRedisClient is a client on the test server that waits long and
// never retries: the production client's 250 ms read timeout and one retry
// can run the script twice on a busy test machine, spending two requests
// for one, or give up and let a request through unchecked, and the tests
// count exactly. It deletes the keys under prefix when the test ends.
func patientRedisClient(tb testing.TB, prefix string) *redis.Client {
	tb.Helper()
	redistest.Require(tb)
	opts, err := redis.ParseURL(redisURL())
	if err != nil {
		tb.Fatal(err)
	}
	opts.ReadTimeout, opts.WriteTimeout, opts.MaxRetries = 10*time.Second, 10*time.Second, -1
	c := redis.NewClient(opts)
	if err := c.Ping(context.Background()).Err(); err != nil {
		tb.Fatalf("these tests need Redis at %s (set BOKAT_TEST_REDIS_URL): %v", redisURL(), err)
	}
	tb.Cleanup(func() {
		keys, _ := c.Keys(context.Background(), prefix+"*").Result()
		if len(keys) > 0 {
			c.Del(context.Background(), keys...)
		}
		c.Close()
	})
	return c
}

// newLimitedOAuthEnv is an OAuth server with the budgets, behind a trusted
// loopback proxy.
func newLimitedOAuthEnv(t *testing.T, l oauth.Limiter, limits oauth.Limits) *oauthEnv {
	t.Helper()
	trust := func(c *envConfig) {
		p, err := ParseTrustedProxies("127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		c.TrustedProxies = p
	}
	return newOAuthEnv(t, sqliteDB(t), oauthSetup{limiter: l, limits: &limits}, trust)
}

// browserAt is a browser whose requests come from the address ip.
func (e *oauthEnv) browserAt(ip string) *browser {
	b := e.browser()
	b.header = map[string]string{"X-Forwarded-For": ip}
	return b
}

// postFrom is e.post from the address ip.
func (e *oauthEnv) postFrom(ip, path string, form url.Values, basicID, basicSecret string) (int, map[string]any, http.Header) {
	e.t.Helper()
	return e.postWith(map[string]string{"X-Forwarded-For": ip}, path, form, basicID, basicSecret)
}

// retryAfter returns the Retry-After seconds of a refusal, failing unless
// it is a whole number of at least one.
func retryAfter(tb testing.TB, h http.Header) int {
	tb.Helper()
	n, err := strconv.Atoi(h.Get("Retry-After"))
	if err != nil || n < 1 {
		tb.Fatalf("Retry-After = %q, want whole seconds >= 1", h.Get("Retry-After"))
	}
	return n
}

// signInForm opens the sign-in page of conf from b and returns its form.
func signInForm(t *testing.T, b *browser, conf *oauth2.Config) url.Values {
	t.Helper()
	resp, body := b.get("/oauth/sign-in?" + authzQuery(conf.ClientID).Encode())
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("sign-in page: %d\n%s", resp.StatusCode, body)
	}
	return formOf(t, body, "/oauth/sign-in")
}

// TestSignInFloodFromOneAddress: 60 sign-ins for 60 e-mail addresses from
// one IP send only the IP's budget of codes (20 per hour by default); the
// rest are 429 with Retry-After, and other addresses are not affected.
func TestSignInFloodFromOneAddress(t *testing.T) {
	t.Parallel()
	forEachOAuthLimiter(t, func(t *testing.T, l oauth.Limiter) {
		limits := oauth.DefaultLimits()
		e := newLimitedOAuthEnv(t, l, limits)
		conf := e.newClient("Hemhjälpen AI", false)
		b := e.browserAt("203.0.113.7")
		form := signInForm(t, b, conf)
		refused := 0
		for i := range 60 {
			form.Set("email", fmt.Sprintf("flood%02d@example.se", i))
			resp, body := b.post("/oauth/sign-in", form, nil)
			switch resp.StatusCode {
			case http.StatusSeeOther:
			case http.StatusTooManyRequests:
				refused++
				retryAfter(t, resp.Header)
				if !strings.Contains(body, "För många förfrågningar") {
					t.Fatalf("refusal %d does not say why:\n%s", i, body)
				}
			default:
				t.Fatalf("sign-in %d: %d", i, resp.StatusCode)
			}
		}
		if sent := len(e.sender.all()); sent != limits.SignInIP.Quota || refused != 60-limits.SignInIP.Quota {
			t.Fatalf("60 sign-ins from one IP sent %d codes and refused %d; want %d sent", sent, refused, limits.SignInIP.Quota)
		}
		other := e.browserAt("198.51.100.20")
		f := signInForm(t, other, conf)
		f.Set("email", "someone@example.se")
		if resp, body := other.post("/oauth/sign-in", f, nil); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("a sign-in from another IP: %d\n%s", resp.StatusCode, body)
		}
	})
}

// TestSignInGlobalBudget: past the overall budget no code is sent, from
// any address.
func TestSignInGlobalBudget(t *testing.T) {
	t.Parallel()
	forEachOAuthLimiter(t, func(t *testing.T, l oauth.Limiter) {
		limits := oauth.DefaultLimits()
		limits.SignInGlobal.Quota = 3
		e := newLimitedOAuthEnv(t, l, limits)
		conf := e.newClient("Hemhjälpen AI", false)
		for i := range 4 {
			b := e.browserAt(fmt.Sprintf("192.0.2.%d", i+1))
			f := signInForm(t, b, conf)
			f.Set("email", fmt.Sprintf("user%d@example.se", i))
			resp, body := b.post("/oauth/sign-in", f, nil)
			if i < 3 && resp.StatusCode != http.StatusSeeOther {
				t.Fatalf("sign-in %d: %d", i, resp.StatusCode)
			}
			if i == 3 {
				if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(body, "för många koder just nu") {
					t.Fatalf("past the global budget: %d\n%s", resp.StatusCode, body)
				}
				retryAfter(t, resp.Header)
			}
		}
		if n := len(e.sender.all()); n != 3 {
			t.Fatalf("%d codes sent, want 3", n)
		}
	})
}

// TestSignInAttackerCannotLockOutUser: an attacker asking for codes for a
// user's address spends only the budget of (that address, the attacker's
// IP); the user, from another IP, still gets a code and signs in. The mail
// one address can receive stays bounded however many IPs ask.
func TestSignInAttackerCannotLockOutUser(t *testing.T) {
	t.Parallel()
	forEachOAuthLimiter(t, func(t *testing.T, l oauth.Limiter) {
		limits := oauth.DefaultLimits()
		e := newLimitedOAuthEnv(t, l, limits)
		conf := e.newClient("Hemhjälpen AI", false)
		const victim = "victim@example.se"

		attacker := e.browserAt("203.0.113.66")
		form := signInForm(t, attacker, conf)
		form.Set("email", victim)
		for i := range limits.SignInAddress.Quota {
			if resp, body := attacker.post("/oauth/sign-in", form, nil); resp.StatusCode != http.StatusSeeOther {
				t.Fatalf("attacker's code %d: %d Retry-After %s\n%s", i+1, resp.StatusCode, resp.Header.Get("Retry-After"), body)
			}
		}
		resp, body := attacker.post("/oauth/sign-in", form, nil)
		if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(body, "för många koder till den här adressen") {
			t.Fatalf("attacker past the per-address budget: %d\n%s", resp.StatusCode, body)
		}
		retryAfter(t, resp.Header)
		// Wrong guesses kill only the attacker's own code.
		resp, body = attacker.get("/oauth/sign-in/code?" + authzQuery(conf.ClientID).Encode())
		codeForm := formOf(t, body, "/oauth/sign-in/code")
		codeForm.Set("code", "00000000")
		for range oauth.SignInAttempts {
			attacker.post("/oauth/sign-in/code", codeForm, nil)
		}

		user := e.browserAt("198.51.100.20")
		authURL := conf.AuthCodeURL("s", oauth2.S256ChallengeOption(oauth2.GenerateVerifier()))
		consent := e.signIn(user, authURL, victim)
		if !strings.Contains(consent, victim) {
			t.Fatal("the user did not reach the consent page signed in")
		}

		// From many addresses, the address still receives at most
		// SignInSendLimit codes per window.
		for i := range 6 {
			b := e.browserAt(fmt.Sprintf("203.0.113.%d", 100+i))
			f := signInForm(t, b, conf)
			f.Set("email", victim)
			for range limits.SignInAddress.Quota {
				b.post("/oauth/sign-in", f, nil)
			}
		}
		n := 0
		for _, c := range e.sender.all() {
			if c.email == victim {
				n++
			}
		}
		if n != oauth.SignInSendLimit {
			t.Fatalf("%d codes sent to one address from 8 IPs, want the bound %d", n, oauth.SignInSendLimit)
		}
	})
}

// TestTokenEndpointThrottlesFailedClientAuthentication: 300 wrong client
// secrets from one IP get 401 for the IP's budget, then 429 slow_down with
// Retry-After, without their credentials being checked; the client still
// works from its own address. Failures from many IPs spend the client id's
// budget. /oauth/revoke shares the budgets.
func TestTokenEndpointThrottlesFailedClientAuthentication(t *testing.T) {
	t.Parallel()
	forEachOAuthLimiter(t, func(t *testing.T, l oauth.Limiter) {
		limits := oauth.DefaultLimits()
		e := newLimitedOAuthEnv(t, l, limits)
		conf := e.newClient("Hemhjälpen AI", false)
		form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"bkr_unknown"}}
		const attacker, client = "203.0.113.66", "198.51.100.20"

		unauthorized, limited := 0, 0
		for i := range 300 {
			status, body, h := e.postFrom(attacker, "/oauth/token", form, conf.ClientID, fmt.Sprintf("bks_guess%d", i))
			switch status {
			case http.StatusUnauthorized:
				checkTokenError(t, status, body, h, http.StatusUnauthorized, "invalid_client")
				unauthorized++
			case http.StatusTooManyRequests:
				checkTokenError(t, status, body, h, http.StatusTooManyRequests, "slow_down")
				retryAfter(t, h)
				limited++
			default:
				t.Fatalf("wrong secret %d: %d %v", i, status, body)
			}
		}
		if unauthorized != limits.AuthFailuresIP.Quota || limited != 300-limits.AuthFailuresIP.Quota {
			t.Fatalf("300 wrong secrets: %d answered 401 and %d 429; want %d 401", unauthorized, limited, limits.AuthFailuresIP.Quota)
		}
		// The attacker's address is refused even with the right secret, and at
		// the revocation endpoint too.
		status, body, h := e.postFrom(attacker, "/oauth/token", form, conf.ClientID, conf.ClientSecret)
		checkTokenError(t, status, body, h, http.StatusTooManyRequests, "slow_down")
		status, body, h = e.postFrom(attacker, "/oauth/revoke", url.Values{"token": {"bka_x"}}, conf.ClientID, conf.ClientSecret)
		checkTokenError(t, status, body, h, http.StatusTooManyRequests, "slow_down")
		// The client, from its own address, is authenticated.
		status, body, h = e.postFrom(client, "/oauth/token", form, conf.ClientID, conf.ClientSecret)
		checkTokenError(t, status, body, h, http.StatusBadRequest, "invalid_grant")

		// Failures from more addresses spend the client id's budget: then
		// every address is refused for that client id, and other clients
		// are not.
		failures := limits.AuthFailuresIP.Quota
		for ip := 1; failures < limits.AuthFailuresClient.Quota; ip++ {
			for range limits.AuthFailuresIP.Quota {
				if failures == limits.AuthFailuresClient.Quota {
					break
				}
				status, _, _ := e.postFrom(fmt.Sprintf("192.0.2.%d", ip), "/oauth/token", form, conf.ClientID, "bks_wrong")
				if status != http.StatusUnauthorized {
					t.Fatalf("failure %d: %d, want 401", failures+1, status)
				}
				failures++
			}
		}
		status, body, h = e.postFrom("192.0.2.200", "/oauth/revoke", url.Values{"token": {"bka_x"}}, conf.ClientID, "bks_wrong")
		checkTokenError(t, status, body, h, http.StatusTooManyRequests, "slow_down")
		other := e.newClient("Annan app", false)
		status, body, h = e.postFrom("192.0.2.200", "/oauth/token", form, other.ClientID, other.ClientSecret)
		checkTokenError(t, status, body, h, http.StatusBadRequest, "invalid_grant")
	})
}

// TestOAuthRequestBudgets: the pages spend a per-IP budget and the token
// endpoint a per-client one; both answer 429 with Retry-After in their
// own shape.
func TestOAuthRequestBudgets(t *testing.T) {
	t.Parallel()
	forEachOAuthLimiter(t, func(t *testing.T, l oauth.Limiter) {
		limits := oauth.DefaultLimits()
		limits.Pages = ratelimit.Policy{Name: "oauth-pages", Quota: 3, Window: time.Minute}
		limits.Token = ratelimit.Policy{Name: "oauth-token", Quota: 2, Window: time.Minute}
		e := newLimitedOAuthEnv(t, l, limits)
		conf := e.newClient("Hemhjälpen AI", false, bokat.ScopeBookingsRead)

		b := e.browserAt("203.0.113.9")
		for i := range 3 {
			if resp, _ := b.get("/oauth/sign-in?" + authzQuery(conf.ClientID).Encode()); resp.StatusCode != http.StatusOK {
				t.Fatalf("page %d: %d", i+1, resp.StatusCode)
			}
		}
		resp, body := b.get("/oauth/authorize?" + authzQuery(conf.ClientID).Encode())
		if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(body, "rate_limited") ||
			!strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			t.Fatalf("page past the budget: %d %s\n%s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
		retryAfter(t, resp.Header)
		if resp, _ := e.browserAt("203.0.113.10").get("/oauth/sign-in?" + authzQuery(conf.ClientID).Encode()); resp.StatusCode != http.StatusOK {
			t.Fatalf("another IP's page: %d", resp.StatusCode)
		}

		form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"bkr_unknown"}}
		for range 2 {
			status, body, h := e.postFrom("198.51.100.20", "/oauth/token", form, conf.ClientID, conf.ClientSecret)
			checkTokenError(t, status, body, h, http.StatusBadRequest, "invalid_grant")
		}
		status, tbody, h := e.postFrom("198.51.100.21", "/oauth/token", form, conf.ClientID, conf.ClientSecret)
		checkTokenError(t, status, tbody, h, http.StatusTooManyRequests, "slow_down")
		retryAfter(t, h)
	})
}

// TestOAuthBudgetsFailOpen: when Redis does not answer, the OAuth endpoints
// work unchecked, as the API does, and say so in a warning.
func TestOAuthBudgetsFailOpen(t *testing.T) {
	t.Parallel()
	c, err := redislimit.Dial("redis://127.0.0.1:1/0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	e := newLimitedOAuthEnv(t, redislimit.New(c, redislimit.Options{}), oauth.DefaultLimits())
	conf := e.newClient("Hemhjälpen AI", false)
	b := e.browserAt("203.0.113.7")
	e.signIn(b, conf.AuthCodeURL("s", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())), "open@example.se")
	status, body, h := e.postFrom("203.0.113.7", "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"bkr_x"}},
		conf.ClientID, "bks_wrong")
	checkTokenError(t, status, body, h, http.StatusUnauthorized, "invalid_client")
	if !strings.Contains(e.logs.String(), "rate limiter unavailable: OAuth requests pass unchecked") {
		t.Errorf("no warning logged:\n%s", e.logs.String())
	}
}

// TestDiscoveryDocumentsSpendReads: the OAuth discovery documents spend
// the caller's reads quota, as the OpenAPI document does.
func TestDiscoveryDocumentsSpendReads(t *testing.T) {
	t.Parallel()
	e := newOAuthEnv(t, sqliteDB(t), oauthSetup{}, withLimits(ratelimit.NewMemory(ratelimit.MemoryOptions{Now: newTestClock().Now}), smallLimits(10, 10, 2)))
	for _, path := range []string{"/.well-known/oauth-authorization-server", "/.well-known/oauth-protected-resource"} {
		resp, err := http.Get(e.http.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Header.Get("RateLimit-Policy") != `"reads";q=2;w=60` {
			t.Fatalf("%s: %d RateLimit-Policy %q", path, resp.StatusCode, resp.Header.Get("RateLimit-Policy"))
		}
	}
	resp, err := http.Get(e.http.URL + "/.well-known/oauth-authorization-server")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("third discovery read: %d, want 429", resp.StatusCode)
	}
	retryAfter(t, resp.Header)
}
