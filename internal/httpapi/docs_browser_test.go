package httpapi

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// TestDocsPageRendersOfflineInABrowser opens /docs in a real headless
// Chromium: the page shows every operation, webhook event and schema of the
// served document, every in-page link lands on an element of the page, and
// the browser asks for nothing but the page itself.
func TestDocsPageRendersOfflineInABrowser(t *testing.T) {
	t.Parallel()
	ctx := newChromium(t)
	e := sqliteEnv(t)
	var mu sync.Mutex
	var requested []string
	if err := chromedp.Listen(ctx, func(ev any) {
		if r, ok := ev.(*network.EventRequestWillBeSent); ok {
			mu.Lock()
			requested = append(requested, r.Request.URL)
			mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	run := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		stepCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := chromedp.Do(stepCtx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	nodes := func(sel string) []*chromedp.Node {
		t.Helper()
		stepCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		n, err := chromedp.Run(stepCtx, chromedp.Nodes(chromedp.CSSAll(sel)))
		if err != nil {
			t.Fatalf("nodes %s: %v", sel, err)
		}
		return n
	}

	run("open /docs", chromedp.Navigate(e.http.URL+"/docs"), chromedp.WaitVisible(chromedp.ID("schemas")))
	stepCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	title, err := chromedp.Run(stepCtx, chromedp.Text(chromedp.CSS("h1")))
	cancel()
	if err != nil || !strings.Contains(title, "Bokat public booking API") {
		t.Fatalf("h1 = %q, %v", title, err)
	}

	var doc struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Webhooks   map[string]json.RawMessage            `json:"webhooks"`
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(e.contract.JSON(), &doc); err != nil {
		t.Fatal(err)
	}
	ops := 0
	for _, methods := range doc.Paths {
		for m := range methods {
			if m != "parameters" {
				ops++
			}
		}
	}
	ids := map[string]bool{}
	for _, n := range nodes("[id]") {
		ids[n.AttributeValue("id")] = true
	}
	for name := range doc.Components.Schemas {
		if !ids["schema-"+name] {
			t.Errorf("no section for the schema %s", name)
		}
	}
	if got, want := len(nodes("section.op")), ops+len(doc.Webhooks)+len(doc.Components.Schemas); got != want {
		t.Errorf("%d sections, want %d (%d operations, %d webhook events, %d schemas)", got, want, ops, len(doc.Webhooks), len(doc.Components.Schemas))
	}
	if !ids["confirmBooking"] || !ids["webhook-booking.confirmed"] {
		t.Errorf("no section for confirmBooking or the booking.confirmed event")
	}
	links := nodes(`a[href^="#"]`)
	if len(links) < ops {
		t.Fatalf("%d in-page links, want at least one per operation (%d)", len(links), ops)
	}
	for _, a := range links {
		if href := a.AttributeValue("href"); !ids[strings.TrimPrefix(href, "#")] {
			t.Errorf("link %s leads nowhere on the page", href)
		}
	}

	// Following a link from the contents moves to its section.
	run("follow a link", chromedp.Click(chromedp.CSS(`nav a[href="#confirmBooking"]`)))
	stepCtx, cancel = context.WithTimeout(ctx, 30*time.Second)
	loc, err := chromedp.Run(stepCtx, chromedp.Location())
	cancel()
	if err != nil || !strings.HasSuffix(loc, "/docs#confirmBooking") {
		t.Errorf("location after the click = %q, %v", loc, err)
	}

	mu.Lock()
	defer mu.Unlock()
	for _, u := range requested {
		if u != e.http.URL+"/docs" {
			t.Errorf("the page asked for %s: it must load nothing else", u)
		}
	}
	if len(requested) == 0 {
		t.Error("no request was seen: the listener saw nothing")
	}
}

// TestDocsPageIsSelfContained: /docs is one HTML page under a
// Content-Security-Policy that lets it load nothing, and it has no script,
// stylesheet link or embedded resource to load.
func TestDocsPageIsSelfContained(t *testing.T) {
	t.Parallel()
	e := sqliteEnv(t)
	r := e.do(request{Method: "GET", Path: "/docs", NoValidate: true})
	if r.Status != 200 || r.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("GET /docs: %d %s", r.Status, r.Header.Get("Content-Type"))
	}
	if csp := r.Header.Get("Content-Security-Policy"); !strings.HasPrefix(csp, "default-src 'none';") || strings.Contains(csp, "script-src") {
		t.Errorf("Content-Security-Policy = %q", csp)
	}
	page := strings.ToLower(string(r.Body))
	for _, bad := range []string{"<script", "<link", "src=", "@import", "url("} {
		if strings.Contains(page, bad) {
			t.Errorf("the page contains %q", bad)
		}
	}
	if !strings.Contains(page, `<a href="#schema-confirmrequest">confirmrequest</a>`) {
		t.Error("the confirm operation does not link its request schema")
	}
}
