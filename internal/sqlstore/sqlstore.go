// Package sqlstore is Bokat's one database adapter. It runs the same SQL on
// embedded SQLite (pure Go, the default) and on PostgreSQL, applies the
// numbered migrations embedded in the binary, and translates driver errors to
// the domain errors of package bokat (bokat.ErrUnavailable, bokat.ErrConflict,
// bokat.ErrNotFound).
//
// Instants are stored as BIGINT Unix milliseconds (UTC) on both engines.
// Writes go through InTx: on SQLite every write transaction runs on a single
// writer connection with BEGIN IMMEDIATE, so writers are serialised in the
// process instead of contending through SQLite's busy handler; reads use a
// separate pool.
package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	_ "modernc.org/sqlite"             // registers the "sqlite" driver
)

// Engine names a supported database engine.
type Engine string

// The supported engines.
const (
	SQLite   Engine = "sqlite"
	Postgres Engine = "postgres"
)

// DB is an open store. It is safe for concurrent use.
type DB struct {
	engine Engine
	write  *sql.DB
	read   *sql.DB
	// stmts holds prepared statements of hot read queries on the read pool,
	// by query text (see readStmt).
	stmts sync.Map
	// vault seals customer contact data (WithVault); nil: none.
	vault *Vault
}

// Option configures a store at Open.
type Option func(*DB)

// WithVault gives the store the vault sealing customer contact data.
// Without one the store refuses to write or read contact data (ErrNoVault).
func WithVault(v *Vault) Option { return func(db *DB) { db.vault = v } }

// ParseURL returns the engine and the driver data source of a --database URL:
// "sqlite:PATH" (or "sqlite://PATH", "file:PATH") selects SQLite, a
// "postgres://" or "postgresql://" URL selects PostgreSQL.
func ParseURL(raw string) (Engine, string, error) {
	switch {
	case strings.HasPrefix(raw, "postgres://"), strings.HasPrefix(raw, "postgresql://"):
		return Postgres, raw, nil
	case strings.HasPrefix(raw, "sqlite://"):
		return SQLite, strings.TrimPrefix(raw, "sqlite://"), nil
	case strings.HasPrefix(raw, "sqlite:"):
		return SQLite, strings.TrimPrefix(raw, "sqlite:"), nil
	case strings.HasPrefix(raw, "file:"):
		return SQLite, strings.TrimPrefix(raw, "file:"), nil
	}
	return "", "", fmt.Errorf("database URL must start with sqlite: or postgres:// (got %q)", redactURL(raw))
}

// redactURL hides a password in a database URL so it can appear in an error.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	return u.Redacted()
}

// Open connects to the database named by rawURL and checks that it answers.
// It does not migrate; call Migrate.
func Open(ctx context.Context, rawURL string, opts ...Option) (*DB, error) {
	engine, dsn, err := ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	db := &DB{engine: engine}
	for _, o := range opts {
		o(db)
	}
	switch engine {
	case SQLite:
		if dir := filepath.Dir(dsn); dir != "" && dir != "." {
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return nil, fmt.Errorf("create database folder: %w", err)
			}
		}
		pragmas := "_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=busy_timeout(10000)&_pragma=synchronous(NORMAL)"
		w, err := sql.Open("sqlite", "file:"+dsn+"?"+pragmas+"&_txlock=immediate")
		if err != nil {
			return nil, fmt.Errorf("open sqlite: %w", err)
		}
		w.SetMaxOpenConns(1)
		w.SetMaxIdleConns(1)
		w.SetConnMaxIdleTime(0)
		r, err := sql.Open("sqlite", "file:"+dsn+"?"+pragmas+"&_pragma=query_only(1)")
		if err != nil {
			w.Close()
			return nil, fmt.Errorf("open sqlite: %w", err)
		}
		r.SetMaxOpenConns(8)
		r.SetMaxIdleConns(8)
		db.write, db.read = w, r
	case Postgres:
		p, err := sql.Open("pgx", dsn)
		if err != nil {
			return nil, fmt.Errorf("open postgres: %w", err)
		}
		p.SetMaxOpenConns(32)
		p.SetMaxIdleConns(32)
		p.SetConnMaxIdleTime(5 * time.Minute)
		db.write, db.read = p, p
	}
	pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := db.write.PingContext(pingCtx); err != nil {
		db.Close()
		return nil, fmt.Errorf("database %s is unreachable: %w", redactURL(rawURL), err)
	}
	return db, nil
}

// Engine reports which engine the store runs on.
func (db *DB) Engine() Engine { return db.engine }

// Close releases every connection.
func (db *DB) Close() error {
	var errs []error
	db.stmts.Range(func(_, v any) bool {
		errs = append(errs, v.(*sql.Stmt).Close())
		return true
	})
	if db.write != nil {
		errs = append(errs, db.write.Close())
	}
	if db.read != nil && db.read != db.write {
		errs = append(errs, db.read.Close())
	}
	return errors.Join(errs...)
}

// Ping reports whether the store answers.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.read.PingContext(ctx); err != nil {
		return translate(err)
	}
	return nil
}

// Reader is what read-only queries need; both *sql.DB and *sql.Tx satisfy it.
type Reader interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// Tx is one write transaction. Helpers that run inside a transaction take it.
type Tx struct {
	tx     *sql.Tx
	engine Engine
	db     *DB
}

// Engine reports the engine of the transaction.
func (tx *Tx) Engine() Engine { return tx.engine }

// Q returns the transaction's query interface for SQL written by other
// packages' store code.
func (tx *Tx) Q() Reader { return tx.tx }

// R returns the read pool's query interface.
func (db *DB) R() Reader { return db.read }

// maxTxAttempts bounds retries of a transaction that lost a race on a unique
// key (PostgreSQL) or found the store busy.
const maxTxAttempts = 3

// InTx runs fn in one write transaction and commits it when fn returns nil.
// When fn (or the commit) fails with bokat.ErrConflict on a unique key and
// retry is wanted by the caller, it is the caller's job to decide; InTx itself
// retries only serialization failures. Errors are translated to the domain
// errors of package bokat.
func (db *DB) InTx(ctx context.Context, fn func(*Tx) error) error {
	var err error
	for attempt := 0; attempt < maxTxAttempts; attempt++ {
		err = db.inTxOnce(ctx, fn)
		if err == nil || !errors.Is(err, errSerialization) {
			return err
		}
	}
	return err
}

func (db *DB) inTxOnce(ctx context.Context, fn func(*Tx) error) (err error) {
	sqlTx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return translate(err)
	}
	tx := &Tx{tx: sqlTx, engine: db.engine, db: db}
	defer func() {
		if p := recover(); p != nil {
			_ = sqlTx.Rollback()
			panic(p)
		}
		if err != nil {
			_ = sqlTx.Rollback()
		}
	}()
	if err = fn(tx); err != nil {
		return translate(err)
	}
	if err = sqlTx.Commit(); err != nil {
		return translate(err)
	}
	return nil
}

// Millis converts an instant to the stored form.
func Millis(t time.Time) int64 { return t.UnixMilli() }

// FromMillis converts the stored form to an instant in UTC.
func FromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// NullMillis converts an optional instant to the stored form.
func NullMillis(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixMilli(), Valid: true}
}

// FromNullMillis converts an optional stored instant; the zero time means none.
func FromNullMillis(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return FromMillis(n.Int64)
}
