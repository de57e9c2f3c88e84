package sqlstore

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"testing/fstest"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

//go:embed migrations
var migrations embed.FS

// ErrSchemaTooNew means the database was migrated by a newer binary.
var ErrSchemaTooNew = errors.New("database schema is newer than this binary")

func (db *DB) provider() (*goose.Provider, error) {
	var (
		dialect goose.Dialect
		dir     string
		opts    []goose.ProviderOption
	)
	switch db.engine {
	case SQLite:
		dialect, dir = goose.DialectSQLite3, "migrations/sqlite"
	case Postgres:
		dialect, dir = goose.DialectPostgres, "migrations/postgres"
		locker, err := lock.NewPostgresSessionLocker()
		if err != nil {
			return nil, fmt.Errorf("migration lock: %w", err)
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	sub, err := engineMigrations(dir)
	if err != nil {
		return nil, err
	}
	return goose.NewProvider(dialect, db.write, sub, opts...)
}

// Migrate applies every embedded migration the database lacks. It refuses a
// database whose schema is newer than this binary.
func (db *DB) Migrate(ctx context.Context) error {
	if err := db.CheckSchema(ctx, true); err != nil {
		return err
	}
	p, err := db.provider()
	if err != nil {
		return err
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("apply migrations: %w", translate(err))
	}
	return nil
}

// SchemaVersions returns the version the database is at and the newest
// version embedded in this binary.
func (db *DB) SchemaVersions(ctx context.Context) (current, latest int64, err error) {
	p, err := db.provider()
	if err != nil {
		return 0, 0, err
	}
	sources := p.ListSources()
	if len(sources) > 0 {
		latest = sources[len(sources)-1].Version
	}
	current, err = p.GetDBVersion(ctx)
	if err != nil {
		return 0, latest, fmt.Errorf("read schema version: %w", translate(err))
	}
	return current, latest, nil
}

// CheckSchema reports ErrSchemaTooNew when the database is ahead of the
// binary, and, unless allowBehind, an error when it lacks migrations.
func (db *DB) CheckSchema(ctx context.Context, allowBehind bool) error {
	current, latest, err := db.SchemaVersions(ctx)
	if err != nil {
		return err
	}
	if current > latest {
		return fmt.Errorf("%w: database at version %d, binary knows up to %d; run a newer bokat", ErrSchemaTooNew, current, latest)
	}
	if !allowBehind && current < latest {
		return fmt.Errorf("database schema at version %d, binary expects %d: run `bokat migrate`", current, latest)
	}
	return nil
}

// engineMigrations is the migration set of one engine: the files of
// migrations/shared (SQL both engines run as written) together with the
// engine's own folder, whose files are the ones that differ per engine.
// A number must not appear in both.
func engineMigrations(dir string) (fs.FS, error) {
	shared, err := fs.Sub(migrations, "migrations/shared")
	if err != nil {
		return nil, err
	}
	own, err := fs.Sub(migrations, dir)
	if err != nil {
		return nil, err
	}
	out := fstest.MapFS{} // a plain in-memory fs.FS
	for _, src := range []fs.FS{shared, own} {
		entries, err := fs.ReadDir(src, ".")
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if e.IsDir() {
				continue
			}
			if _, dup := out[e.Name()]; dup {
				return nil, fmt.Errorf("migration %s is both shared and in %s", e.Name(), dir)
			}
			b, err := fs.ReadFile(src, e.Name())
			if err != nil {
				return nil, err
			}
			out[e.Name()] = &fstest.MapFile{Data: b, Mode: 0o444}
		}
	}
	return out, nil
}

// MigrationFiles returns the embedded migrations, for tests that key caches
// on their content.
func MigrationFiles() fs.FS { return migrations }
