// Package sqlstoretest gives tests a fresh, migrated store on each engine:
// a new SQLite file per test always, and a new PostgreSQL database per test
// when BOKAT_TEST_POSTGRES_URL is set, each cloned from a migrated template.
// BOKAT_TEST_ENGINES (comma-separated: sqlite,postgres) narrows the engines.
package sqlstoretest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"bokat"
	"bokat/internal/auth"
	"bokat/internal/sqlstore"
	"bokat/internal/webhook"
)

// PostgresURLEnv names the variable holding the PostgreSQL server URL used by tests.
const PostgresURLEnv = "BOKAT_TEST_POSTGRES_URL"

// Engines returns the engines the tests of this run cover.
func Engines() []sqlstore.Engine {
	var out []sqlstore.Engine
	want := strings.Split(os.Getenv("BOKAT_TEST_ENGINES"), ",")
	if want[0] == "" {
		want = []string{"sqlite", "postgres"}
	}
	if slices.Contains(want, "sqlite") {
		out = append(out, sqlstore.SQLite)
	}
	if slices.Contains(want, "postgres") && os.Getenv(PostgresURLEnv) != "" {
		out = append(out, sqlstore.Postgres)
	}
	return out
}

// ForEachEngine runs fn as a subtest on a fresh, migrated store of each engine.
func ForEachEngine(t *testing.T, fn func(t *testing.T, db *sqlstore.DB)) {
	t.Helper()
	engines := Engines()
	if len(engines) == 0 {
		t.Fatal("no test engine selected: check BOKAT_TEST_ENGINES and " + PostgresURLEnv)
	}
	for _, e := range engines {
		t.Run(string(e), func(t *testing.T) {
			fn(t, Open(t, e))
		})
	}
}

// Open returns a fresh, migrated store of the engine with a fresh Vault,
// closed and removed when the test ends.
func Open(tb testing.TB, engine sqlstore.Engine) *sqlstore.DB {
	tb.Helper()
	db := open(tb, URL(tb, engine), Vault(tb))
	// A no-op on a clone of a template, but it checks the clone's version.
	if err := db.Migrate(context.Background()); err != nil {
		tb.Fatalf("migrate %s store: %v", engine, err)
	}
	return db
}

// Reopen returns another store on the database of db, which Open or Reopen
// returned, with the vault v (nil: none), closed when the test ends: the
// database as a process holding other keys sees it.
func Reopen(tb testing.TB, db *sqlstore.DB, v *sqlstore.Vault) *sqlstore.DB {
	tb.Helper()
	u, ok := openURLs.Load(db)
	if !ok {
		tb.Fatal("sqlstoretest.Reopen: the store was not opened by sqlstoretest")
	}
	return open(tb, u.(string), v)
}

// openURLs holds the database URL of each store open returned.
var openURLs sync.Map // *sqlstore.DB -> string

func open(tb testing.TB, u string, v *sqlstore.Vault) *sqlstore.DB {
	tb.Helper()
	db, err := sqlstore.Open(context.Background(), u, sqlstore.WithVault(v))
	if err != nil {
		tb.Fatalf("open store: %v", err)
	}
	openURLs.Store(db, u)
	tb.Cleanup(func() {
		openURLs.Delete(db)
		db.Close()
	})
	return db
}

// Vault returns a contact vault under a fresh random secret key and blind
// index key, as serve builds from --secret-key and the token pepper.
func Vault(tb testing.TB, extraKeys ...[]byte) *sqlstore.Vault {
	tb.Helper()
	key, pepper := make([]byte, webhook.KeySize), make([]byte, 32)
	rand.Read(key)
	rand.Read(pepper)
	return VaultWith(tb, pepper, append([][]byte{key}, extraKeys...)...)
}

// VaultWith returns a contact vault sealing with keys (keys[0] seals) and
// indexing with pepper.
func VaultWith(tb testing.TB, pepper []byte, keys ...[]byte) *sqlstore.Vault {
	tb.Helper()
	ring, err := webhook.NewKeyring(keys...)
	if err != nil {
		tb.Fatalf("keyring: %v", err)
	}
	h, err := auth.NewHasher(pepper)
	if err != nil {
		tb.Fatalf("hasher: %v", err)
	}
	return &sqlstore.Vault{Keys: ring, Index: h.Hash}
}

