package sqlstoretest

import (
	"context"
	"testing"
	"time"

	"bokat"
	"bokat/internal/sqlstore"
)

// T0 is the instant the booking fixtures below are written at (a Tuesday
// morning); tests never change it.
var T0 = time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)

// Contact is the customer of the booking fixtures; tests never change it.
var Contact = bokat.BookingContact{Name: "Greta Gåsfot", Phone: "+46701234567", Email: "greta@example.se",
	ServiceAddress: "Drottninggatan 1"}

// WithProvider stores an active provider to book, without services or
// hours, at T0.
func WithProvider(tb testing.TB, db *sqlstore.DB, id string) {
	tb.Helper()
	err := db.InTx(context.Background(), func(tx *sqlstore.Tx) error {
		_, err := tx.PutProviderSupply(context.Background(), bokat.ProviderSupply{
			Provider: bokat.Provider{ID: id, Name: "Rör AB " + id, Email: "bokningar@" + id + ".example", Active: true, HorizonDays: 14},
		}, T0)
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// Booking is a confirmed booking of the provider for minutes from start, at
// 1890 kr, confirmed at T0.
func Booking(id, provider string, start time.Time, minutes int) bokat.Booking {
	return bokat.Booking{
		ID: id, RequestID: "bkr_" + id, OwnerClientID: "pc_1", Status: bokat.BookingConfirmed,
		ProviderID: provider, ProviderName: "Rör AB " + provider, ServiceID: "vvs_install_faucet_standard",
		VerticalID: "vvs", JobTypeID: "install_faucet", ServiceLabelSV: "Byte av blandare", ServiceLabelEN: "Faucet",
		SlotStart: start, SlotEnd: start.Add(time.Duration(minutes) * time.Minute), SlotLabel: "tisdag 24 november kl. 09:00–10:30",
		PriceSEK: 1890, PricingModel: "flat", PriceType: "avg_fixed", Quantity: 1,
		TermsVersion: "fixed_price_terms_v1:vvs_install_faucet_standard", TermsAcceptedAt: T0,
		Postcode: "11345", Locale: "sv-SE", Source: "external_model", ConfirmedAt: T0,
	}
}

// InsertBooking stores b with Contact and the consent statement "ja tack",
// its calendar entry "cal_<id>", at T0.
func InsertBooking(tb testing.TB, db *sqlstore.DB, b bokat.Booking) error {
	tb.Helper()
	return db.InTx(context.Background(), func(tx *sqlstore.Tx) error {
		return tx.InsertBooking(context.Background(), b, Contact, bokat.BookingConsent{Statement: "ja tack"}, "cal_"+b.ID, T0)
	})
}

// ContactRow reads a booking's stored contact columns (name, first and last
// name, phone, e-mail, service and destination address, consent
// statement), key id and blind index.
func ContactRow(tb testing.TB, db *sqlstore.DB, id string) (values []string, keyID, emailIndex, phoneIndex string) {
	tb.Helper()
	values = make([]string, 8)
	dest := []any{}
	for i := range values {
		dest = append(dest, &values[i])
	}
	var key *string
	dest = append(dest, &key, &emailIndex, &phoneIndex)
	err := db.R().QueryRowContext(context.Background(), `SELECT customer_name, customer_first_name, customer_last_name,
		customer_phone, customer_email, service_address, destination_address, consent_statement,
		contact_key_id, customer_email_index, customer_phone_index FROM bookings WHERE id = $1`, id).Scan(dest...)
	if err != nil {
		tb.Fatal(err)
	}
	if key != nil {
		keyID = *key
	}
	return values, keyID, emailIndex, phoneIndex
}
