package supply_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"bokat/internal/schedule"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/supply"
)

// generated returns a generated supply file of n providers with 40 busy
// hours each (see Generate).
func generated(tb testing.TB, n int, seed uint64) []byte {
	tb.Helper()
	var buf bytes.Buffer
	if err := supply.Generate(&buf, cat(tb), supply.GenerateOptions{Providers: n, Seed: seed, From: schedule.NewDate(2026, 11, 24), BusyHours: 40}); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkImport imports a generated supply (40 blocked periods per
// provider) into an empty store ("create"), and the same file again into
// the filled store ("unchanged"), on each test engine. Target (issue 16):
// 10,000 providers in at most 60 s on either engine.
//
//	go test ./internal/supply -run '^$' -bench Import -benchtime 1x
func BenchmarkImport(b *testing.B) {
	ctx := context.Background()
	now := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	for _, n := range []int{2000, 10000} {
		file := generated(b, n, 1)
		for _, engine := range sqlstoretest.Engines() {
			b.Run(fmt.Sprintf("%s/providers=%d/create", engine, n), func(b *testing.B) {
				for b.Loop() {
					b.StopTimer()
					db := sqlstoretest.Open(b, engine)
					b.StartTimer()
					res, err := supply.Import(ctx, sqlstore.Bind[supply.Tx](db), cat(b), "gen.yaml", file, now)
					if err != nil || len(res.Created) != n {
						b.Fatalf("import: %v, %s", err, res)
					}
				}
			})
			b.Run(fmt.Sprintf("%s/providers=%d/unchanged", engine, n), func(b *testing.B) {
				db := sqlstoretest.Open(b, engine)
				if _, err := supply.Import(ctx, sqlstore.Bind[supply.Tx](db), cat(b), "gen.yaml", file, now); err != nil {
					b.Fatal(err)
				}
				for b.Loop() {
					res, err := supply.Import(ctx, sqlstore.Bind[supply.Tx](db), cat(b), "gen.yaml", file, now)
					if err != nil || len(res.Unchanged) != n {
						b.Fatalf("import: %v, %s", err, res)
					}
				}
			})
		}
	}
}

// BenchmarkParse reads and validates a generated national supply of 2,000
// providers (40 busy hours each) provider by provider, as an import reads
// it.
//
//	go test ./internal/supply -run '^$' -bench Parse -benchmem
func BenchmarkParse(b *testing.B) {
	var buf bytes.Buffer
	if err := supply.Generate(&buf, cat(b), supply.GenerateOptions{Providers: 2000, Seed: 1, From: schedule.NewDate(2026, 11, 24),
		BusyHours: 40, National: true}); err != nil {
		b.Fatal(err)
	}
	file := buf.Bytes()
	b.SetBytes(int64(len(file)))
	for b.Loop() {
		providers, err := supply.Parse("gen.yaml", file, cat(b))
		if err != nil || len(providers) != 2000 {
			b.Fatalf("parse: %v", err)
		}
	}
}
