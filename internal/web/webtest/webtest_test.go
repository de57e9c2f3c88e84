package webtest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
)

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
