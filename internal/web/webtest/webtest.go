// Package webtest drives Bokat's pages in a real headless Chromium for
// tests: it starts the browser (Debian's chromium) with page scripts
// disabled, runs steps with a deadline each, checks a page with axe-core
// (pinned, installed by CI into .tools/axe with npm) and at phone width, and
// takes screenshots at phone and desktop widths when asked to
// ($BOKAT_SCREENSHOTS, or CI=true).
package webtest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// Chromium starts a headless Chromium with a fresh profile, asking for
// Swedish pages and with page scripts disabled (the pages need none), and
// returns its browsing context; it skips the test when the machine has no
// Chromium. The context carries no timeout (a timeout on the first action
// would stop the browser): Do and Get derive one per step.
func Chromium(tb testing.TB) context.Context {
	tb.Helper()
	var path string
	for _, name := range []string{"chromium", "chromium-browser", "chromium-headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		tb.Skip("no chromium binary on PATH: install Debian's chromium package to run the browser test")
	}
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
		chromedp.Flag("accept-lang", "sv-SE,sv"),
		chromedp.UserDataDir(tb.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	tb.Cleanup(func() { cancelCtx(); cancelAlloc() })
	if err := chromedp.Do(ctx, scripts(false)); err != nil {
		tb.Fatalf("start chromium: %v", err)
	}
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
// when it is not installed.
func axeScript(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
	raw, err := os.ReadFile(filepath.Join(dir, AxePath))
	if err != nil {
		return ""
	}
	if !strings.Contains(string(raw[:min(len(raw), 200)]), AxeVersion) {
		tb.Fatalf("the axe-core in .tools is not %s: reinstall it (.ci/run does)", AxeVersion)
	}
	return string(raw)
}

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
// protocol, which the page's Content-Security-Policy does not govern. When
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
	// axe-core runs on timers, which stop while scripts are off: they are
	// on for the check only (the page has no script of its own to run).
	Do(tb, ctx, "inject axe-core", scripts(true), chromedp.Evaluate[chromedp.Void](script))
	defer Do(tb, ctx, "turn scripts off", scripts(false))
	// resultTypes: every violation keeps all its elements; passes and the
	// rest keep one each, which spares axe-core describing every element
	// that passed (most of its time on a page without findings).
	raw := Get(tb, ctx, "run axe-core", chromedp.Evaluate[[]byte](`axe.run(document, {runOnly: {type: "tag",
		values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]},
		resultTypes: ["violations"]}).then(r => r.violations)`,
		chromedp.EvalAwaitPromise))
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
