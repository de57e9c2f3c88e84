package sqlstore_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"bokat"
	"bokat/internal/followup"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
)

// retentionFixture stores, on a fake clock, bookings and requests on both
// sides of the retention cutoffs, each with a pending notification job.
type retentionFixture struct {
	now                            time.Time
	bookingsBefore, requestsBefore time.Time
	// expired and kept name the bookings and requests that must and must
	// not be erased at now.
	expiredBookings, keptBookings []string
	expiredRequests, keptRequests []string
}

func newRetentionFixture(t *testing.T, db *sqlstore.DB) retentionFixture {
	t.Helper()
	ctx := context.Background()
	f := retentionFixture{now: t0.Add(1000 * 24 * time.Hour)}
	f.bookingsBefore, f.requestsBefore = f.now.Add(-365*24*time.Hour), f.now.Add(-30*24*time.Hour)
	withProvider(t, db, "p1")
	add := func(id string, start time.Time, cancelledAt time.Time, expired bool) {
		t.Helper()
		b := testBooking(id, "p1", start, 60)
		if err := insert(t, db, b); err != nil {
			t.Fatal(err)
		}
		err := db.InTx(ctx, func(tx *sqlstore.Tx) error {
			if !cancelledAt.IsZero() {
				b.Status, b.CancelledAt, b.CancelReason = bokat.BookingCancelled, cancelledAt, "other"
				if err := tx.CancelBooking(ctx, b, "Ring Greta", cancelledAt); err != nil {
					return err
				}
			}
			return tx.InsertNotificationJob(ctx, bokat.NotificationJob{ID: "nj_" + id, BookingID: id,
				EventType: "booking.confirmed", Recipient: bokat.RecipientCustomer, Status: bokat.NotificationPending,
				NextAttemptAt: f.now, CreatedAt: t0})
		})
		if err != nil {
			t.Fatal(err)
		}
		if expired {
			f.expiredBookings = append(f.expiredBookings, id)
		} else {
			f.keptBookings = append(f.keptBookings, id)
		}
	}
	hour := time.Hour
	add("bkg_ended_long_ago", f.bookingsBefore.Add(-2*hour), time.Time{}, true)
	add("bkg_ended_at_cutoff", f.bookingsBefore.Add(-hour), time.Time{}, false) // ends exactly at the cutoff
	add("bkg_ended_recently", f.now.Add(-48*hour), time.Time{}, false)
	add("bkg_future", f.now.Add(48*hour), time.Time{}, false)
	add("bkg_cancelled_long_ago", f.now.Add(24*hour), f.bookingsBefore.Add(-hour), true)
	add("bkg_cancelled_recently", f.bookingsBefore.Add(-10*hour), f.now.Add(-hour), false)

	addRequest := func(id string, created time.Time, expired bool) {
		t.Helper()
		r := followup.Record{ID: id, SessionID: "s", OwnerClientID: "pc_1", VerticalID: "vvs",
			JobTypeID: "install_faucet", Status: "ready_to_send", Description: "Kranen hos Greta droppar",
			CustomerJSON: []byte(`{"name":"Greta Gåsfot","phone":"070-123 45 67","email":"greta@example.se"}`),
			LocationJSON: []byte(`{"address":"Drottninggatan 1","postcode":"111 22"}`), Postcode: "111 22",
			TimingJSON: []byte(`{"urgency":"soon"}`), DetailsJSON: []byte(`{"floor":"3"}`), CustomerNextStep: "vänta",
			Source: "test", Locale: "sv-SE", Timezone: "Europe/Stockholm", ConsentStatement: "ja tack", CreatedAt: created,
			ConsentSource: "chat", ConsentCollectedAt: created,
			Candidates: []followup.RecordCandidate{{ProviderID: "p1"}}}
		err := db.InTx(ctx, func(tx *sqlstore.Tx) error {
			if err := tx.InsertFollowUpRequest(ctx, r); err != nil {
				return err
			}
			return tx.InsertNotificationJob(ctx, bokat.NotificationJob{ID: "nj_" + id, RequestID: id,
				EventType: "request.created", Recipient: bokat.RecipientProvider, Status: bokat.NotificationPending,
				NextAttemptAt: f.now, CreatedAt: created})
		})
		if err != nil {
			t.Fatal(err)
		}
		if expired {
			f.expiredRequests = append(f.expiredRequests, id)
		} else {
			f.keptRequests = append(f.keptRequests, id)
		}
	}
	addRequest("req_old", f.requestsBefore.Add(-time.Minute), true)
	addRequest("req_at_cutoff", f.requestsBefore, false)
	addRequest("req_new", f.now.Add(-hour), false)
	return f
}

