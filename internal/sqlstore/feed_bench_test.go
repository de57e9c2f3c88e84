package sqlstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"bokat"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
)

// BenchmarkProviderBookings reads a busy provider's bookings for its
// calendar feed: 5,000 of them, every other one cancelled (the soak's
// provider held about that many after 30 minutes). Its memory per read is
// what a feed fetch holds while the feed is written.
//
//	go test ./internal/sqlstore -run '^$' -bench ProviderBookings -benchmem
func BenchmarkProviderBookings(b *testing.B) {
	for _, engine := range sqlstoretest.Engines() {
		b.Run(string(engine), func(b *testing.B) {
			db := sqlstoretest.Open(b, engine)
			ctx := context.Background()
			sqlstoretest.WithProvider(b, db, "p1")
			err := db.InTx(ctx, func(tx *sqlstore.Tx) error {
				for i := range 5000 {
					bk := testBooking(fmt.Sprintf("bkg_%05d", i), "p1", t0.Add(time.Duration(i)*time.Hour), 60)
					if err := tx.InsertBooking(ctx, bk, sqlstoretest.Contact, bokat.BookingConsent{Statement: "ja"}, fmt.Sprintf("cal_%05d", i), t0); err != nil {
						return err
					}
					if i%2 == 1 {
						bk.Status, bk.CancelledAt, bk.CancelReason, bk.Sequence = bokat.BookingCancelled, t0, "other", 1
						if err := tx.CancelBooking(ctx, bk, "", t0); err != nil {
							return err
						}
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				list, err := db.ProviderBookings(ctx, "p1", t0.Add(-time.Hour))
				if err != nil || len(list) != 5000 {
					b.Fatalf("%d bookings, %v", len(list), err)
				}
			}
		})
	}
}
