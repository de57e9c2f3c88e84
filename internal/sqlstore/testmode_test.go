package sqlstore_test

import (
	"context"
	"testing"
	"time"

	"bokat"
	"bokat/internal/notify"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
)

// TestCapturedTestMessagesGoWithTheContact: a test booking's captured
// messages are listed for its owner only, a live job is never captured, and
// erasing the booking's contact data deletes its messages (their bodies
// carry it).
func TestCapturedTestMessagesGoWithTheContact(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		sqlstoretest.WithProvider(t, db, "prv_a")
		b := sqlstoretest.Booking("bkg_t1", "prv_a", time.Now().Add(24*time.Hour), 60)
		b.Mode = bokat.ModeTest
		if err := sqlstoretest.InsertBooking(t, db, b); err != nil {
			t.Fatal(err)
		}
		msg := notify.Message{Subject: "Bokningsbekräftelse", Text: "Hej Greta, +46701234567"}
		job := notify.ClaimedJob{ID: "ntf_1", BookingID: b.ID, EventType: "booking.confirmed", Recipient: bokat.RecipientCustomer}
		if err := db.CaptureMessage(ctx, job, msg, time.Now()); err == nil {
			t.Fatal("a live job was captured")
		}
		job.Mode = bokat.ModeTest
		if err := db.CaptureMessage(ctx, job, msg, time.Now()); err != nil {
			t.Fatal(err)
		}
		if got, err := db.TestMessages(ctx, b.OwnerClientID, "", 10); err != nil || len(got) != 1 || got[0].Body != msg.Text {
			t.Fatalf("owner's messages = %+v, %v", got, err)
		}
		if got, _ := db.TestMessages(ctx, "pc_other", "", 10); len(got) != 0 {
			t.Fatalf("another client reads %d messages", len(got))
		}
		err := db.InTx(ctx, func(tx *sqlstore.Tx) error {
			_, _, err := tx.EraseBookingContact(ctx, b.ID, time.Now(), time.Time{})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := db.TestMessages(ctx, b.OwnerClientID, "", 10); len(got) != 0 {
			t.Errorf("%d captured messages outlived the erasure of the contact", len(got))
		}
	})
}
