package operator_test

import (
	"bytes"
	"context"
	"net/http"
	"testing"

	"bokat/internal/catalog"
	"bokat/internal/schedule"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
	"bokat/internal/supply"
)

// BenchmarkProvidersPage serves the console's providers list with a
// national supply of 10,000 providers in the store: the whole list (its
// first ProvidersShown), a search naming one provider, and those that need
// attention.
func BenchmarkProvidersPage(b *testing.B) {
	for _, engine := range sqlstoretest.Engines() {
		b.Run(string(engine), func(b *testing.B) {
			e := newEnv(b, sqlstoretest.Open(b, engine))
			e.invite(b, operatorEmail)
			cat, err := catalog.Load()
			if err != nil {
				b.Fatal(err)
			}
			var national bytes.Buffer
			if err := supply.Generate(&national, cat, supply.GenerateOptions{Providers: 10_000, Seed: 5, From: schedule.NewDate(2026, 3, 2),
				National: true}); err != nil {
				b.Fatal(err)
			}
			if _, err := supply.Import(context.Background(), sqlstore.Bind[supply.Tx](e.db), cat, "national.yaml", national.Bytes(),
				e.clock.Now()); err != nil {
				b.Fatal(err)
			}
			c := newClient(b, e.srv.URL)
			c.SignIn(e.sender, operatorEmail)
			for _, page := range []struct{ name, path string }{
				{"all", "/operator/providers"},
				{"search", "/operator/providers?q=prv_gen_07777"},
				{"attention", "/operator/providers?attention=1"},
			} {
				b.Run(page.name, func(b *testing.B) {
					for b.Loop() {
						if r := c.Get(page.path); r.Status != http.StatusOK {
							b.Fatalf("%s: %d", page.path, r.Status)
						}
					}
				})
			}
		})
	}
}