// check verifies that exactly the expired rows lost their contact data and
// their pending notification jobs, and that everything else is as it was.
func (f retentionFixture) check(t *testing.T, db *sqlstore.DB) {
	t.Helper()
	ctx := context.Background()
	for _, id := range append(slices.Clone(f.expiredBookings), f.keptBookings...) {
		expired := slices.Contains(f.expiredBookings, id)
		nb, err := db.NotificationBooking(ctx, id)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		if erased := nb.Contact == (bokat.BookingContact{}); erased != expired {
			t.Errorf("%s: contact erased %v, want %v", id, erased, expired)
		}
		// What is not personal stays.
		if nb.PriceSEK != 1890 || nb.ServiceID != "vvs_install_faucet_standard" || nb.Postcode != "11345" ||
			nb.TermsVersion == "" || nb.ProviderID != "p1" {
			t.Errorf("%s: non-personal facts changed: %+v", id, nb.Booking)
		}
		var statement, notes, emailIndex, source string
		var erasedAt *int64
		if err := db.R().QueryRowContext(ctx, `SELECT consent_statement, cancel_notes, customer_email_index, consent_source,
			contact_erased_at FROM bookings WHERE id = $1`, id).Scan(&statement, &notes, &emailIndex, &source, &erasedAt); err != nil {
			t.Fatal(err)
		}
		if expired != (statement == "" && notes == "" && emailIndex == "" && erasedAt != nil && *erasedAt == sqlstore.Millis(f.now)) {
			t.Errorf("%s: statement %q notes %q index %q erased at %v; expired %v", id, statement, notes, emailIndex, erasedAt, expired)
		}
		if id == "bkg_cancelled_recently" {
			// Cancel notes are sealed like the contact data, and open again.
			recs, err := db.PersonRecords(ctx, testContact.Email, "")
			if err != nil {
				t.Fatal(err)
			}
			i := slices.IndexFunc(recs.Bookings, func(b sqlstore.PersonBooking) bool { return b.ID == id })
			if notes == "" || strings.Contains(notes, "Greta") || i < 0 || recs.Bookings[i].CancelNotes != "Ring Greta" {
				t.Errorf("%s: stored notes %q; opened %v", id, notes, i >= 0 && recs.Bookings[i].CancelNotes == "Ring Greta")
			}
		}
		f.checkJob(t, db, id, expired)
	}
	for _, id := range append(slices.Clone(f.expiredRequests), f.keptRequests...) {
		expired := slices.Contains(f.expiredRequests, id)
		r, err := db.FollowUpRequest(ctx, id)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		erased := string(r.CustomerJSON) == "{}" && string(r.LocationJSON) == "{}" && r.Description == "" &&
			r.ConsentStatement == "" && string(r.DetailsJSON) == "{}"
		if erased != expired {
			t.Errorf("%s: erased %v, want %v (%s %s %q)", id, erased, expired, r.CustomerJSON, r.LocationJSON, r.Description)
		}
		if r.Postcode != "111 22" || r.ConsentSource != "chat" || r.ConsentCollectedAt.IsZero() || len(r.Candidates) != 1 ||
			string(r.TimingJSON) != `{"urgency":"soon"}` {
			t.Errorf("%s: non-personal facts changed: %+v", id, r)
		}
		f.checkJob(t, db, id, expired)
	}
}

func (f retentionFixture) checkJob(t *testing.T, db *sqlstore.DB, id string, expired bool) {
	t.Helper()
	var status, lastError string
	if err := db.R().QueryRowContext(context.Background(), `SELECT status, last_error FROM notification_jobs WHERE id = $1`,
		"nj_"+id).Scan(&status, &lastError); err != nil {
		t.Fatal(err)
	}
	want := bokat.NotificationPending
	if expired {
		want = bokat.NotificationSkipped
	}
	if status != want {
		t.Errorf("%s: notification job %s (%s), want %s", id, status, lastError, want)
	}
}

