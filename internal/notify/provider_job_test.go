package notify_test

import (
	"strings"
	"testing"

	"bokat"
	"bokat/internal/notify"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
)

// TestProviderMessageCarriesTheJob: the provider's message says what was
// priced — the quantity at the unit price and a minimum charge that
// decided the price — beside the slot and the address, in Swedish, with
// the invitation attached as before.
func TestProviderMessageCarriesTheJob(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newEnv(t, db)
		tests := []struct {
			name    string
			price   int
			pricing notify.Pricing
			want    []string
			notWant []string
		}{
			{"8 windows under the minimum charge", 720,
				notify.Pricing{PricingModel: "per_window", PriceType: "avg_unit", UnitPriceSEK: 72, Quantity: 8, Unit: "fönster", MinimumChargeSEK: 720},
				[]string{"Pris: 720 kr (fast pris)", "Omfattning: 8 fönster à 72 kr = 576 kr", "Lägsta debitering: 720 kr (gäller"}, nil},
			{"12.5 square metres above it", 563,
				notify.Pricing{PricingModel: "per_sqm", PriceType: "avg_unit", UnitPriceSEK: 45, Quantity: 12.5, Unit: "kvm", MinimumChargeSEK: 500},
				[]string{"Pris: 563 kr (fast pris)", "Omfattning: 12,5 kvm à 45 kr = 563 kr"}, []string{"Lägsta debitering"}},
			{"a flat price", 1495, notify.Pricing{PricingModel: "flat", PriceType: "avg_fixed"},
				[]string{"Pris: 1 495 kr (fast pris)"}, []string{"Omfattning", "Lägsta debitering"}},
			{"a starting price", 1495, notify.Pricing{PricingModel: "starting_price", PriceType: "starting_price"},
				[]string{"Pris: 1 495 kr (från-pris enligt villkoren)"}, []string{"fast pris"}},
		}
		for i, tc := range tests {
			b := sampleBooking("en-GB") // the provider's message is Swedish whatever the customer's locale
			b.PriceSEK, b.Pricing = tc.price, tc.pricing
			e.bookings.Put(t, b)
			e.queue(t, b.ID, bokat.EventBookingConfirmed)
			if n := e.runOnce(t); n != 2 {
				t.Fatalf("%s: claimed %d jobs, want 2", tc.name, n)
			}
			msgs := e.smtp.Wait(t, 2*(i+1))[2*i:]
			prov := received(t, msgs, providerEmail)
			contains(t, tc.name, prov.Text, append(tc.want, "Tid: måndag 2 mars 2026 kl. 09:00–11:00", "Adress: "+streetAddress,
				"Tjänst: Byte av köksblandare")...)
			for _, w := range tc.notWant {
				if strings.Contains(prov.Text, w) {
					t.Errorf("%s: the message says %q:\n%s", tc.name, w, prov.Text)
				}
			}
			if ev := invitation(t, prov, "invite.ics"); ev.Method != "REQUEST" || !ev.Start.Equal(b.SlotStart) {
				t.Errorf("%s: invitation %+v", tc.name, ev)
			}
		}
	})
}
