package webtest

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
)

// Codes is the e-mail boundary of the sign-in pages in tests, their only
// stand-in: a code sender that keeps the codes it is asked to send.
type Codes struct {
	mu   sync.Mutex
	sent []SentCode
}

// SentCode is a sign-in code Codes was asked to send.
type SentCode struct{ Email, Code, Locale string }

// SendSignInCode keeps the code.
func (c *Codes) SendSignInCode(_ context.Context, email, code, locale string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sent = append(c.sent, SentCode{email, code, locale})
	return nil
}

// Last returns the last code sent to the address, and fails the test when
// none was.
func (c *Codes) Last(tb testing.TB, email string) string {
	tb.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(c.sent) - 1; i >= 0; i-- {
		if c.sent[i].Email == email {
			return c.sent[i].Code
		}
	}
	tb.Fatalf("no code was sent to %s", email)
	return ""
}

// Count is the number of codes sent.
func (c *Codes) Count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.sent)
}

// SignIn signs the tab in from the sign-in page open in it (the e-mail
// field #email, the code field #code, each in a form whose button is main
// button[type=submit]): it asks for a code for the address, enters the code
// codes kept for it, and waits for ready (the page signing in leads to).
func SignIn(tb testing.TB, ctx context.Context, codes *Codes, email string, ready chromedp.Action[chromedp.Void]) {
	tb.Helper()
	Do(tb, ctx, "ask for a code", Type(chromedp.ID("email"), email),
		chromedp.Click(chromedp.CSS("main button[type=submit]")), chromedp.WaitVisible(chromedp.ID("code")))
	Do(tb, ctx, "enter the code", Type(chromedp.ID("code"), codes.Last(tb, email)),
		chromedp.Click(chromedp.CSS("main button[type=submit]")), ready)
}

// Checker checks the states of the pages a browser test goes through.
type Checker struct {
	TB  testing.TB
	Ctx context.Context
	// Prefix starts the name of each screenshot.
	Prefix string
	// Photograph asks for the phone-width check and the screenshots
	// (Screenshots); a test that runs on each engine asks on one.
	Photograph bool
}

// Check checks the page state name with axe-core and, when c.Photograph,
// at phone width with screenshots named c.Prefix+name; it returns the
// page's main text, and fails the test for each of want the text lacks.
func (c Checker) Check(name string, want ...string) string {
	c.TB.Helper()
	Axe(c.TB, c.Ctx, name)
	if c.Photograph {
		Screenshots(c.TB, c.Ctx, c.Prefix+name)
	}
	text := Text(c.TB, c.Ctx)
	WantText(c.TB, name, text, want...)
	return text
}

// WantText fails the test for each of want the page's text lacks.
func WantText(tb testing.TB, page, text string, want ...string) {
	tb.Helper()
	for _, w := range want {
		if !strings.Contains(text, w) {
			tb.Errorf("%s page lacks %q; it reads:\n%s", page, w, text)
		}
	}
}