func TestRetentionErasesExpiredContactDataOnly(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		f := newRetentionFixture(t, db)
		// Batches of one: the caller loops until nothing is left.
		var got sqlstore.Erased
		for {
			e, err := db.EraseExpiredContacts(ctx, f.now, f.bookingsBefore, f.requestsBefore, 1, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(e.Bookings)+len(e.Requests) == 0 {
				break
			}
			got.Bookings = append(got.Bookings, e.Bookings...)
			got.Requests = append(got.Requests, e.Requests...)
			got.DroppedNotifications += e.DroppedNotifications
		}
		slices.Sort(got.Bookings)
		want := slices.Sorted(slices.Values(f.expiredBookings))
		if !slices.Equal(got.Bookings, want) || !slices.Equal(got.Requests, f.expiredRequests) ||
			got.DroppedNotifications != len(want)+len(f.expiredRequests) {
			t.Errorf("erased %+v, want bookings %v, requests %v", got, want, f.expiredRequests)
		}
		f.check(t, db)
		// Erased rows are not re-sealed and not erased again.
		if n, err := db.ResealContacts(ctx, new(sqlstore.ResealCursor), 100); err != nil || n != 0 {
			t.Errorf("re-seal after erasure: %d %v", n, err)
		}
		if e, err := db.EraseExpiredContacts(ctx, f.now, f.bookingsBefore, f.requestsBefore, 100, nil); err != nil ||
			len(e.Bookings)+len(e.Requests) != 0 {
			t.Errorf("second run erased %+v, %v", e, err)
		}
	})
}

// TestRetentionErasesCopiesInTheTransaction: the copies hook gets exactly
// the erased ids, and its failure leaves every row to be erased next time.
func TestRetentionErasesCopiesInTheTransaction(t *testing.T) {
	t.Parallel()
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		f := newRetentionFixture(t, db)
		failing := func([]string) error { return errors.New("the mail folder is read-only") }
		if e, err := db.EraseExpiredContacts(ctx, f.now, f.bookingsBefore, f.requestsBefore, 100, failing); err == nil ||
			len(e.Bookings)+len(e.Requests) != 0 {
			t.Fatalf("erasure whose copies could not be removed: %+v %v, want an error and nothing erased", e, err)
		}
		if n, err := db.R().QueryContext(ctx, `SELECT id FROM bookings WHERE contact_erased_at IS NOT NULL
			UNION SELECT id FROM follow_up_requests WHERE contact_erased_at IS NOT NULL`); err != nil {
			t.Fatal(err)
		} else {
			if n.Next() {
				t.Errorf("a failed removal of copies left rows erased")
			}
			n.Close()
		}
		var got []string
		e, err := db.EraseExpiredContacts(ctx, f.now, f.bookingsBefore, f.requestsBefore, 100, func(ids []string) error {
			got = append(got, ids...)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		want := append(append([]string(nil), e.Bookings...), e.Requests...)
		slices.Sort(got)
		slices.Sort(want)
		if all := append(slices.Clone(f.expiredBookings), f.expiredRequests...); !slices.Equal(got, want) || len(got) != len(all) {
			t.Errorf("copies removed for %v; erased %v, want %v", got, want, all)
		}
		f.check(t, db)
	})
}

// TestRetentionSharedByProcesses runs the retention job from several
// connections to one PostgreSQL database at once (as several serve
// processes do): every expired row is erased exactly once, nothing else.
func TestRetentionSharedByProcesses(t *testing.T) {
	t.Parallel()
	if !slices.Contains(sqlstoretest.Engines(), sqlstore.Postgres) {
		t.Skip("PostgreSQL is not configured (" + sqlstoretest.PostgresURLEnv + ")")
	}
	ctx := context.Background()
	url := sqlstoretest.URL(t, sqlstore.Postgres)
	vault := sqlstoretest.Vault(t)
	open := func() *sqlstore.DB {
		db, err := sqlstore.Open(ctx, url, sqlstore.WithVault(vault))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	first := open()
	if err := first.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	f := newRetentionFixture(t, first)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		bookings []string
		requests []string
	)
	for range 4 {
		db := open()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				e, err := db.EraseExpiredContacts(ctx, f.now, f.bookingsBefore, f.requestsBefore, 1, nil)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				bookings, requests = append(bookings, e.Bookings...), append(requests, e.Requests...)
				mu.Unlock()
				if len(e.Bookings)+len(e.Requests) == 0 {
					return
				}
			}
		}()
	}
	wg.Wait()
	slices.Sort(bookings)
	if want := slices.Sorted(slices.Values(f.expiredBookings)); !slices.Equal(bookings, want) || !slices.Equal(requests, f.expiredRequests) {
		t.Errorf("erased bookings %v and requests %v, want each of %v and %v exactly once", bookings, requests, want, f.expiredRequests)
	}
	f.check(t, first)
}
