package web

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net/mail"
	"strings"
	"time"

	"bokat"
	"bokat/internal/auth"
	"bokat/internal/ratelimit"
)

// Sign-in by one-time e-mail code: a person enters an e-mail address,
// receives a code of CodeDigits digits (valid CodeTTL, CodeAttempts tries,
// at most SendLimit codes per address per SendWindow from every page
// together) and enters it in the same browser.
const (
	CodeTTL      = 10 * time.Minute
	CodeAttempts = 5
	// SendLimit codes at most are sent to one address per SendWindow, from
	// all requesting addresses together (a bound on the mail a victim can
	// be sent and on code guessing). Per requesting address the limiter
	// allows fewer (SendLimits.Address), so that one attacker cannot spend
	// a user's budget.
	SendLimit  = 20
	SendWindow = time.Hour
	CodeDigits = 8
)

// Hash domains of the sign-in machinery: the same pepper never yields
// equal hashes for two kinds.
const (
	domainSignInHandle = "signin_handle"
	domainSignInCode   = "signin_code"
	domainEmail        = "email"
	domainBrowser      = "browser"
)

// CodeSender delivers a sign-in code to an e-mail address. locale is "sv"
// or "en". Implementations must not log the address or the code.
type CodeSender interface {
	SendSignInCode(ctx context.Context, email, code, locale string) error
}

// SignInCode is a one-time e-mail sign-in code, stored hashed.
type SignInCode struct {
	// ID is the keyed hash of the handle in the browser's cookie.
	ID          string
	Email       string
	EmailHash   string
	BrowserHash string
	CodeHash    string
	Attempts    int
	CreatedAt   time.Time
	ExpiresAt   time.Time
}

// CodeTx is what the sign-in codes need of a write transaction. Lookups
// that find nothing return bokat.ErrNotFound.
type CodeTx interface {
	// SignInCodesSince counts the codes sent to the e-mail (by its hash)
	// since the instant.
	SignInCodesSince(ctx context.Context, emailHash string, since time.Time) (int, error)
	InsertSignInCode(ctx context.Context, c SignInCode) error
	// SpendSignInAttempt counts one attempt against an unconsumed,
	// unexpired code with attempts left and returns it with the attempts
	// spent so far, this one included.
	SpendSignInAttempt(ctx context.Context, id string, maxAttempts int, now time.Time) (SignInCode, error)
	// ConsumeSignInCode marks the code used; bokat.ErrNotFound when it
	// already was.
	ConsumeSignInCode(ctx context.Context, id string, now time.Time) error
}

// SendLimits are the limiter budgets of sending codes: per requesting IP,
// per (address, requesting IP) and overall.
type SendLimits struct {
	IP, Address, Global ratelimit.Policy
}

// Spender spends one request of key under a policy and returns zero when
// it is allowed, else the time until it will be.
type Spender func(ctx context.Context, p ratelimit.Policy, key string) time.Duration

// Codes issues and checks sign-in codes.
type Codes struct {
	Hasher *auth.Hasher
	// Sender delivers the codes; nil in development, where the log line
	// is the only way to read them.
	Sender CodeSender
	// Production turns off the development echo of codes to the log.
	Production bool
	Log        *slog.Logger
	Now        func() time.Time
}

// ErrSendLimit is returned by Send when the address was sent SendLimit
// codes within SendWindow.
var ErrSendLimit = errors.New("sign-in code send limit reached")

// Budget spends one code of the caller's budgets: per client IP, per
// (address, client IP), then overall. It returns the text key of the
// refusal ("err_rate", "too_many_codes" or "signin_busy") and its
// Retry-After, or a zero wait when a code may be sent. The address is keyed
// by its keyed hash, never in clear.
func (c *Codes) Budget(ctx context.Context, spend Spender, l SendLimits, email string) (string, time.Duration) {
	caller := ratelimit.Caller(ctx)
	if wait := spend(ctx, l.IP, caller); wait > 0 {
		return "err_rate", wait
	}
	if wait := spend(ctx, l.Address, c.Hasher.Hash(domainEmail, email)+"|"+caller); wait > 0 {
		return "too_many_codes", wait
	}
	if wait := spend(ctx, l.Global, "all"); wait > 0 {
		return "signin_busy", wait
	}
	return "", 0
}

// Send creates a code for the address, bound to the browser, stores it in
// a transaction of inTx (ErrSendLimit past SendLimit) and sends it. It
// returns the handle the browser keeps in a cookie.
func (c *Codes) Send(ctx context.Context, inTx func(func(CodeTx) error) error, email, lang, browser string) (string, error) {
	handle, code, err := c.store(ctx, inTx, email, browser)
	if err != nil {
		return "", err
	}
	if !c.Production {
		// Development only: the one log line that carries a secret.
		c.Log.InfoContext(ctx, "development sign-in code (never logged in production)", "code", code)
	}
	if c.Sender != nil {
		if err := c.Sender.SendSignInCode(ctx, email, code, lang); err != nil {
			return "", fmt.Errorf("code sender: %w", err)
		}
	}
	return handle, nil
}

