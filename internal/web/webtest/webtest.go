// Package webtest drives Bokat's pages in a real headless Chromium for
// tests: it gives each test a tab, like new, of the test binary's one
// browser (Debian's chromium-headless-shell, or its chromium where the
// shell is not installed) with page scripts disabled, runs steps with a
// deadline each, checks a page with axe-core (pinned, installed by CI into
// .tools/axe with npm) and at phone width, and takes screenshots at phone
// and desktop widths when asked to ($BOKAT_SCREENSHOTS, or CI=true). It
// also holds what the page tests share: the sign-in code sender, the
// sign-in steps and the checks of each page state.
package webtest

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// Main runs the package's tests and then stops the Chromium they shared;
// a package whose tests call Chromium runs them through it:
//
//	func TestMain(m *testing.M) { os.Exit(webtest.Main(m)) }
func Main(m *testing.M) int {
	shared.mu.Lock()
	shared.main = true
	shared.mu.Unlock()
	defer shared.stop()
	return m.Run()
}

// shared is the one headless Chromium of the test binary, started by the
// first test that asks for a tab and stopped by Main when the tests are
// done. Its tabs are kept for later tests: a Chromium costs about two
// seconds of CPU to start and settle, a tab in a window and browser context
// of its own about one, and a tab made like new for the next test a few
// milliseconds.
var shared browser

// disabledFeatures are Chromium features the tests turn off because they
// cost CPU and no test uses them; none changes how a page is laid out,
// painted or checked.
var disabledFeatures = []string{
	// The address bar's drop-down, drawn by pages of Chromium's own
	// (chrome://omnibox-popup.top-chrome): two or three renderer processes
	// for every window, each a second of CPU to start, and a few percent
	// of a core each while they idle. Headless tabs have no address bar
	// anyone types in.
	"WebUIOmniboxPopup", "WebUIOmniboxAimPopup",
	// A new renderer process, or a new document host, for navigations
	// within one site (kept for the back/forward cache and for isolating
	// sites from each other): a test's tab stays on its own test server,
	// and never goes back. Tabs in different browser contexts still never
	// share a process.
	"BackForwardCache", "ProactivelySwapBrowsingInstance", "RenderDocument",
	"site-per-process", "IsolateOrigins", "SpareRendererForSitePerProcess", "Prerender2",
	"Translate",
}

// browser is a Chromium that tests open tabs in.
type browser struct {
	mu      sync.Mutex
	main    bool            // Main runs the tests, and stops the browser after them
	started bool            // start ran: ctx or err is set
	ctx     context.Context // the browser's first tab, which holds it open
	cancel  context.CancelFunc
	err     error
	idle    []tab // tabs made like new, waiting for a test
}

// tab is a tab of the shared browser in a browser context of its own.
type tab struct {
	ctx   context.Context
	close context.CancelFunc
}

// chromiumNames are the Chromium binaries the tests look for on PATH, the
// first found taken. The headless shell comes first: Debian builds it from
// the same chromium source package, at the same version, with the same
// Blink and V8, without the browser's windows, address bar and their
// processes. The same pages give byte-identical screenshots in both, and
// the browser tests cost about a quarter less CPU in the shell (docs/
// decisions.md, "The browser tests in Chromium's headless shell").
var chromiumNames = []string{"chromium-headless-shell", "chromium", "chromium-browser"}

