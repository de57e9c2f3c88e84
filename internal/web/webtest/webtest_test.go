package webtest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// TestTabsAreAloneAndAlike: tabs of the shared Chromium open side by side
// share no cookies (each is a fresh browser context), and a tab a later
// test is given keeps nothing of the earlier test's (cookies, an emulated
// phone); each asks for Swedish pages, has the desktop width and runs no
// page script.
func TestTabsAreAloneAndAlike(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen := "none"
		if c, err := r.Cookie("tab"); err == nil {
			seen = c.Value
		}
		if v := r.URL.Query().Get("set"); v != "" {
			http.SetCookie(w, &http.Cookie{Name: "tab", Value: v, Path: "/", MaxAge: 3600})
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html lang="sv"><head><title>Flik</title></head><body><main>
<p id="seen">%s</p><p id="lang">%s</p><p id="js">off</p><script>document.getElementById("js").textContent = "on"</script>
</main></body></html>`, seen, r.Header.Get("Accept-Language"))
	}))
	t.Cleanup(srv.Close)
	check := func(t *testing.T, name string, tab context.Context, cookie string) {
		t.Helper()
		Do(t, tab, "reload "+name, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.ID("seen")))
		read := func(id string) string { return Get(t, tab, "read #"+id, chromedp.Text(chromedp.ID(id))) }
		if got := read("seen"); got != cookie {
			t.Errorf("tab %s sent the cookie %q, want %q", name, got, cookie)
		}
		if got := read("lang"); !strings.HasPrefix(got, "sv-SE") {
			t.Errorf("tab %s asked for %q, want Swedish first", name, got)
		}
		if got := read("js"); got != "off" {
			t.Errorf("tab %s ran the page's script", name)
		}
		if w := Get(t, tab, "width", chromedp.Evaluate[int64](`window.innerWidth`)); w != 1280 {
			t.Errorf("tab %s is %d px wide, want 1280", name, w)
		}
	}
	t.Run("side by side", func(t *testing.T) {
		a, b := Chromium(t), Chromium(t)
		Do(t, a, "set a's cookie", chromedp.Navigate(srv.URL+"/?set=a"), chromedp.WaitVisible(chromedp.ID("seen")))
		Do(t, b, "set b's cookie", chromedp.Navigate(srv.URL+"/?set=b"), chromedp.WaitVisible(chromedp.ID("seen")))
		check(t, "a", a, "a")
		check(t, "b", b, "b")
		Do(t, a, "emulate a phone", chromedp.EmulateViewport(390, 900, chromedp.EmulateMobile, chromedp.EmulateTouch))
	})
	if n := len(shared.idle); n != 2 {
		t.Fatalf("%d tabs kept for later tests, want 2", n)
	}
	t.Run("later", func(t *testing.T) {
		check(t, "a later test's", Chromium(t), "none")
	})
}

// TestNoBrowserUIPages: a window of the shared Chromium opens none of
// Chromium's own pages beside the tab (such as the address bar's drop-down,
// which costs renderer processes for every window and CPU while idle).
func TestNoBrowserUIPages(t *testing.T) {
	ctx := Chromium(t)
	Chromium(t)
	infos := Get(t, ctx, "list the targets", chromedp.Action[[]*target.Info](func(ctx context.Context, tg *chromedp.Target) ([]*target.Info, error) {
		res, err := cdp.Call(ctx, tg, target.GetTargets, target.GetTargetsParams{})
		if err != nil {
			return nil, err
		}
		return res.TargetInfos, nil
	}))
	pages := 0
	for _, info := range infos {
		switch {
		case info.Type == "page":
			pages++
		case strings.HasPrefix(info.URL, "chrome://"):
			t.Errorf("the browser opened %s (%s)", info.URL, info.Type)
		}
	}
	if pages < 2 {
		t.Errorf("%d pages listed, want the two tabs at least", pages)
	}
}

// recorder is a testing.TB that keeps the errors reported to it.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (r *recorder) Error(args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprint(args...))
}

func (r *recorder) Errorf(format string, args ...any) { r.Error(fmt.Sprintf(format, args...)) }

// TestAxeAndWidthChecksFail proves the checks can fail: a page with an
// unlabelled field, an image without text and a fixed width wider than a
// phone is reported by both, whether screenshots are asked for or not; and
// screenshots are saved only when asked for.
func TestAxeAndWidthChecksFail(t *testing.T) {
	ctx := Chromium(t)
	if axeScript(t) == "" {
		t.Skip("axe-core is not installed at " + AxePath)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
		fmt.Fprint(w, `<!doctype html><html lang="sv"><head><title>Dålig</title></head><body><main>
<h1>Dålig sida</h1><form><input type="text" name="x"></form><div style="width:600px">bred</div>
<button type="submit"></button></main></body></html>`)
	}))
	t.Cleanup(srv.Close)
	Do(t, ctx, "open the bad page", chromedp.Navigate(srv.URL), chromedp.WaitVisible(chromedp.CSS("h1")))
	for _, asked := range []bool{false, true} {
		dir := t.TempDir()
		t.Setenv("CI", "")
		t.Setenv(ScreenshotsEnv, "")
		if asked {
			t.Setenv(ScreenshotsEnv, dir)
		}
		rec := &recorder{TB: t}
		Axe(rec, ctx, "bad")
		shots := Screenshots(rec, ctx, "webtest-bad")
		all := strings.Join(rec.errors, "\n")
		for _, want := range []string{"axe-core label (critical)", "axe-core button-name (critical)", "scrolls sideways"} {
			if !strings.Contains(all, want) {
				t.Errorf("screenshots asked for %v: the checks did not report %q; they reported:\n%s", asked, want, all)
			}
		}
		saved, err := filepath.Glob(filepath.Join(dir, "*.png"))
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int{false: 0, true: len(Widths)}[asked]; len(shots) != want || len(saved) != want {
			t.Errorf("screenshots asked for %v: returned %v, saved %v; want %d", asked, shots, saved, want)
		}
		for _, path := range shots {
			if raw, err := os.ReadFile(path); err != nil || !strings.HasPrefix(string(raw), "\x89PNG") {
				t.Errorf("%s is not a PNG (%v)", path, err)
			}
		}
	}
}

// TestAxeChecksEachPageStateOnce: axe-core runs again on a page whose markup
// changed, and a page state already checked (here on another server, with
// another form token) gets the earlier result, serious findings included.
func TestAxeChecksEachPageStateOnce(t *testing.T) {
	ctx := Chromium(t)
	if axeScript(t) == "" {
		t.Skip("axe-core is not installed at " + AxePath)
	}
	var bad atomic.Bool
	serve := func() *httptest.Server {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			field := `<label for="x">Namn</label><input id="x" type="text" name="x">`
			if bad.Load() {
				field = `<input type="text" name="x">`
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, `<!doctype html><html lang="sv"><head><title>Sida</title></head><body><main>
<h1>Sida</h1><form><input type="hidden" name="csrf_token" value="%d">%s</form></main></body></html>`, time.Now().UnixNano(), field)
		}))
		t.Cleanup(srv.Close)
		return srv
	}
	first, second := serve(), serve()
	check := func(srv *httptest.Server, wantRuns int64, wantLabel bool) {
		t.Helper()
		Do(t, ctx, "open the page", chromedp.Navigate(srv.URL+"/sida"), chromedp.WaitVisible(chromedp.CSS("h1")))
		before := axeRuns.Load()
		rec := &recorder{TB: t}
		Axe(rec, ctx, "sida")
		if got := axeRuns.Load() - before; got != wantRuns {
			t.Errorf("axe-core ran %d times, want %d", got, wantRuns)
		}
		if got := strings.Contains(strings.Join(rec.errors, "\n"), "axe-core label (critical)"); got != wantLabel {
			t.Errorf("the unlabelled field reported: %v, want %v (%q)", got, wantLabel, rec.errors)
		}
	}
	check(first, 1, false)
	check(second, 0, false)
	bad.Store(true)
	check(first, 1, true)
	check(second, 0, true)
}

// TestTypeLeavesTheTextInTheField: Type leaves the text in a field, before
// what it held (as chromedp.SendKeys), and a line break in a text area; a
// form posted after it sends that text.
func TestTypeLeavesTheTextInTheField(t *testing.T) {
	posted := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			posted <- r.PostFormValue("name") + "|" + r.PostFormValue("note")
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><html lang="sv"><head><title>Fält</title></head><body><main><form method="post">
<label for="name">Namn</label><input id="name" name="name" value="Anna ">
<label for="note">Notering</label><textarea id="note" name="note"></textarea>
<button id="send">Skicka</button></form></main></body></html>`)
	}))
	t.Cleanup(srv.Close)
	ctx := Chromium(t)
	Do(t, ctx, "load", chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.ID("name")))
	Do(t, ctx, "type", Type(chromedp.ID("name"), "Åkesson"), Type(chromedp.ID("note"), "Porten har ny kod.\nRing mig."))
	if got := Get(t, ctx, "name", chromedp.Value(chromedp.ID("name"))); got != "ÅkessonAnna " {
		t.Errorf("name field holds %q, want %q", got, "ÅkessonAnna ")
	}
	Do(t, ctx, "send", chromedp.Click(chromedp.ID("send")))
	select {
	case got := <-posted:
		if want := "ÅkessonAnna |Porten har ny kod.\r\nRing mig."; got != want {
			t.Errorf("the form posted %q, want %q", got, want)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the form was not posted")
	}
}
