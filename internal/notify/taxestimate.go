package notify

import (
	"fmt"
	"strings"

	"bokat"
	"bokat/internal/taxdeduction"
)

// kindLabel names a reduction kind ("rotavdrag", "RUT deduction").
func kindLabel(kind string, english bool) string {
	switch {
	case english:
		return strings.ToUpper(kind) + " deduction"
	default:
		return kind + "avdrag"
	}
}

// customerTaxEstimate writes the booking's preliminary ROT/RUT estimate into
// a customer message: the figure after the booked price, labelled as
// preliminary, then every condition of the kind — the yearly allowance,
// ROT's ownership rule, the personal identity number the provider asks for
// at invoicing. Nothing is written when the booking has no estimate.
func customerTaxEstimate(body *lines, b Booking, english bool) {
	e := b.TaxReduction
	if e == nil {
		return
	}
	after := max(int(int64(b.PriceSEK)-e.ReductionSEK), 0)
	label, figure := "Preliminärt "+kindLabel(e.Kind, false),
		fmt.Sprintf("cirka %s (%d %% av arbetskostnaden %s inkl. moms), så att du skulle betala cirka %s",
			priceLabel(int(e.ReductionSEK), false), e.RatePercent, priceLabel(int(e.LabourSEK), false), priceLabel(after, false))
	if english {
		label, figure = "Preliminary "+kindLabel(e.Kind, true),
			fmt.Sprintf("about %s (%d %% of the labour cost of %s incl. VAT), so you would pay about %s",
				priceLabel(int(e.ReductionSEK), true), e.RatePercent, priceLabel(int(e.LabourSEK), true), priceLabel(after, true))
	}
	body.row(label, figure)
	rules, err := taxdeduction.Load()
	if err != nil {
		return
	}
	text := rules.LabelSV
	if english {
		text = rules.LabelEN
	}
	if info, ok := rules.Kind(taxdeduction.Kind(e.Kind)); ok {
		for _, c := range info.Conditions {
			if english {
				text += "\n- " + c.EN
			} else {
				text += "\n- " + c.SV
			}
		}
	}
	body.WriteString(text + "\n")
}

// providerTaxEstimate writes the estimate into the provider's message, in
// Swedish: the figure from the provider's own labour share, and what the
// provider must ask the customer for when it invoices with the reduction.
func providerTaxEstimate(body *lines, b Booking) {
	e := b.TaxReduction
	if e == nil {
		return
	}
	body.row("Preliminärt "+kindLabel(e.Kind, false)+" för kunden",
		fmt.Sprintf("cirka %s (%d %% av arbetskostnaden %s inkl. moms, %d %% av priset enligt er uppgift); priset ovan är det bokade",
			priceLabel(int(e.ReductionSEK), false), e.RatePercent, priceLabel(int(e.LabourSEK), false), e.LabourPercent))
	ask, own := "kundens personnummer", ""
	if e.Kind == bokat.TaxReductionROT {
		ask += " och fastighetsbeteckningen, eller för en bostadsrätt föreningens organisationsnummer och lägenhetsnumret"
		own = " Rotavdrag kräver att kunden äger bostaden och bor i den."
	}
	body.WriteString("Kunden har fått en preliminär uppskattning av " + kindLabel(e.Kind, false) + "et. Fakturerar ni med avdrag " +
		"(fakturamodellen) behöver ni vid faktureringen fråga efter " + ask + "." + own + " Bokat samlar inte in personnummer. " +
		"Betalningen ska ske elektroniskt, och Skatteverket beslutar om avdraget.\n")
}
