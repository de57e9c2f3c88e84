package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// feedServer is a provider's own calendar (iCalendar) served on loopback,
// which the provider subscribes to through the provider API; serve's
// calendar sync polls it. Its busy event moves every few fetches, so sync
// keeps finding changes.
type feedServer struct {
	url     string
	srv     *http.Server
	fetches atomic.Int64
}

func newFeedServer() (*feedServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	f := &feedServer{url: "http://" + ln.Addr().String() + "/provider.ics"}
	f.srv = &http.Server{Handler: http.HandlerFunc(f.serveHTTP), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = f.srv.Serve(ln) }()
	return f, nil
}

func (f *feedServer) serveHTTP(w http.ResponseWriter, r *http.Request) {
	n := f.fetches.Add(1)
	// A busy hour on a weekday morning 8 to 12 days ahead, moving by a day
	// every fifth fetch; and a fixed early-morning hour tomorrow.
	day := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, 8+int(n/5)%5)
	busy := day.Add(9 * time.Hour)
	early := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, 1).Add(4 * time.Hour)
	stamp := time.Now().UTC().Format("20060102T150405Z")
	var b strings.Builder
	b.WriteString("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//bokat-soak//feed//SV\r\n")
	for i, at := range []time.Time{busy, early} {
		fmt.Fprintf(&b, "BEGIN:VEVENT\r\nUID:soak-%d@soak.example\r\nDTSTAMP:%s\r\nDTSTART:%s\r\nDTEND:%s\r\nSUMMARY:Upptagen\r\nTRANSP:OPAQUE\r\nEND:VEVENT\r\n",
			i, stamp, at.Format("20060102T150405Z"), at.Add(time.Hour).Format("20060102T150405Z"))
	}
	b.WriteString("END:VCALENDAR\r\n")
	w.Header().Set("Content-Type", "text/calendar; charset=utf-8")
	_, _ = w.Write([]byte(b.String()))
}

func (f *feedServer) close() { _ = f.srv.Close() }

// subscribe adds the feed to the provider's calendars.
func (s *soak) subscribe(ctx context.Context) error {
	status, res := s.call(ctx, "provider_calendar_add", "POST", "/v1/provider/calendars", s.d.Provider.Token,
		map[string]any{"url": s.feed.url, "rule": "busy_only"}, "Idempotency-Key", s.key("calendar"))
	if status != 200 && status != 201 {
		return fmt.Errorf("subscribing the provider to the soak's calendar feed: %d %v", status, res)
	}
	c, _ := res["calendar"].(map[string]any)
	s.feedID, _ = c["feed_id"].(string)
	return nil
}

// calendarState reads the subscription's sync state from the provider API.
func (s *soak) calendarState(ctx context.Context) (synced bool, lastError string) {
	_, res := s.call(ctx, "provider_calendars", "GET", "/v1/provider/calendars", s.d.Provider.Token, nil)
	list, _ := res["calendars"].([]any)
	for _, c := range list {
		m, _ := c.(map[string]any)
		if m["feed_id"] != s.feedID {
			continue
		}
		synced = m["last_synced_at"] != nil && m["last_synced_at"] != ""
		lastError, _ = m["last_error"].(string)
	}
	return synced, lastError
}
