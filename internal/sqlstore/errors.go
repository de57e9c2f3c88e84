package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"bokat"
)

// errSerialization marks a PostgreSQL serialization failure or deadlock: the
// transaction is safe to run again.
var errSerialization = errors.New("serialization failure")

// translate maps driver errors to the domain errors of package bokat, keeping
// the original in the chain. Errors already carrying a domain meaning pass
// through unchanged.
func translate(err error) error {
	if err == nil {
		return nil
	}
	var be *bokat.Error
	if errors.As(err, &be) || errors.Is(err, bokat.ErrNotFound) || errors.Is(err, bokat.ErrConflict) ||
		errors.Is(err, bokat.ErrUnavailable) || errors.Is(err, errSerialization) {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w: %w", bokat.ErrNotFound, err)
	}
	// A failed connection attempt is an outage whatever the server said
	// (refused, shutting down, too many clients, database not accepting
	// connections): check it before the server's error code.
	var connectErr *pgconn.ConnectError
	if errors.As(err, &connectErr) {
		return fmt.Errorf("%w: %w", bokat.ErrUnavailable, err)
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "23505", "23P01": // unique_violation, exclusion_violation
			return fmt.Errorf("%w: %s", bokat.ErrConflict, pgErr.ConstraintName)
		case "40001", "40P01": // serialization_failure, deadlock_detected
			return fmt.Errorf("%w: %w", errSerialization, err)
		}
		if len(pgErr.Code) >= 2 {
			switch pgErr.Code[:2] {
			case "08", "53", "57": // connection exception, insufficient resources, operator intervention
				return fmt.Errorf("%w: %w", bokat.ErrUnavailable, err)
			}
		}
		return err
	}
	var sqErr *sqlite.Error
	if errors.As(err, &sqErr) {
		switch sqErr.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY,
			sqlite3.SQLITE_CONSTRAINT_TRIGGER: // a trigger's RAISE(ABORT): the rules PostgreSQL holds as constraints
			return fmt.Errorf("%w: %w", bokat.ErrConflict, err)
		}
		switch sqErr.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_IOERR,
			sqlite3.SQLITE_FULL, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT:
			return fmt.Errorf("%w: %w", bokat.ErrUnavailable, err)
		}
		return err
	}
	var netErr net.Error
	if errors.As(err, &netErr) || errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, sql.ErrConnDone) || pgconn.Timeout(err) {
		return fmt.Errorf("%w: %w", bokat.ErrUnavailable, err)
	}
	if err.Error() == "sql: database is closed" {
		return fmt.Errorf("%w: %w", bokat.ErrUnavailable, err)
	}
	return err
}

// Translate exposes the driver-error translation for store code in other
// packages that runs its own queries through Q or R.
func Translate(err error) error { return translate(err) }
