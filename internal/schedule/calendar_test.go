package schedule

import (
	"testing"
	"time"
)

func TestIsNonWorkingDay(t *testing.T) {
	t.Parallel()
	// Dates checked by hand: Easter Sunday is 5 April 2026 and 28 March 2027;
	// långfredagen is two days before, annandag påsk one day after, Kristi
	// himmelsfärdsdag 39 days after and pingstdagen 49 days after Easter.
	// Midsommarafton is the Friday from 19 to 25 June, alla helgons dag the
	// Saturday from 31 October to 6 November.
	want := map[Date]string{
		{2026, time.January, 1}:   "nyårsdagen",
		{2026, time.January, 6}:   "trettondedag jul",
		{2026, time.April, 3}:     "långfredagen",
		{2026, time.April, 5}:     "påskdagen",
		{2026, time.April, 6}:     "annandag påsk",
		{2026, time.May, 1}:       "första maj",
		{2026, time.May, 14}:      "Kristi himmelsfärdsdag",
		{2026, time.May, 24}:      "pingstdagen",
		{2026, time.June, 6}:      "nationaldagen",
		{2026, time.June, 19}:     "midsommarafton",
		{2026, time.June, 20}:     "midsommardagen",
		{2026, time.October, 31}:  "alla helgons dag",
		{2026, time.December, 24}: "julafton",
		{2026, time.December, 25}: "juldagen",
		{2026, time.December, 26}: "annandag jul",
		{2026, time.December, 31}: "nyårsafton",
		{2027, time.January, 1}:   "nyårsdagen",
		{2027, time.January, 6}:   "trettondedag jul",
		{2027, time.March, 26}:    "långfredagen",
		{2027, time.March, 28}:    "påskdagen",
		{2027, time.March, 29}:    "annandag påsk",
		{2027, time.May, 1}:       "första maj",
		{2027, time.May, 6}:       "Kristi himmelsfärdsdag",
		{2027, time.May, 16}:      "pingstdagen",
		{2027, time.June, 6}:      "nationaldagen",
		{2027, time.June, 25}:     "midsommarafton",
		{2027, time.June, 26}:     "midsommardagen",
		{2027, time.November, 6}:  "alla helgons dag",
		{2027, time.December, 24}: "julafton",
		{2027, time.December, 25}: "juldagen",
		{2027, time.December, 26}: "annandag jul",
		{2027, time.December, 31}: "nyårsafton",
	}
	for d, name := range want {
		t.Run(d.String()+" "+name, func(t *testing.T) {
			t.Parallel()
			got, gotName := IsNonWorkingDay(d)
			if !got || gotName != name {
				t.Errorf("IsNonWorkingDay(%s) = %v, %q; want true, %q", d, got, gotName, name)
			}
		})
	}

	// Every other day of both years works, including the days people often
	// take for holidays but the law does not: skärtorsdagen, påskafton,
	// annandag pingst (abolished 2005), valborgsmässoafton, trettondagsafton
	// and allhelgonaafton.
	t.Run("no other day of 2026 and 2027", func(t *testing.T) {
		t.Parallel()
		for d := (Date{2026, time.January, 1}); d.Year < 2028; d = d.AddDays(1) {
			got, name := IsNonWorkingDay(d)
			if _, ok := want[d]; got != ok {
				t.Errorf("IsNonWorkingDay(%s) = %v, %q; want %v", d, got, name, ok)
			}
		}
	})
}

func TestDate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"DateOf winter instant", DateOf(time.Date(2026, 11, 21, 23, 30, 0, 0, time.UTC)), Date{2026, time.November, 22}},
		{"DateOf summer instant", DateOf(time.Date(2026, 6, 19, 22, 30, 0, 0, time.UTC)), Date{2026, time.June, 20}},
		{"AddDays over a year", Date{2026, time.December, 31}.AddDays(1), Date{2027, time.January, 1}},
		{"AddDays back over DST", Date{2027, time.March, 29}.AddDays(-1), Date{2027, time.March, 28}},
		{"Weekday", Date{2026, time.November, 21}.Weekday(), time.Saturday},
		{"Valid 29 February in a leap year", Date{2028, time.February, 29}.Valid(), true},
		{"Valid 29 February otherwise", Date{2027, time.February, 29}.Valid(), false},
		{"Valid month 13", Date{2027, 13, 1}.Valid(), false},
		{"At 08:00 in winter", Date{2026, time.November, 24}.At(8 * 60).UTC(), time.Date(2026, 11, 24, 7, 0, 0, 0, time.UTC)},
		{"At 08:00 on spring DST day", Date{2027, time.March, 28}.At(8 * 60).UTC(), time.Date(2027, 3, 28, 6, 0, 0, 0, time.UTC)},
		{"At 24:00 on spring DST day", Date{2027, time.March, 28}.At(MinutesPerDay).UTC(), time.Date(2027, 3, 28, 22, 0, 0, 0, time.UTC)},
		{"At 08:00 on autumn DST day", Date{2026, time.October, 25}.At(8 * 60).UTC(), time.Date(2026, 10, 25, 7, 0, 0, 0, time.UTC)},
		{"String", Date{2027, time.March, 8}.String(), "2027-03-08"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.got != tt.want {
				t.Errorf("got %v, want %v", tt.got, tt.want)
			}
		})
	}
}

func TestStockholm(t *testing.T) {
	t.Parallel()
	if got := Stockholm().String(); got != "Europe/Stockholm" {
		t.Errorf("Stockholm() = %q, want Europe/Stockholm", got)
	}
	if Stockholm() != Stockholm() {
		t.Error("Stockholm() returned different locations")
	}
}
