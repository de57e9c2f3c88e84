package operator_test

import (
	"net/http"
	"testing"

	"bokat/internal/sqlstore/sqlstoretest"
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
			e.importNational(b, 10_000, 5)
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
