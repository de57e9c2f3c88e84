package booking_test

import (
	"context"
	"testing"
)

// BenchmarkSearch is one search on the demo supply (SQLite), from the
// supply snapshot and the calendar read to six signed options.
func BenchmarkSearch(b *testing.B) {
	f := sqliteFixture(b, demoFile(), local(2026, 11, 23, 9, 0))
	q := query("vvs", "install_faucet", "113 45", "inom två veckor")
	ctx := context.Background()
	if n := len(f.run(b, q).Options); n != 6 {
		b.Fatalf("%d options, want 6", n)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.search.Search(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
}
