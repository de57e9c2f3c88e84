package provider

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"bokat/internal/supply"
	"bokat/internal/web"
)

// The supply file's checks refuse in English, by field path
// ("services[0].price_sek: must be a whole number from 1 to 1000000"),
// which suits the supply file's command line. The pages say the same in
// their own language: problemText names the field as the page does and
// translates the reasons the hours, prices and postcodes forms can meet;
// a reason it does not know is said generically (Swedish) or kept as the
// checks wrote it (English).

// fieldLabels name the supply file's fields as the pages do.
var fieldLabels = map[string][2]string{
	"price_sek":          {"Pris", "Price"},
	"unit_price_sek":     {"Pris per enhet", "Price per unit"},
	"minimum_charge_sek": {"Lägsta debitering", "Minimum charge"},
	"labour_percent":     {"Andel arbetskostnad", "Labour share"},
	"postcodes":          {"Postnummer", "Postcodes"},
	"hours":              {"Öppettider", "Hours"},
	"min_notice_minutes": {"Framförhållning", "Notice"},
	"horizon_days":       {"Bokningsbar tid framåt", "Booking horizon"},
	"services":           {"Tjänster", "Services"},
}

// weekdayNames name the hours' weekday keys.
var weekdayNames = map[string][2]string{
	"monday": {"måndag", "Monday"}, "tuesday": {"tisdag", "Tuesday"}, "wednesday": {"onsdag", "Wednesday"},
	"thursday": {"torsdag", "Thursday"}, "friday": {"fredag", "Friday"}, "saturday": {"lördag", "Saturday"},
	"sunday": {"söndag", "Sunday"}, "weekdays": {"vardagar", "weekdays"},
}

// reasonTexts translate the checks' reasons; each pattern's groups fill
// the Swedish text's verbs in order.
var reasonTexts = []struct {
	pattern *regexp.Regexp
	sv      string
}{
	{regexp.MustCompile(`^must be a whole number from (-?\d+) to (-?\d+)$`), "ska vara ett heltal från %s till %s"},
	{regexp.MustCompile(`^must be a whole number$`), "ska vara ett heltal"},
	{regexp.MustCompile(`^is required$`), "måste fyllas i"},
	{regexp.MustCompile(`^must be text$`), "ska vara text"},
	{regexp.MustCompile(`^must be a list$`), "ska vara en lista"},
	{regexp.MustCompile(`^given twice$`), "är angivet två gånger"},
	{regexp.MustCompile(`^must list at least one postcode, prefix or range$`), "ange minst ett postnummer, en början på postnummer eller ett intervall"},
	{regexp.MustCompile(`^"([^"]*)" is not a postcode, a postcode prefix`), "%q är inte ett postnummer, en början på postnummer (1–4 siffror) eller ett intervall; svenska postnummer har 5 siffror från 100 00"},
	{regexp.MustCompile(`^range "([^"]*)" ends before it starts$`), "intervallet %q slutar innan det börjar"},
	{regexp.MustCompile(`^must give at least one working range`), "ange minst ett tidsintervall; utan öppettider finns inga lediga tider"},
	{regexp.MustCompile(`^"([^"]*)" is not a range like`), "%q är inte ett intervall som 08:00-17:00"},
	{regexp.MustCompile(`^"([^"]*)" is not a range of clock times$`), "%q är inte ett intervall av klockslag"},
	{regexp.MustCompile(`^"([^"]*)" must end after it starts, within one day$`), "%q måste sluta efter att det börjar, samma dag"},
	{regexp.MustCompile(`^(\w+): (\S+) overlaps (\S+)$`), "%s: %s överlappar %s"},
}

var pathPart = regexp.MustCompile(`^([a-z_]+)(?:\[(\d+)\])?$`)

// problemText says the supply checks' problems in the page's language
// (web.EN or Swedish), one "field: reason" per problem.
func problemText(problems []supply.Problem, lang string) string {
	en := 0
	if lang == web.EN {
		en = 1
	}
	parts := make([]string, 0, len(problems))
	for _, p := range problems {
		label := fieldLabel(p.Path, en)
		reason := p.Message
		if en == 0 {
			reason = swedishReason(p.Message)
		}
		if label == "" {
			parts = append(parts, reason)
			continue
		}
		parts = append(parts, label+": "+reason)
	}
	return strings.Join(parts, "; ")
}

// fieldLabel names a problem's path ("services[1].price_sek" is "Pris
// (tjänst 2)", "hours.monday" is "Öppettider, måndag"); an unknown field
// keeps its path.
func fieldLabel(path string, en int) string {
	if path == "" {
		return ""
	}
	var label, item, day string
	for seg := range strings.SplitSeq(path, ".") {
		m := pathPart.FindStringSubmatch(seg)
		if m == nil {
			return path
		}
		if w, ok := weekdayNames[m[1]]; ok && label == fieldLabels["hours"][en] {
			day = w[en]
			continue
		}
		l, ok := fieldLabels[m[1]]
		if !ok {
			return path
		}
		label = l[en]
		if m[2] != "" && m[1] == "services" {
			n, _ := strconv.Atoi(m[2])
			item = fmt.Sprintf([2]string{" (tjänst %d)", " (service %d)"}[en], n+1)
			label = ""
		}
	}
	if label == "" {
		label = fieldLabels["services"][en]
	}
	if day != "" {
		label += ", " + day
	}
	return label + item
}

// swedishReason translates a reason, or says it generically.
func swedishReason(msg string) string {
	for _, r := range reasonTexts {
		m := r.pattern.FindStringSubmatch(msg)
		if m == nil {
			continue
		}
		args := make([]any, 0, len(m)-1)
		for _, g := range m[1:] {
			if day, ok := weekdayNames[g]; ok {
				g = day[0]
			}
			args = append(args, g)
		}
		return fmt.Sprintf(r.sv, args...)
	}
	return "värdet godtas inte"
}
