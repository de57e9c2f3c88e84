package httpapi

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"testing"

	"bokat"
	"bokat/internal/clocktest"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
)

// TestServerRecoversWhenPostgreSQLComesBack takes the server's database away
// for real (no connections allowed, open ones terminated): requests answer
// 503 persistence_unavailable with Retry-After, and once the database
// accepts connections again the same server answers normally without a
// restart. It runs where the PostgreSQL engine is selected.
func TestServerRecoversWhenPostgreSQLComesBack(t *testing.T) {
	for _, engine := range sqlstoretest.Engines() {
		if engine != sqlstore.Postgres {
			continue
		}
		t.Run(string(engine), func(t *testing.T) {
			db := sqlstoretest.Open(t, engine)
			e := newTestEnv(t, db)
			ctx := context.Background()
			var name string
			if err := db.R().QueryRowContext(ctx, `SELECT current_database()`).Scan(&name); err != nil {
				t.Fatal(err)
			}
			admin, err := sql.Open("pgx", os.Getenv(sqlstoretest.PostgresURLEnv))
			if err != nil {
				t.Fatal(err)
			}
			defer admin.Close()
			exec := func(q string) {
				t.Helper()
				if _, err := admin.ExecContext(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			t.Cleanup(func() { admin.ExecContext(ctx, fmt.Sprintf(`ALTER DATABASE %s ALLOW_CONNECTIONS true`, name)) })

			path := "/v1/bookings/bkg_unknown"
			if r := e.do(request{Method: "GET", Path: path, Header: bearer(e.token)}); r.Status != 200 {
				t.Fatalf("before the outage: %d %s", r.Status, r.Body)
			}

			exec(fmt.Sprintf(`ALTER DATABASE %s ALLOW_CONNECTIONS false`, name))
			exec(fmt.Sprintf(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '%s' AND pid <> pg_backend_pid()`, name))
			r := e.do(request{Method: "GET", Path: path, Header: bearer(e.token)})
			checkProblem(t, r, 503, bokat.CodePersistenceUnavailable, path)
			if r.Header.Get("Retry-After") == "" {
				t.Error("503 without Retry-After")
			}
			body := validRequestBody()
			w := e.do(request{Method: "POST", Path: "/v1/requests", Body: body, Header: map[string]string{"Authorization": "Bearer " + e.token, "Idempotency-Key": "outage-1"}})
			checkProblemCode(t, w, 503, bokat.CodePersistenceUnavailable, "/v1/requests", bokat.RequestsContractVersion)

			exec(fmt.Sprintf(`ALTER DATABASE %s ALLOW_CONNECTIONS true`, name))
			clocktest.Wait(t, "the database back", func() bool {
				r = e.do(request{Method: "GET", Path: path, Header: bearer(e.token)})
				return r.Status == 200
			})
			if r.JSON["found"] != false {
				t.Fatalf("after the outage: %d %s", r.Status, r.Body)
			}
			// The write retried with the same key now goes through, once.
			w = e.do(request{Method: "POST", Path: "/v1/requests", Body: body, Header: map[string]string{"Authorization": "Bearer " + e.token, "Idempotency-Key": "outage-1"}})
			if w.Status != 201 {
				t.Fatalf("retried write after the outage: %d %s", w.Status, w.Body)
			}
		})
	}
}
