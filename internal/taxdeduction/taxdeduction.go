// Package taxdeduction holds the Swedish household tax reduction rules, ROT
// and RUT, as data with effective dates, and computes the preliminary
// estimate an option or a booking shows: the reduction the customer would
// get on the labour part of a price if they meet the conditions and have
// enough of the yearly allowance left.
//
// The rules are one data file, rules.json, embedded in the binary. Each rule
// names its kind, its rate of the labour cost including VAT, the dates of
// payment it applies to, the yearly caps and its sources; each kind states
// what counts and the conditions (in Swedish and English) that every
// estimate repeats. A change in the law is a new rule in the file with a
// new version and its own dates; a rule once published is never edited or
// removed, because bookings keep the version that gave their figure.
//
// Estimates are labelled preliminary. The caps are stated, never applied:
// Bokat cannot know how much of the allowance a customer has left, and
// several people of a household may share one job's reduction.
package taxdeduction

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"bokat"
	"bokat/internal/schedule"
)

//go:embed rules.json
var rulesFile []byte

// Kind is the kind of reduction a job type gives: ROT, RUT or none.
type Kind string

// Kinds.
const (
	ROT  Kind = bokat.TaxReductionROT
	RUT  Kind = bokat.TaxReductionRUT
	None Kind = "none"
)

// Valid reports whether k is ROT, RUT or None.
func (k Kind) Valid() bool { return k == ROT || k == RUT || k == None }

// Rules are the loaded rules. They are read-only once loaded.
type Rules struct {
	// LabelSV and LabelEN label every estimate as preliminary.
	LabelSV, LabelEN string
	// Sources are the cited sources by id.
	Sources map[string]string
	kinds   map[Kind]KindInfo
	rules   []Rule
}

// KindInfo is what a kind of reduction covers and the conditions every
// estimate of it states.
type KindInfo struct {
	Kind               Kind
	LabelSV, LabelEN   string
	CountsSV, CountsEN string
	Conditions         []Condition
}

// Condition is one condition of a reduction, in Swedish and English.
type Condition struct {
	ID, SV, EN string
}

// Rule is one rule with its effective dates: it applies to work of its
// kind paid on PaidFrom through PaidUntil (open when zero), Stockholm
// calendar dates.
type Rule struct {
	// Version names the rule ("rot_2026-01-01"); it never changes meaning.
	Version     string
	Kind        Kind
	RatePercent int
	PaidFrom    schedule.Date
	PaidUntil   schedule.Date // zero: no end yet
	// YearlyCapSEK is the cap per person and year of ROT and RUT together;
	// KindYearlyCapSEK the cap of this kind alone. Both are stated with
	// every estimate and never applied to it.
	YearlyCapSEK, KindYearlyCapSEK int64
	// Sources are the citations of the rule, as texts.
	Sources []string
}

// appliesOn reports whether the rule covers work paid on d.
func (r Rule) appliesOn(d schedule.Date) bool {
	if d.Before(r.PaidFrom) {
		return false
	}
	return r.PaidUntil == (schedule.Date{}) || !r.PaidUntil.Before(d)
}

// Load returns the embedded rules, parsed strictly and checked once per
// process: they are fixed at build time and read-only, so every caller
// shares one value. An error means the binary was built with broken rules.
func Load() (*Rules, error) { return loaded() }

var loaded = sync.OnceValues(func() (*Rules, error) { return parse(rulesFile) })