// chromiumPath is the Chromium binary on PATH, or "".
func chromiumPath() string {
	for _, name := range chromiumNames {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// browserContext returns the shared browser's context, starting it on the
// first call.
func (b *browser) browserContext(path string) (context.Context, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.main {
		return nil, errors.New("the package's TestMain does not run the tests through webtest.Main, which stops the shared Chromium")
	}
	if b.started {
		return b.ctx, b.err
	}
	b.started = true
	// The profile is a temporary folder of chromedp's, removed when the
	// browser stops. Each tab lives in a browser context of its own, so
	// tests share no cookies, storage or cache; windows of their own keep
	// every tab visible, and the flags keep a tab that is not in front
	// from being throttled.
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-background-timer-throttling", true),
		chromedp.Flag("disable-backgrounding-occluded-windows", true),
		chromedp.Flag("disable-renderer-backgrounding", true),
		chromedp.Flag("accept-lang", "sv-SE,sv"),
		chromedp.WindowSize(1280, 900),
		// The browser's own services a test never uses (chromedp's default
		// set, after Puppeteer's).
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-hang-monitor", true),
		chromedp.Flag("disable-ipc-flooding-protection", true),
		chromedp.Flag("disable-breakpad", true),
		chromedp.Flag("disable-client-side-phishing-detection", true),
		chromedp.Flag("metrics-recording-only", true),
		chromedp.Flag("password-store", "basic"),
		chromedp.Flag("use-mock-keychain", true),
		chromedp.Flag("disable-popup-blocking", true),
		chromedp.Flag("disable-prompt-on-repost", true),
		chromedp.Flag("safebrowsing-disable-auto-update", true),
		chromedp.Flag("disable-features", strings.Join(disabledFeatures, ",")),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	b.cancel = func() {
		// A graceful close lets Chromium reap its own processes.
		closeCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_ = chromedp.Cancel(closeCtx)
		cancelCtx()
		cancelAlloc()
	}
	if err := chromedp.Do(ctx); err != nil {
		b.err = fmt.Errorf("start chromium: %w", err)
		return nil, b.err
	}
	b.ctx = ctx
	return ctx, nil
}

// stop closes the idle tabs and stops the browser, if it was started.
func (b *browser) stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, t := range b.idle {
		t.close()
	}
	if b.cancel != nil {
		b.cancel()
	}
	b.started, b.ctx, b.cancel, b.err, b.idle = false, nil, nil, nil, nil
}

// take returns an idle tab, or opens a new one in a window and browser
// context of its own.
func (b *browser) take(path string) (tab, error) {
	browserCtx, err := b.browserContext(path)
	if err != nil {
		return tab{}, err
	}
	b.mu.Lock()
	if n := len(b.idle); n > 0 {
		t := b.idle[n-1]
		b.idle = b.idle[:n-1]
		b.mu.Unlock()
		return t, nil
	}
	b.mu.Unlock()
	ctx, cancel := chromedp.NewContext(browserCtx, chromedp.WithNewBrowserContext())
	if err := chromedp.Do(ctx, scripts(false)); err != nil {
		cancel()
		return tab{}, fmt.Errorf("open a tab: %w", err)
	}
	return tab{ctx: ctx, close: cancel}, nil
}

// give makes the tab like new (blank, no cookies, cache or history, no
// emulated device, scripts disabled) and keeps it for the next test; a tab
// that cannot be made like new is closed.
func (b *browser) give(t tab) {
	ctx, cancel := context.WithTimeout(t.ctx, 30*time.Second)
	defer cancel()
	err := chromedp.Do(ctx, chromedp.Navigate("about:blank"),
		call(network.ClearBrowserCookies, cdp.Empty{}), call(network.ClearBrowserCache, cdp.Empty{}),
		call(page.ResetNavigationHistory, cdp.Empty{}), call(emulation.ClearDeviceMetricsOverride, cdp.Empty{}),
		call(emulation.SetTouchEmulationEnabled, emulation.SetTouchEmulationEnabledParams{}), scripts(false))
	b.mu.Lock()
	defer b.mu.Unlock()
	if err != nil || b.ctx == nil {
		t.close()
		return
	}
	b.idle = append(b.idle, t)
}

// call is an action that sends one DevTools command to the tab.
func call[P any](cmd cdp.Command[P, cdp.Empty], params P) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
		_, err := cdp.Call(ctx, target, cmd, params)
		return err
	})
}

// Type types text into the visible field sel finds as chromedp.SendKeys
// does — focused (DOM.focus, which leaves the caret at the start of what
// the field holds), the text then entered at the caret — but as one
// insertion of text (Input.insertText) instead of three key events per
// character: about 3 ms for a field of 30 characters against 85 ms. The
// pages run no script, so no key event is missed; a line break in a text
// area is inserted as one.
func Type[S chromedp.Selectable](sel S, text string) chromedp.Action[chromedp.Void] {
	focus := chromedp.Focus(sel, chromedp.NodeVisible)
	return chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
		if _, err := focus(ctx, target); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, target, input.InsertText, input.InsertTextParams{Text: text})
		return err
	})
}

// Chromium gives the test a tab of the test binary's headless Chromium
// (Debian's chromium-headless-shell or chromium, started on the first
// call) that is like a new tab in a fresh profile: its own cookies, cache
// and history, none left by an earlier test; Swedish pages asked for, page
// scripts disabled (the pages need none), the desktop viewport. The tab
// goes back to the browser when the test ends, with the test's context
// cancelled (and so its listeners gone). It skips the test when the machine has no Chromium, and fails it
// when the package's TestMain does not call Main. The context carries no
// timeout: Do and Get derive one per step.
func Chromium(tb testing.TB) context.Context {
	tb.Helper()
	path := chromiumPath()
	if path == "" {
		tb.Skip("no chromium binary on PATH: install Debian's chromium-headless-shell (or chromium) package to run the browser test")
	}
	t, err := shared.take(path)
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.ctx)
	tb.Cleanup(func() {
		cancel()
		shared.give(t)
	})
	return ctx
}

