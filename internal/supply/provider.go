package supply

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"bokat"
	"bokat/internal/catalog"
	"bokat/internal/schedule"
)

// Field groups of a provider's supply that the provider may manage itself
// (on its pages or through its API). Once a provider user has changed a
// group, an import keeps the stored group and no longer takes the file's
// (see docs/providers.md, "Who wins").
const (
	GroupHours     = "hours"     // weekly hours, hours of single dates, notice, horizon, pause
	GroupPrices    = "prices"    // services and their prices
	GroupPostcodes = "postcodes" // the postcodes served
	GroupBlocks    = "blocks"    // blocked time
)

// Groups lists the field groups in the order reports name them.
var Groups = []string{GroupHours, GroupPrices, GroupPostcodes, GroupBlocks}

// Fields returns a provider's supply as the fields of one provider of a
// supply file (its blocked periods aside), the form CheckProvider reads.
func Fields(p bokat.ProviderSupply, cat *catalog.Catalog) map[string]any {
	m := map[string]any{
		"id": p.ID, "name": p.Name, "email": p.Email, "active": p.Active,
		"min_notice_minutes": p.MinNoticeMinutes, "horizon_days": p.HorizonDays,
	}
	for k, v := range map[string]string{"city": p.City, "rating_label": p.RatingLabel, "phone": p.Phone} {
		if v != "" {
			m[k] = v
		}
	}
	m["postcodes"] = PostcodeEntries(p.Postcodes)
	m["hours"] = HoursEntries(p.Hours)
	services := make([]any, 0, len(p.Services))
	for _, s := range p.Services {
		services = append(services, ServiceEntry(s, cat))
	}
	m["services"] = services
	return m
}

// PostcodeEntries writes postcode ranges in the file's grammar.
func PostcodeEntries(rs []bokat.PostcodeRange) []any {
	out := make([]any, 0, len(rs))
	for _, r := range rs {
		out = append(out, PostcodeEntry(r))
	}
	return out
}

// PostcodeEntry writes one range in the file's grammar: "11345", the
// shortest prefix that covers exactly the range ("113"), or "A-B".
func PostcodeEntry(r bokat.PostcodeRange) string {
	for digits, scale := 1, 10000; digits <= 5; digits, scale = digits+1, scale/10 {
		if r.From%scale == 0 && r.To == r.From+scale-1 {
			return bokat.PostcodeKey(r.From)[:digits]
		}
	}
	return bokat.PostcodeKey(r.From) + "-" + bokat.PostcodeKey(r.To)
}

// HoursEntries writes weekly hours in the file's grammar: weekday names
// mapped to "HH:MM-HH:MM" ranges.
func HoursEntries(hours []bokat.WorkingRange) map[string]any {
	m := map[string]any{}
	for _, h := range hours {
		key := strings.ToLower(h.Weekday.String())
		list, _ := m[key].([]any)
		m[key] = append(list, schedule.ClockRange{Start: h.StartMinute, End: h.EndMinute}.String())
	}
	for k, v := range m {
		list := v.([]any)
		for i, s := range list {
			list[i] = strings.ReplaceAll(s.(string), "–", "-")
		}
		m[k] = list
	}
	return m
}

// ServiceEntry writes one offer in the file's grammar.
func ServiceEntry(s bokat.ProviderService, cat *catalog.Catalog) map[string]any {
	m := map[string]any{"service_id": s.ServiceID}
	svc, ok := cat.Service(s.ServiceID)
	if ok && svc.PricingModel.PerUnit() {
		m["unit_price_sek"] = s.UnitPriceSEK
		if s.MinimumChargeSEK > 0 {
			m["minimum_charge_sek"] = s.MinimumChargeSEK
		}
	} else {
		m["price_sek"] = s.PriceSEK
	}
	if s.Labour.Stated {
		m["labour_percent"] = s.Labour.Percent
	}
	switch d := s.Duration; {
	case d.FixedMinutes > 0:
		m["duration"] = map[string]any{"fixed_minutes": d.FixedMinutes}
	case d.MinutesPerUnit > 0:
		dm := map[string]any{"minutes_per_unit": d.MinutesPerUnit}
		if d.MinimumMinutes > 0 {
			dm["minimum_minutes"] = d.MinimumMinutes
		}
		m["duration"] = dm
	}
	return m
}

// CheckProvider checks the fields of one provider (Fields, with a group
// replaced) by every rule of a supply file, the catalog's included, and
// returns the provider they describe, or the problems found, each with its
// path within the provider ("services[1].price_sek") and no line.
func CheckProvider(cat *catalog.Catalog, fields map[string]any) (bokat.ProviderSupply, []Problem) {
	doc, err := json.Marshal(map[string]any{"version": 1, "providers": []any{fields}})
	if err != nil {
		return bokat.ProviderSupply{}, []Problem{{Message: fmt.Sprintf("cannot be read: %v", err)}}
	}
	ps, err := Parse("provider", doc, cat)
	if err != nil {
		errs, ok := err.(*Errors)
		if !ok {
			return bokat.ProviderSupply{}, []Problem{{Message: err.Error()}}
		}
		out := make([]Problem, 0, len(errs.Problems))
		for _, p := range errs.Problems {
			p.Line, p.Column = 0, 0
			p.Path = strings.TrimPrefix(strings.TrimPrefix(p.Path, "providers[0]"), ".")
			out = append(out, p)
		}
		return bokat.ProviderSupply{}, out
	}
	return ps[0], nil
}

// ProblemText joins problems into one message: "path: message; ...".
func ProblemText(problems []Problem) string {
	parts := make([]string, 0, len(problems))
	for _, p := range problems {
		if p.Path != "" {
			parts = append(parts, p.Path+": "+p.Message)
		} else {
			parts = append(parts, p.Message)
		}
	}
	return strings.Join(parts, "; ")
}

// ParseClockRange reads a range of the file's hours grammar,
// "08:00-17:00" (end at most 24:00, after the start).
func ParseClockRange(s string) (schedule.ClockRange, error) { return parseClockRange(s) }

// ParseDate reads a date "2026-03-10" as a Stockholm date.
func ParseDate(s string) (schedule.Date, error) {
	t, err := time.Parse("2006-01-02", strings.TrimSpace(s))
	if err != nil {
		return schedule.Date{}, fmt.Errorf("%q is not a date like 2026-03-10", s)
	}
	return schedule.NewDate(t.Year(), t.Month(), t.Day()), nil
}
