package notifytest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"bokat"
	"bokat/internal/notify"
	"bokat/internal/outbox"
	"bokat/internal/sqlstore"
)

// TableBookings is a notify.BookingSource for tests that need bookings
// without the booking use cases: bookings kept as JSON in a table only
// tests create (test_bookings), with the two confirmation status columns
// the real bookings table has. A worker delivering them uses Store, whose
// transactions write those columns.
type TableBookings struct{ db *sqlstore.DB }

var _ notify.BookingSource = (*TableBookings)(nil)

// NewTableBookings creates the test table in db.
func NewTableBookings(tb testing.TB, db *sqlstore.DB) *TableBookings {
	tb.Helper()
	err := db.InTx(context.Background(), func(tx *sqlstore.Tx) error {
		_, err := tx.Q().ExecContext(context.Background(), `CREATE TABLE test_bookings (
			id TEXT PRIMARY KEY, data TEXT NOT NULL,
			customer_confirmation_status TEXT NOT NULL DEFAULT '',
			provider_confirmation_status TEXT NOT NULL DEFAULT '')`)
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return &TableBookings{db: db}
}

// Put stores b, replacing the booking with its id.
func (s *TableBookings) Put(tb testing.TB, b notify.Booking) {
	tb.Helper()
	data, err := json.Marshal(b)
	if err != nil {
		tb.Fatal(err)
	}
	err = s.db.InTx(context.Background(), func(tx *sqlstore.Tx) error {
		res, err := tx.Q().ExecContext(context.Background(), `UPDATE test_bookings SET data = $2 WHERE id = $1`, b.ID, string(data))
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			_, err = tx.Q().ExecContext(context.Background(), `INSERT INTO test_bookings (id, data) VALUES ($1, $2)`, b.ID, string(data))
		}
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// NotificationBooking implements notify.BookingSource.
func (s *TableBookings) NotificationBooking(ctx context.Context, id string) (notify.Booking, error) {
	var data string
	err := s.db.R().QueryRowContext(ctx, `SELECT data FROM test_bookings WHERE id = $1`, id).Scan(&data)
	if err != nil {
		return notify.Booking{}, sqlstore.Translate(err)
	}
	var b notify.Booking
	return b, json.Unmarshal([]byte(data), &b)
}

// Store returns the database as a notification worker uses it, except that
// the confirmation statuses a job's transaction records go to the test
// table, next to the bookings of this source. A worker delivering this
// source's bookings uses it as its Store.
func (s *TableBookings) Store() notify.Store {
	return tableStore{sqlstore.Bind[notify.Tx](s.db)}
}

// tableStore is the worker's store whose transactions are tableTx.
type tableStore struct{ sqlstore.Bound[notify.Tx] }

func (s tableStore) InTx(ctx context.Context, fn func(notify.Tx) error) error {
	return s.DB.InTx(ctx, func(tx *sqlstore.Tx) error { return fn(tableTx{tx}) })
}

// tableTx is the database's transaction writing confirmation statuses to
// test_bookings.
type tableTx struct{ *sqlstore.Tx }

func (tx tableTx) SetConfirmationStatus(ctx context.Context, id, recipient, status string) error {
	col := map[string]string{bokat.RecipientCustomer: "customer_confirmation_status", bokat.RecipientProvider: "provider_confirmation_status"}[recipient]
	if col == "" {
		return fmt.Errorf("unknown recipient %q", recipient)
	}
	_, err := tx.Q().ExecContext(ctx, `UPDATE test_bookings SET `+col+` = $2 WHERE id = $1`, id, status)
	return err
}

// Statuses returns the booking's customer and provider confirmation statuses.
func (s *TableBookings) Statuses(tb testing.TB, id string) (customer, provider string) {
	tb.Helper()
	err := s.db.R().QueryRowContext(context.Background(),
		`SELECT customer_confirmation_status, provider_confirmation_status FROM test_bookings WHERE id = $1`, id).Scan(&customer, &provider)
	if err != nil {
		tb.Fatal(err)
	}
	return customer, provider
}

// QueueJobs writes an outbox event and a customer and a provider job for it,
// as the booking code does, in one transaction carrying ctx (and so its
// request ids). It returns the job ids.
func QueueJobs(tb testing.TB, ctx context.Context, db *sqlstore.DB, bookingID string, ev bokat.EventType, now func() time.Time) (customerJob, providerJob string) {
	tb.Helper()
	return QueueJobsWithReason(tb, ctx, db, bookingID, ev, "", now)
}

// QueueJobsWithReason is QueueJobs for an event whose data carries the
// reason (e.g. bokat.ReasonProviderCancelled), when reason is not "".
func QueueJobsWithReason(tb testing.TB, ctx context.Context, db *sqlstore.DB, bookingID string, ev bokat.EventType, reason string, now func() time.Time) (customerJob, providerJob string) {
	tb.Helper()
	payload := []byte(`{}`)
	if reason != "" {
		var err error
		if payload, err = json.Marshal(map[string]string{"reason": reason}); err != nil {
			tb.Fatal(err)
		}
	}
	outboxID := uuid.Must(uuid.NewV7()).String()
	customerJob, providerJob = uuid.Must(uuid.NewV7()).String(), uuid.Must(uuid.NewV7()).String()
	t := now()
	err := db.InTx(ctx, func(tx *sqlstore.Tx) error {
		if err := tx.InsertOutboxEvent(ctx, outbox.Event{ID: outboxID, OwnerClientID: "pc_test", BookingID: bookingID,
			EventType: string(ev), Payload: payload, OccurredAt: t, CreatedAt: t}); err != nil {
			return err
		}
		for _, j := range []struct{ id, rcpt string }{{customerJob, bokat.RecipientCustomer}, {providerJob, bokat.RecipientProvider}} {
			if err := tx.InsertNotificationJob(ctx, bokat.NotificationJob{ID: j.id, OutboxID: outboxID, BookingID: bookingID,
				EventType: string(ev), Recipient: j.rcpt, Status: bokat.NotificationPending, NextAttemptAt: t, CreatedAt: t}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return customerJob, providerJob
}