// scripts turns the page's script execution on or off.
func scripts(on bool) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
		_, err := cdp.Call(ctx, target, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: !on})
		return err
	})
}

// Do runs the steps within 30 s and fails the test with what on error.
func Do(tb testing.TB, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	tb.Helper()
	stepCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(stepCtx, steps...); err != nil {
		tb.Fatalf("%s: %v", what, err)
	}
}

// Get runs one action within 30 s and returns its value.
func Get[T any](tb testing.TB, ctx context.Context, what string, action chromedp.Action[T]) T {
	tb.Helper()
	stepCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(stepCtx, action)
	if err != nil {
		tb.Fatalf("%s: %v", what, err)
	}
	return v
}

// Text is the text of the page's main element.
func Text(tb testing.TB, ctx context.Context) string {
	tb.Helper()
	return Get(tb, ctx, "read the page", chromedp.Text(chromedp.CSS("main")))
}

// AxeVersion is the pinned axe-core release, and AxePath its script in
// the checkout (.ci/run installs it with npm into a folder of its own, so
// that other packages installed into .tools do not prune it).
const (
	AxeVersion = "4.14.1"
	AxePath    = ".tools/axe/node_modules/axe-core/axe.min.js"
)

// axeScript returns axe-core's script from .tools/ of the checkout, or ""
// when it is not installed; the file is read once per test binary.
func axeScript(tb testing.TB) string {
	tb.Helper()
	script, err := loadAxe()
	if err != nil {
		tb.Fatal(err)
	}
	return script
}

var loadAxe = sync.OnceValues(func() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", nil
		}
		dir = parent
	}
	raw, err := os.ReadFile(filepath.Join(dir, AxePath))
	if err != nil {
		return "", nil
	}
	if !strings.Contains(string(raw[:min(len(raw), 200)]), AxeVersion) {
		return "", fmt.Errorf("the axe-core in .tools is not %s: reinstall it (.ci/run does)", AxeVersion)
	}
	return string(raw), nil
})

// axeRuns counts the times axe-core ran in this binary.
var axeRuns atomic.Int64

// runAxe runs axe-core on the tab's page and returns its violations.
func runAxe(tb testing.TB, ctx context.Context, script string) []byte {
	tb.Helper()
	axeRuns.Add(1)
	// axe-core runs on timers, which stop while scripts are off: they are
	// on for the check only (the page has no script of its own to run).
	Do(tb, ctx, "inject axe-core", scripts(true), chromedp.Evaluate[chromedp.Void](script))
	defer Do(tb, ctx, "turn scripts off", scripts(false))
	// resultTypes: every violation keeps all its elements; passes and the
	// rest keep one each, which spares axe-core describing every element
	// that passed (most of its time on a page without findings).
	return Get(tb, ctx, "run axe-core", chromedp.Evaluate[[]byte](`axe.run(document, {runOnly: {type: "tag",
		values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]},
		resultTypes: ["violations"]}).then(r => r.violations)`,
		chromedp.EvalAwaitPromise))
}

// axeResults holds axe-core's violations (the JSON runAxe returns) by the
// SHA-256 of the page state axeStateJS describes, for the test binary.
var axeResults sync.Map

// axeStateJS describes everything of the current page that axe-core's
// result depends on: the markup, with the values of hidden inputs left
// out (form tokens, which are random, and which neither the page nor its
// accessibility tree shows); the rules of every style sheet; the path,
// the viewport and the element in focus. The origin is left out (of the
// page and its style sheets): each test's server has a port of its own.
const axeStateJS = `(() => {
	const root = document.documentElement.cloneNode(true);
	for (const input of root.querySelectorAll('input[type=hidden]')) input.setAttribute("value", "");
	const sheets = [...document.styleSheets].map(s => (s.href ? new URL(s.href).pathname : "") + "\n" + [...s.cssRules].map(r => r.cssText).join("\n"));
	const focus = document.activeElement;
	return JSON.stringify([location.pathname + location.search, innerWidth, innerHeight, devicePixelRatio,
		focus === document.body ? "" : focus.outerHTML, root.outerHTML, sheets]);
})()`

