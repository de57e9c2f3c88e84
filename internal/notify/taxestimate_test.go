package notify_test

import (
	"strings"
	"testing"
	"time"

	"bokat"
	"bokat/internal/notify/notifytest"
	"bokat/internal/sqlstore"
	"bokat/internal/sqlstore/sqlstoretest"
)

// TestMessagesStateTheTaxEstimate checks, through the SMTP server and on
// both engines, that the customer's confirmation states the preliminary
// estimate after the booked price with its conditions, and the provider's
// message states it and what to ask for at invoicing; a new time states the new
// figure; a cancellation and a booking without an estimate say nothing of it.
func TestMessagesStateTheTaxEstimate(t *testing.T) {
	sqlstoretest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		e := newEnv(t, db)
		rot := &bokat.TaxReductionEstimate{Kind: "rot", RatePercent: 30, LabourPercent: 80, LabourSEK: 1196,
			ReductionSEK: 358, RulesVersion: "rot_2026-01-01"}

		b := sampleBooking("sv-SE")
		b.TaxReduction = rot
		e.bookings.Put(t, b)
		e.queue(t, b.ID, bokat.EventBookingConfirmed)
		e.runOnce(t)
		msgs := e.smtp.Wait(t, 2)
		cust := received(t, msgs, customerEmail)
		contains(t, "customer confirmation", cust.Text, "Pris: 1 495 kr",
			"Preliminärt rotavdrag: cirka 358 kr (30 % av arbetskostnaden 1 196 kr inkl. moms), så att du skulle betala cirka 1 137 kr",
			"Preliminär uppskattning", "inte det bokade priset", "75 000 kr", "Bokat vet inte hur mycket du har kvar",
			"äger bostaden och bor i den", "personnummer", "Bokat samlar inte in personnummer")
		if strings.Index(cust.Text, "Pris:") > strings.Index(cust.Text, "Preliminärt rotavdrag") {
			t.Errorf("the estimate comes before the booked price:\n%s", cust.Text)
		}
		prov := received(t, msgs, providerEmail)
		contains(t, "provider message", prov.Text, "Pris: 1 495 kr",
			"Preliminärt rotavdrag för kunden: cirka 358 kr (30 % av arbetskostnaden 1 196 kr inkl. moms, 80 % av priset enligt er uppgift)",
			"fakturamodellen", "kundens personnummer och fastighetsbeteckningen", "lägenhetsnumret", "Bokat samlar inte in personnummer")

		en := sampleBooking("en-GB")
		en.TaxReduction = &bokat.TaxReductionEstimate{Kind: "rut", RatePercent: 50, LabourPercent: 100, LabourSEK: 1495,
			ReductionSEK: 747, RulesVersion: "rut_2025-01-01"}
		e.bookings.Put(t, en)
		e.queue(t, en.ID, bokat.EventBookingConfirmed)
		e.runOnce(t)
		msgs = e.smtp.Wait(t, 4)
		enText := received(t, msgs[2:], customerEmail).Text
		contains(t, "English customer confirmation", enText,
			"Preliminary RUT deduction: about SEK 747 (50 % of the labour cost of SEK 1,495 incl. VAT), so you would pay about SEK 748",
			"not the booked price", "personal identity number", "Bokat does not collect")
		if strings.Contains(enText, "own the home") {
			t.Errorf("a RUT estimate states ROT's ownership rule:\n%s", enText)
		}

		plain := sampleBooking("sv-SE")
		e.bookings.Put(t, plain)
		e.queue(t, plain.ID, bokat.EventBookingConfirmed)
		e.runOnce(t)
		msgs = e.smtp.Wait(t, 6)
		for _, r := range msgs[4:] {
			if text := notifytest.Parse(t, r.Data).Text; strings.Contains(text, "avdrag") || strings.Contains(text, "personnummer") {
				t.Errorf("a booking without estimate mentions a deduction:\n%s", text)
			}
		}

		// A new time states the booking's new figure (the moved-to option's).
		b.SlotStart, b.SlotEnd = b.SlotStart.Add(24*time.Hour), b.SlotEnd.Add(24*time.Hour)
		b.RescheduledAt, b.Sequence = e.clk.Now(), 1
		b.TaxReduction = &bokat.TaxReductionEstimate{Kind: "rot", RatePercent: 30, LabourPercent: 50, LabourSEK: 748,
			ReductionSEK: 224, RulesVersion: "rot_2026-01-01"}
		e.bookings.Put(t, b)
		e.queue(t, b.ID, bokat.EventBookingRescheduled)
		e.runOnce(t)
		msgs = e.smtp.Wait(t, 8)
		contains(t, "customer reschedule", received(t, msgs[6:], customerEmail).Text, "flyttats till en ny tid",
			"Preliminärt rotavdrag: cirka 224 kr (30 % av arbetskostnaden 748 kr inkl. moms), så att du skulle betala cirka 1 271 kr",
			"personnummer")
		contains(t, "provider reschedule", received(t, msgs[6:], providerEmail).Text,
			"Preliminärt rotavdrag för kunden: cirka 224 kr (30 % av arbetskostnaden 748 kr inkl. moms, 50 % av priset enligt er uppgift)",
			"kundens personnummer och fastighetsbeteckningen")

		b.Status, b.Sequence = "cancelled", 2
		e.bookings.Put(t, b)
		e.queue(t, b.ID, bokat.EventBookingCancelled)
		e.runOnce(t)
		msgs = e.smtp.Wait(t, 10)
		for _, r := range msgs[8:] {
			if strings.Contains(notifytest.Parse(t, r.Data).Text, "rotavdrag") {
				t.Errorf("a cancellation mentions the estimate")
			}
		}
	})
}