// URL returns the --database URL of a fresh, migrated database of the
// engine for this test, cloned from the migrated template: a process
// opening it finds nothing to migrate. A test of migrating a new database
// names a new SQLite file itself.
func URL(tb testing.TB, engine sqlstore.Engine) string {
	tb.Helper()
	switch engine {
	case sqlstore.SQLite:
		return sqliteClone(tb)
	case sqlstore.Postgres:
		return postgresDatabase(tb)
	}
	tb.Fatalf("unknown engine %q", engine)
	return ""
}

var templateOnce sync.Map // template name -> *sync.Once-guarded error

// postgresDatabase creates a database cloned from a template migrated with the
// migrations of this binary, and drops it when the test ends.
func postgresDatabase(tb testing.TB) string {
	tb.Helper()
	base := os.Getenv(PostgresURLEnv)
	if base == "" {
		tb.Fatalf("%s is not set", PostgresURLEnv)
	}
	ctx := context.Background()
	admin, err := sql.Open("pgx", base)
	if err != nil {
		tb.Fatalf("open postgres admin connection: %v", err)
	}
	defer admin.Close()

	tmpl := templateName()
	onceAny, _ := templateOnce.LoadOrStore(tmpl, new(templateResult))
	res := onceAny.(*templateResult)
	res.once.Do(func() { res.err = ensureTemplate(ctx, admin, base, tmpl) })
	if res.err != nil {
		tb.Fatalf("prepare postgres template: %v", res.err)
	}

	name := "bokat_t_" + strings.ToLower(rand.Text()[:16])
	if _, err := admin.ExecContext(ctx, fmt.Sprintf(`CREATE DATABASE %s TEMPLATE %s`, name, tmpl)); err != nil {
		tb.Fatalf("create test database: %v", err)
	}
	tb.Cleanup(func() {
		a, err := sql.Open("pgx", base)
		if err != nil {
			return
		}
		defer a.Close()
		_, _ = a.ExecContext(context.Background(), fmt.Sprintf(`DROP DATABASE IF EXISTS %s WITH (FORCE)`, name))
	})
	return withDatabase(tb, base, name)
}

var sqliteTemplate templateResult

// sqliteClone returns the URL of a new SQLite file of the test, copied from
// a template file migrated with the migrations of this binary: copying a
// file is much cheaper than migrating one for every test.
func sqliteClone(tb testing.TB) string {
	tb.Helper()
	sqliteTemplate.once.Do(func() { sqliteTemplate.path, sqliteTemplate.err = ensureSQLiteTemplate(context.Background()) })
	if sqliteTemplate.err != nil {
		tb.Fatalf("prepare sqlite template: %v", sqliteTemplate.err)
	}
	raw, err := os.ReadFile(sqliteTemplate.path)
	if err != nil {
		tb.Fatalf("read sqlite template: %v", err)
	}
	path := filepath.Join(tb.TempDir(), "bokat.db")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		tb.Fatalf("clone sqlite template: %v", err)
	}
	return "sqlite:" + path
}

// ensureSQLiteTemplate returns the template file, building it unless a test
// process built it before. Like the PostgreSQL template it is named by the
// migrations' content, so a changed migration gets a new one; it is one
// self-contained file (no write-ahead log) that appears whole or not at all.
func ensureSQLiteTemplate(ctx context.Context) (string, error) {
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("bokat-test-templates-%d", os.Getuid()))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	final := filepath.Join(dir, templateName()+".db")
	if _, err := os.Stat(final); err == nil {
		return final, nil
	}
	build, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(build)
	src := filepath.Join(build, "bokat.db")
	db, err := sqlstore.Open(ctx, "sqlite:"+src)
	if err != nil {
		return "", err
	}
	err = db.Migrate(ctx)
	db.Close()
	if err != nil {
		return "", err
	}
	conn, err := sql.Open("sqlite", "file:"+src)
	if err != nil {
		return "", err
	}
	built := filepath.Join(build, "template.db")
	_, err = conn.ExecContext(ctx, `VACUUM INTO ?`, built)
	conn.Close()
	if err != nil {
		return "", fmt.Errorf("write the template: %w", err)
	}
	// Test processes of several packages run at once: a rename is atomic.
	return final, os.Rename(built, final)
}

