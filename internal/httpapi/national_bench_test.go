package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strconv"
	"testing"
	"time"

	"bokat/internal/schedule"
	"bokat/internal/sqlstore"
	"bokat/internal/supply"
)

// BenchmarkSearchHandlerNational is one POST /v1/booking-options through
// the whole handler stack, as BenchmarkSearchHandler, on the demo supply
// (113 45) and on a national supply (bokat supply generate --national, 40
// busy hours each) in dense Stockholm 113 45 and sparse Boden 961 40. The
// supply has BOKAT_BENCH_NATIONAL providers (default 10,000; issue 29's
// figures are at 50,000). Run the cases alternated in one process so their
// cpu-ns/op compare:
//
//	go test ./internal/httpapi/ -run '^$' -bench SearchHandlerNational -count 6
func BenchmarkSearchHandlerNational(b *testing.B) {
	n := 10000
	if v, err := strconv.Atoi(os.Getenv("BOKAT_BENCH_NATIONAL")); err == nil && v > 0 {
		n = v
	}
	demo := nationalBenchEnv(b, 0)
	national := nationalBenchEnv(b, n)
	for _, c := range []struct {
		name     string
		e        *testEnv
		postcode string
		city     string
	}{
		{"demo/113_45", demo, "113 45", "Stockholm"},
		{"national/113_45", national, "113 45", "Stockholm"},
		{"national/961_40", national, "961 40", "Boden"},
	} {
		b.Run(c.name, func(b *testing.B) {
			search := faucetSearch()
			search["location"] = map[string]any{"country_code": "SE", "postcode": c.postcode, "city": c.city}
			body, _ := json.Marshal(search)
			benchSearches(b, c.e.srv.Handler(), body)
		})
	}
}

// nationalBenchEnv is a server on the demo supply (n == 0) or on a national
// supply of n providers.
func nationalBenchEnv(b *testing.B, n int) *testEnv {
	b.Helper()
	e := sqliteEnv(b)
	if n == 0 {
		e.withDemoSupply()
	} else {
		cat, err := loadCatalog()
		if err != nil {
			b.Fatal(err)
		}
		var file bytes.Buffer
		if err := supply.Generate(&file, cat, supply.GenerateOptions{Providers: n, Seed: 1, From: schedule.DateOf(time.Now()),
			BusyHours: 40, National: true}); err != nil {
			b.Fatal(err)
		}
		if _, err := supply.Import(context.Background(), sqlstore.Bind[supply.Tx](e.db), cat, "national.yaml", file.Bytes(), time.Now()); err != nil {
			b.Fatal(err)
		}
	}
	return e
}
