package provider_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"bokat/internal/provider"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
)

// BenchmarkBookingsPage500 renders the upcoming bookings page of a provider
// with 500 upcoming bookings through the pages' real handler and store,
// signed in (its first page: 200 rows and the link to the later ones), and
// reports the page's size (bytes/page) and rows shown besides the server
// time (ns/op). It measures, for the figures;
// it asserts no timing.
//
//	go test -run '^$' -bench BookingsPage500 ./internal/provider/
func BenchmarkBookingsPage500(b *testing.B) {
	for _, engine := range sqlstoretest.Engines() {
		b.Run(string(engine), func(b *testing.B) { benchmarkBookingsPage(b, sqlstoretest.Open(b, engine)) })
	}
}

func benchmarkBookingsPage(b *testing.B, db *sqlstore.DB) {
	{
		// The page limit still runs, with a quota the loop cannot reach
		// (the injected clock stands still).
		e := newPagesEnv(b, db, func(c *provider.PagesConfig) { c.Limits.Pages.Quota = 1 << 30 })
		e.seed(b)
		start := e.clock.Now().Add(72 * time.Hour)
		for i := range 499 { // and the seed's one upcoming booking
			s := start.Add(time.Duration(i) * 3 * time.Hour)
			sqlstoretest.InsertBookingEntry(b, e.db, providerA, fmt.Sprintf("bk_bench_%03d", i), s, s.Add(2*time.Hour))
		}
		br := e.browser(b)
		br.SignIn(e.sender, ownerA)
		cookies := br.Cookies("/provider/bookings")
		handler := e.srv.Config.Handler
		request := func() *httptest.ResponseRecorder {
			req := httptest.NewRequest(http.MethodGet, "/provider/bookings", nil)
			for _, c := range cookies {
				req.AddCookie(c)
			}
			rec := httptest.NewRecorder()
			handler.ServeHTTP(rec, req)
			return rec
		}
		first := request()
		if first.Code != http.StatusOK {
			b.Fatalf("bookings page: %d\n%s", first.Code, first.Body.String())
		}
		size, rows := first.Body.Len(), strings.Count(first.Body.String(), "/provider/bookings/bk_")
		b.ResetTimer()
		for b.Loop() {
			if rec := request(); rec.Code != http.StatusOK {
				b.Fatalf("bookings page: %d", rec.Code)
			}
		}
		b.ReportMetric(float64(size), "bytes/page")
		b.ReportMetric(float64(rows), "links/page")
	}
}