type templateResult struct {
	once sync.Once
	path string // SQLite only
	err  error
}

// templateName depends on the embedded migrations' content, so a changed
// migration gets a new template instead of a stale one.
func templateName() string {
	h := sha256.New()
	_ = fs.WalkDir(sqlstore.MigrationFiles(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := fs.ReadFile(sqlstore.MigrationFiles(), path)
		h.Write([]byte(path))
		h.Write(b)
		return nil
	})
	return "bokat_tmpl_" + hex.EncodeToString(h.Sum(nil))[:16]
}

func ensureTemplate(ctx context.Context, admin *sql.DB, base, tmpl string) error {
	conn, err := admin.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	// Test processes of several packages run at once: one of them builds the template.
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock(7426001)`); err != nil {
		return err
	}
	defer conn.ExecContext(context.Background(), `SELECT pg_advisory_unlock(7426001)`)
	var exists bool
	if err := conn.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, tmpl).Scan(&exists); err != nil {
		return err
	}
	if exists {
		return nil
	}
	building := tmpl + "_b"
	_, _ = conn.ExecContext(ctx, fmt.Sprintf(`DROP DATABASE IF EXISTS %s WITH (FORCE)`, building))
	if _, err := conn.ExecContext(ctx, fmt.Sprintf(`CREATE DATABASE %s`, building)); err != nil {
		return err
	}
	u, err := databaseURL(base, building)
	if err != nil {
		return err
	}
	mctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	db, err := sqlstore.Open(mctx, u)
	if err != nil {
		return err
	}
	err = db.Migrate(mctx)
	db.Close()
	if err != nil {
		return err
	}
	_, err = conn.ExecContext(ctx, fmt.Sprintf(`ALTER DATABASE %s RENAME TO %s`, building, tmpl))
	return err
}

func withDatabase(tb testing.TB, base, name string) string {
	tb.Helper()
	u, err := databaseURL(base, name)
	if err != nil {
		tb.Fatalf("build database URL: %v", err)
	}
	return u
}

func databaseURL(base, name string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	u.Path = "/" + name
	return u.String(), nil
}

// InsertBookingEntry stores a minimal confirmed booking of the provider over
// [start, end) with its active calendar entry "cal_<bookingID>", for tests
// that need a provider to be busy. The provider must exist.
func InsertBookingEntry(tb testing.TB, db *sqlstore.DB, providerID, bookingID string, start, end time.Time) {
	tb.Helper()
	if err := TryInsertBookingEntry(db, providerID, bookingID, start, end); err != nil {
		tb.Fatalf("insert booking %s: %v", bookingID, err)
	}
}

// TryInsertBookingEntry is InsertBookingEntry returning the store's error,
// such as booking.ErrSlotTaken when the entry overlaps another.
func TryInsertBookingEntry(db *sqlstore.DB, providerID, bookingID string, start, end time.Time) error {
	ctx := context.Background()
	return db.InTx(ctx, func(tx *sqlstore.Tx) error {
		b := bokat.Booking{
			ID: bookingID, RequestID: "bkr_" + bookingID, OwnerClientID: "pc_test", Status: bokat.BookingConfirmed,
			ProviderID: providerID, ProviderName: "test", ServiceID: "vvs_install_faucet_standard", VerticalID: "vvs",
			JobTypeID: "install_faucet", ServiceLabelSV: "test", SlotStart: start, SlotEnd: end, PricingModel: "flat",
			PriceType: "avg_fixed", Quantity: 1, TermsVersion: "fixed_price_terms_v1:vvs_install_faucet_standard",
			TermsAcceptedAt: start, Postcode: "11345", Locale: "sv-SE", Source: "test", ConfirmedAt: start,
		}
		contact := bokat.BookingContact{Name: "Test", Phone: "00000", Email: "test@example.se", ServiceAddress: "Testgatan 1"}
		return tx.InsertBooking(ctx, b, contact, bokat.BookingConsent{}, "cal_"+bookingID, start)
	})
}
