package httpapi

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
)

// providerFuzzRoutes are the provider API's writes FuzzProviderAPIBodies
// sends bodies to.
var providerFuzzRoutes = []struct{ method, path string }{
	{"POST", "/v1/provider/blocks"},
	{"PUT", "/v1/provider/hours"},
	{"PUT", "/v1/provider/prices"},
	{"PUT", "/v1/provider/postcodes"},
	{"PUT", "/v1/provider/pause"},
	{"POST", "/v1/provider/bookings/bk_fuzz/flag"},
	{"POST", "/v1/provider/bookings/bk_fuzz/cancel"},
	{"POST", "/v1/provider/blocks/pb_x/remove"},
	{"POST", "/v1/provider/calendars"},
	{"PATCH", "/v1/provider/calendars/cfd_x"},
	{"DELETE", "/v1/provider/calendars/cfd_x"},
}

// FuzzProviderAPIBodies sends arbitrary bodies to every provider API write
// with the provider's own token. Properties: no answer is a server error;
// every answer matches the contract; a refused body writes nothing (the
// supply and calendar revisions and the provider's calendar subscriptions
// stand). Feeds may live on loopback, as in development.
func FuzzProviderAPIBodies(f *testing.F) {
	soon := time.Now().AddDate(0, 0, 30).Format("2006-01-02")
	for op, body := range []string{
		`{"kind":"hours","from":"` + soon + `","start":"08:00","end":"12:00","weeks":2,"note":"Kurs"}`,
		`{"weekly":{"weekdays":["08:00-17:00"]},"min_notice_minutes":120,"horizon_days":14,"dates":[{"date":"` + soon + `","closed":true}]}`,
		`{"services":[{"service_id":"vvs_install_faucet_standard","price_sek":1990}]}`,
		`{"postcodes":["111-118","113 45"]}`,
		`{"until":"` + soon + `"}`,
		`{"note":"Porten har ny kod."}`,
		`{"reason":"illness","notes":"Sjuk"}`,
		`{}`,
	} {
		f.Add(uint8(op), []byte(body))
	}
	f.Add(uint8(2), []byte(`{"services":[{"service_id":"vvs_install_faucet_standard","unit_price_sek":-1}]}`))
	f.Add(uint8(1), []byte(`{"weekly":{"monday":["24:00-08:00"]},"min_notice_minutes":-1,"horizon_days":0}`))
	f.Add(uint8(8), []byte(`{"url":"http://127.0.0.1:9/hemlig/a.ics","rule":"all_day_busy"}`))
	f.Add(uint8(8), []byte(`{"url":"webcal://127.0.0.1/hemlig/b.ics"}`))
	f.Add(uint8(8), []byte(`{"url":"ftp://127.0.0.1/c.ics","rule":"busy_only"}`))
	f.Add(uint8(8), []byte(`{"url":"https://user:pw@127.0.0.1/d.ics#x"}`))
	f.Add(uint8(9), []byte(`{"rule":"everything"}`))
	f.Add(uint8(9), []byte(`{"rule":"sometimes"}`))
	f.Add(uint8(10), []byte(`{}`))
	e := newTestEnv(f, sqlstoretest.Open(f, sqlstore.SQLite), allowPrivate).withDemoSupply()
	token := e.providerToken(apiProviderA)
	start := time.Now().Add(96 * time.Hour).Truncate(time.Hour)
	sqlstoretest.InsertBookingEntry(f, e.db, apiProviderA, "bk_fuzz", start, start.Add(time.Hour))
	n := 0
	f.Fuzz(func(t *testing.T, op uint8, body []byte) {
		rt := providerFuzzRoutes[int(op)%len(providerFuzzRoutes)]
		ctx := context.Background()
		supplyRev, calRev, err := e.db.Revisions(ctx)
		if err != nil {
			t.Fatal(err)
		}
		feeds, err := e.db.ProviderFeeds(ctx, apiProviderA)
		if err != nil {
			t.Fatal(err)
		}
		n++
		r, err := http.NewRequest(rt.method, e.http.URL+rt.path, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", "Bearer "+token)
		r.Header.Set("Idempotency-Key", fmt.Sprintf("fuzz-%d-%d", n, time.Now().UnixNano()))
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 500 {
			t.Fatalf("%s %s %q: %d %s", rt.method, rt.path, body, resp.StatusCode, raw)
		}
		if err := e.contract.ValidateResponse(ctx, r, resp.StatusCode, resp.Header, raw); err != nil {
			t.Fatalf("%s %s %q: the answer %d does not match the contract: %v\n%s", rt.method, rt.path, body, resp.StatusCode, err, raw)
		}
		if resp.StatusCode >= 400 {
			s2, c2, err := e.db.Revisions(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if s2 != supplyRev || c2 != calRev {
				t.Fatalf("a refused %s %s %q moved the revisions", rt.method, rt.path, body)
			}
			after, err := e.db.ProviderFeeds(ctx, apiProviderA)
			if err != nil {
				t.Fatal(err)
			}
			if len(after) != len(feeds) {
				t.Fatalf("a refused %s %s %q changed the calendars: %d, then %d", rt.method, rt.path, body, len(feeds), len(after))
			}
		}
	})
}