// violation is one axe-core finding.
type violation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target []string `json:"target"`
	} `json:"nodes"`
}

// Axe checks the current page with axe-core (WCAG 2.x A and AA rules and
// best practices) and fails the test on any serious or critical violation;
// lesser ones are logged. axe-core is injected through the DevTools
// protocol, which the page's Content-Security-Policy does not govern. A
// page state the test binary has had checked already (the same markup,
// apart from hidden inputs' values, with the same style sheets, path,
// viewport and focus: the same flow on the other engine, mostly) is given
// that check's result, which fails or logs as it did. When
// axe-core is not installed the check is skipped, except in CI
// (CI=true), where that fails the test.
func Axe(tb testing.TB, ctx context.Context, page string) {
	tb.Helper()
	script := axeScript(tb)
	if script == "" {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("axe-core %s is not installed at %s: .ci/run installs it", AxeVersion, AxePath)
		}
		tb.Logf("%s: axe-core is not installed at %s; accessibility check skipped", page, AxePath)
		return
	}
	// A page state this binary has checked already (the same flow on the
	// other engine, mostly) gets that check's result again.
	state := sha256.Sum256([]byte(Get(tb, ctx, "the page's state", chromedp.Evaluate[string](axeStateJS))))
	var raw []byte
	if v, seen := axeResults.Load(state); seen {
		raw = v.([]byte)
	} else {
		raw = runAxe(tb, ctx, script)
		axeResults.Store(state, raw)
	}
	var found []violation
	if err := json.Unmarshal(raw, &found); err != nil {
		tb.Fatalf("axe-core result: %v", err)
	}
	for _, v := range found {
		var where []string
		for _, n := range v.Nodes {
			where = append(where, strings.Join(n.Target, " "))
		}
		msg := fmt.Sprintf("%s: axe-core %s (%s): %s at %s", page, v.ID, v.Impact, v.Help, strings.Join(where, ", "))
		if v.Impact == "serious" || v.Impact == "critical" {
			tb.Error(msg)
		} else {
			tb.Log(msg)
		}
	}
}

// Widths are the screenshot widths: a phone and a desktop.
var Widths = []int64{390, 1280}

// ScreenshotsEnv names the folder for screenshots; setting it asks for them.
const ScreenshotsEnv = "BOKAT_SCREENSHOTS"

// screenshotDir returns the folder screenshots go to, or "" when none are
// asked for: $BOKAT_SCREENSHOTS when set, bokat-screenshots in the
// temporary folder in CI (CI=true), else none: they cost the browser
// time, and a plain test run takes none.
func screenshotDir() string {
	if dir := os.Getenv(ScreenshotsEnv); dir != "" {
		return dir
	}
	if os.Getenv("CI") == "true" {
		return filepath.Join(os.TempDir(), "bokat-screenshots")
	}
	return ""
}

// Screenshots checks the current page at phone width, emulated as a phone
// (overlay scrollbars), and fails the test if it is wider than that (if it
// scrolls sideways). When screenshots are asked for ($BOKAT_SCREENSHOTS, or
// CI=true), it also saves full-page screenshots at each of Widths as
// DIR/NAME-WIDTH.png and returns their paths; else it returns none. The
// viewport is left at desktop width.
func Screenshots(tb testing.TB, ctx context.Context, name string) []string {
	tb.Helper()
	dir := screenshotDir()
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	var out []string
	for _, w := range Widths {
		viewport := chromedp.EmulateViewport(w, 900)
		if w < 800 {
			viewport = chromedp.EmulateViewport(w, 900, chromedp.EmulateMobile, chromedp.EmulateTouch)
		}
		Do(tb, ctx, "set the viewport", viewport)
		if w < 800 {
			if sw := Get(tb, ctx, "page width", chromedp.Evaluate[int64](`document.documentElement.scrollWidth`)); sw > w {
				tb.Errorf("%s at %d px scrolls sideways: the page is %d px wide", name, w, sw)
			}
		}
		if dir == "" {
			continue
		}
		shot := Get(tb, ctx, "screenshot", chromedp.FullScreenshot(100))
		if len(shot) < 1000 {
			tb.Fatalf("%s at %d px: %d bytes, want a screenshot", name, w, len(shot))
		}
		path := filepath.Join(dir, fmt.Sprintf("%s-%d.png", name, w))
		if err := os.WriteFile(path, shot, 0o644); err != nil {
			tb.Fatal(err)
		}
		out = append(out, path)
	}
	return out
}