// Decoy is Send for an address that may not sign in: the code is stored
// and spends the address's bound as a sent one would, so that entering
// codes for it reads exactly the same (attempts left, then a dead code),
// but it is neither sent nor logged, so nobody can know it.
func (c *Codes) Decoy(ctx context.Context, inTx func(func(CodeTx) error) error, email, browser string) (string, error) {
	handle, _, err := c.store(ctx, inTx, email, browser)
	return handle, err
}

// store creates and stores a code for the address, bound to the browser,
// and returns its handle and the code.
func (c *Codes) store(ctx context.Context, inTx func(func(CodeTx) error) error, email, browser string) (handle, code string, err error) {
	handle = auth.NewSecret("")
	if code, err = RandomDigits(CodeDigits); err != nil {
		return "", "", err
	}
	now := c.Now()
	id := c.Hasher.Hash(domainSignInHandle, handle)
	sc := SignInCode{
		ID:          id,
		Email:       email,
		EmailHash:   c.Hasher.Hash(domainEmail, email),
		BrowserHash: c.Hasher.Hash(domainBrowser, browser),
		CodeHash:    c.codeHash(id, code),
		CreatedAt:   now,
		ExpiresAt:   now.Add(CodeTTL),
	}
	err = inTx(func(tx CodeTx) error {
		n, err := tx.SignInCodesSince(ctx, sc.EmailHash, now.Add(-SendWindow))
		if err != nil {
			return err
		}
		if n >= SendLimit {
			return ErrSendLimit
		}
		return tx.InsertSignInCode(ctx, sc)
	})
	if err != nil {
		return "", "", err
	}
	return handle, code, nil
}

func (c *Codes) codeHash(id, code string) string {
	return c.Hasher.Hash(domainSignInCode, id+"\x00"+code)
}

// CodeCheck is the outcome of one attempt: the address the code was sent
// to when it matched (the code is then consumed), else how many attempts
// are left (0: the code is dead).
type CodeCheck struct {
	Email string
	Left  int
}

// Check spends one attempt of the code of handle, inside the caller's
// transaction, and consumes it when the code and the browser match. A wrong
// attempt counts even when the caller's transaction then signs nobody in:
// commit it.
func (c *Codes) Check(ctx context.Context, tx CodeTx, handle, browser, code string) (CodeCheck, error) {
	now := c.Now()
	id := c.Hasher.Hash(domainSignInHandle, handle)
	sc, err := tx.SpendSignInAttempt(ctx, id, CodeAttempts, now)
	if errors.Is(err, bokat.ErrNotFound) {
		return CodeCheck{}, nil
	}
	if err != nil {
		return CodeCheck{}, err
	}
	browserOK := subtle.ConstantTimeCompare([]byte(sc.BrowserHash), []byte(c.Hasher.Hash(domainBrowser, browser))) == 1
	codeOK := subtle.ConstantTimeCompare([]byte(sc.CodeHash), []byte(c.codeHash(id, NormalizeCode(code)))) == 1
	if !browserOK || !codeOK {
		return CodeCheck{Left: CodeAttempts - sc.Attempts}, nil
	}
	if err := tx.ConsumeSignInCode(ctx, id, now); errors.Is(err, bokat.ErrNotFound) {
		return CodeCheck{}, nil
	} else if err != nil {
		return CodeCheck{}, err
	}
	return CodeCheck{Email: sc.Email}, nil
}

// NormalizeEmail returns the address trimmed and in lower case, and
// whether it is a plain, valid address (no display name, a dotted domain,
// at most 254 characters).
func NormalizeEmail(raw string) (string, bool) {
	s := strings.TrimSpace(raw)
	if len(s) < 3 || len(s) > 254 {
		return "", false
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Name != "" || a.Address != s {
		return "", false
	}
	at := strings.LastIndexByte(s, '@')
	domain := s[at+1:]
	if at < 1 || !strings.Contains(domain, ".") || strings.HasPrefix(domain, ".") || strings.HasSuffix(domain, ".") ||
		strings.ContainsAny(s, " \t\r\n\"") {
		return "", false
	}
	return strings.ToLower(s), true
}

// NormalizeCode drops the spaces and dashes people type in codes.
func NormalizeCode(raw string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' || r == '\t' {
			return -1
		}
		return r
	}, strings.TrimSpace(raw))
}

// RandomDigits returns n uniformly random decimal digits.
func RandomDigits(n int) (string, error) {
	limit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
	v, err := rand.Int(rand.Reader, limit)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%0*d", n, v), nil
}
