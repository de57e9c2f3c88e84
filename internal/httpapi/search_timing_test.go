package httpapi

import (
	"slices"
	"testing"
	"time"

	"bokat/internal/clocktest"
	"bokat/internal/schedule"
)

// TestSearchOverHTTPKeepsTheUsersWords: a clock time restricts the options
// to slots starting in that hour, and requested_time_window.not_understood
// lists the words that did not decide the window (absent when all did),
// validated against the contract.
func TestSearchOverHTTPKeepsTheUsersWords(t *testing.T) {
	t.Parallel()
	thursday := time.Date(2026, 12, 3, 10, 0, 0, 0, schedule.Stockholm())
	clock := clocktest.New(thursday)
	e := sqliteEnv(t, func(c *envConfig) { c.Now = clock.Now }).withDemoSupply()
	search := func(text, locale string) response {
		t.Helper()
		r := e.do(request{Method: "POST", Path: "/v1/booking-options", Body: with(faucetSearch(), func(b map[string]any) {
			b["timing"] = map[string]any{"preferred_time_text": text}
			b["locale"] = locale
		})})
		if r.Status != 200 {
			t.Fatalf("%q: status %d: %s", text, r.Status, r.Body)
		}
		return r
	}
	notUnderstood := func(r response) []string {
		w := r.JSON["requested_time_window"].(map[string]any)
		raw, present := w["not_understood"]
		if !present {
			return nil
		}
		var out []string
		for _, s := range raw.([]any) {
			out = append(out, s.(string))
		}
		if len(out) == 0 {
			t.Errorf("not_understood is present but empty: %v", w)
		}
		return out
	}

	// "kl 9": slots starting from 09:00 to 09:59 on Friday 4 December.
	for _, tc := range []struct{ text, locale string }{{"i morgon kl 9", "sv-SE"}, {"tomorrow at 9", "en"}} {
		r := search(tc.text, tc.locale)
		options, _ := r.JSON["options"].([]any)
		if len(options) == 0 {
			t.Fatalf("%q: no options: %s", tc.text, r.Body)
		}
		from, to := time.Date(2026, 12, 4, 9, 0, 0, 0, schedule.Stockholm()), time.Date(2026, 12, 4, 10, 0, 0, 0, schedule.Stockholm())
		for _, raw := range options {
			slot := raw.(map[string]any)["slot"].(map[string]any)
			start, err := time.Parse(time.RFC3339, slot["start_at"].(string))
			if err != nil || start.Before(from) || !start.Before(to) {
				t.Errorf("%q: option starting %v, want from %s to before %s", tc.text, slot["start_at"], from, to)
			}
		}
		if got := notUnderstood(r); got != nil {
			t.Errorf("%q: not_understood = %q, want absent", tc.text, got)
		}
	}

	for _, tc := range []struct {
		text, locale string
		want         []string
	}{
		{"nästa vecka när lönen kommit", "sv-SE", []string{"när lönen kommit"}},
		{"i morgon eller tisdag", "sv-SE", []string{"tisdag"}},
		{"next week, or maybe after the school run", "en", []string{"after the school run"}},
		{"efter semestern", "sv-SE", []string{"efter semestern"}},
	} {
		if got := notUnderstood(search(tc.text, tc.locale)); !slices.Equal(got, tc.want) {
			t.Errorf("%q: not_understood = %q, want %q", tc.text, got, tc.want)
		}
	}
}