type fileRules struct {
	LabelSV string            `json:"estimate_label_sv"`
	LabelEN string            `json:"estimate_label_en"`
	Sources map[string]string `json:"sources"`
	Kinds   []struct {
		Kind       Kind   `json:"kind"`
		LabelSV    string `json:"label_sv"`
		LabelEN    string `json:"label_en"`
		CountsSV   string `json:"counts_sv"`
		CountsEN   string `json:"counts_en"`
		Conditions []struct {
			ID string `json:"id"`
			SV string `json:"sv"`
			EN string `json:"en"`
		} `json:"conditions"`
	} `json:"kinds"`
	Rules []struct {
		Version          string   `json:"version"`
		Kind             Kind     `json:"kind"`
		RatePercent      int      `json:"rate_percent"`
		PaidFrom         string   `json:"paid_from"`
		PaidUntil        string   `json:"paid_until"`
		YearlyCapSEK     int64    `json:"yearly_cap_sek"`
		KindYearlyCapSEK int64    `json:"kind_yearly_cap_sek"`
		Sources          []string `json:"sources"`
	} `json:"rules"`
}

func parse(data []byte) (*Rules, error) {
	var f fileRules
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("taxdeduction: decode rules.json: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("taxdeduction: decode rules.json: unexpected data after the top-level value")
	}
	r := &Rules{LabelSV: f.LabelSV, LabelEN: f.LabelEN, Sources: f.Sources, kinds: map[Kind]KindInfo{}}
	var errs []error
	addf := func(format string, args ...any) { errs = append(errs, fmt.Errorf("taxdeduction: "+format, args...)) }
	if r.LabelSV == "" || r.LabelEN == "" {
		addf("estimate_label_sv and estimate_label_en are required")
	}
	for _, fk := range f.Kinds {
		if fk.Kind != ROT && fk.Kind != RUT {
			addf("kind %q is not rot or rut", fk.Kind)
		}
		if _, dup := r.kinds[fk.Kind]; dup {
			addf("kind %q is given twice", fk.Kind)
		}
		k := KindInfo{Kind: fk.Kind, LabelSV: fk.LabelSV, LabelEN: fk.LabelEN, CountsSV: fk.CountsSV, CountsEN: fk.CountsEN}
		for _, c := range fk.Conditions {
			if c.ID == "" || c.SV == "" || c.EN == "" {
				addf("kind %s: every condition needs id, sv and en", fk.Kind)
			}
			k.Conditions = append(k.Conditions, Condition{ID: c.ID, SV: c.SV, EN: c.EN})
		}
		if k.LabelSV == "" || k.LabelEN == "" || k.CountsSV == "" || k.CountsEN == "" || len(k.Conditions) == 0 {
			addf("kind %s: labels, counts and conditions are required", fk.Kind)
		}
		r.kinds[fk.Kind] = k
	}
	versions := map[string]bool{}
	for _, fr := range f.Rules {
		rule := Rule{Version: fr.Version, Kind: fr.Kind, RatePercent: fr.RatePercent,
			YearlyCapSEK: fr.YearlyCapSEK, KindYearlyCapSEK: fr.KindYearlyCapSEK}
		var err error
		if rule.PaidFrom, err = parseDate(fr.PaidFrom); err != nil {
			addf("rule %s: paid_from: %v", fr.Version, err)
		}
		if fr.PaidUntil != "" {
			if rule.PaidUntil, err = parseDate(fr.PaidUntil); err != nil {
				addf("rule %s: paid_until: %v", fr.Version, err)
			} else if rule.PaidUntil.Before(rule.PaidFrom) {
				addf("rule %s: paid_until is before paid_from", fr.Version)
			}
		}
		if fr.Version == "" || versions[fr.Version] {
			addf("rule version %q is empty or given twice", fr.Version)
		}
		versions[fr.Version] = true
		if _, ok := r.kinds[fr.Kind]; !ok {
			addf("rule %s: kind %q is not described under kinds", fr.Version, fr.Kind)
		}
		if fr.RatePercent <= 0 || fr.RatePercent > 100 {
			addf("rule %s: rate_percent must be 1 to 100", fr.Version)
		}
		if fr.YearlyCapSEK <= 0 || fr.KindYearlyCapSEK <= 0 || fr.KindYearlyCapSEK > fr.YearlyCapSEK {
			addf("rule %s: caps must be positive, the kind's at most the yearly cap", fr.Version)
		}
		if len(fr.Sources) == 0 {
			addf("rule %s: at least one source is required", fr.Version)
		}
		for _, s := range fr.Sources {
			text, ok := f.Sources[s]
			if !ok {
				addf("rule %s: source %q is not under sources", fr.Version, s)
			}
			rule.Sources = append(rule.Sources, text)
		}
		r.rules = append(r.rules, rule)
	}
	// Two rules of one kind must never cover the same day.
	for i, a := range r.rules {
		for _, b := range r.rules[i+1:] {
			if a.Kind == b.Kind && overlap(a, b) {
				addf("rules %s and %s cover the same days", a.Version, b.Version)
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return r, nil
}

func overlap(a, b Rule) bool {
	endsBefore := func(x, y Rule) bool { return x.PaidUntil != (schedule.Date{}) && x.PaidUntil.Before(y.PaidFrom) }
	return !endsBefore(a, b) && !endsBefore(b, a)
}

func parseDate(s string) (schedule.Date, error) {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return schedule.Date{}, fmt.Errorf("%q is not a date (YYYY-MM-DD)", s)
	}
	return schedule.NewDate(t.Year(), t.Month(), t.Day()), nil
}

// Kind returns what a kind of reduction covers and its conditions.
func (r *Rules) Kind(k Kind) (KindInfo, bool) {
	info, ok := r.kinds[k]
	return info, ok
}

// All returns every rule in the order of the data file.
func (r *Rules) All() []Rule { return slices.Clone(r.rules) }

// At returns the rule of the kind that applies to work paid on day (a
// Stockholm calendar date), or false when none does.
func (r *Rules) At(k Kind, day schedule.Date) (Rule, bool) {
	for _, rule := range r.rules {
		if rule.Kind == k && rule.appliesOn(day) {
			return rule, true
		}
	}
	return Rule{}, false
}

// Version returns the rule of a version.
func (r *Rules) Version(v string) (Rule, bool) {
	for _, rule := range r.rules {
		if rule.Version == v {
			return rule, true
		}
	}
	return Rule{}, false
}

// Job is what an estimate is computed from: all of it is carried by a
// signed booking option, so a search, its confirmation and the booking's
// status compute the same figure.
type Job struct {
	// Kind is the catalog's kind of the job type.
	Kind Kind
	// AmountSEK is the price the option shows, in whole SEK incl. VAT.
	AmountSEK int64
	// Labour is the provider's stated labour share of AmountSEK.
	Labour bokat.LabourShare
	// PaidOn is the day the work is assumed paid: Bokat takes the job's
	// day (the provider invoices after the work).
	PaidOn schedule.Date
}

// Estimate returns the preliminary reduction of a job, or false when there
// is none to give: the job type gives no reduction, the provider has not
// stated the labour part of the price, or no rule covers the day. The
// labour part is AmountSEK × Labour.Percent / 100 rounded to whole SEK
// (half up); the reduction is RatePercent of it, rounded down to whole SEK
// so the estimate never overstates. The caps are not applied.
func (r *Rules) Estimate(j Job) (bokat.TaxReductionEstimate, bool) {
	if j.Kind != ROT && j.Kind != RUT || !j.Labour.Stated || j.Labour.Percent < 0 || j.Labour.Percent > 100 || j.AmountSEK < 0 {
		return bokat.TaxReductionEstimate{}, false
	}
	rule, ok := r.At(j.Kind, j.PaidOn)
	if !ok {
		return bokat.TaxReductionEstimate{}, false
	}
	labour := (j.AmountSEK*int64(j.Labour.Percent) + 50) / 100
	return bokat.TaxReductionEstimate{
		Kind: string(rule.Kind), RatePercent: rule.RatePercent, LabourPercent: j.Labour.Percent,
		LabourSEK: labour, ReductionSEK: labour * int64(rule.RatePercent) / 100, RulesVersion: rule.Version,
	}, true
}
