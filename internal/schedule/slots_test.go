package schedule

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// local returns the instant at which the Stockholm wall clock shows the given time.
func local(y int, m time.Month, d, h, min int) time.Time {
	return time.Date(y, m, d, h, min, 0, 0, Stockholm())
}

func utc(y int, m time.Month, d, h, min int) time.Time {
	return time.Date(y, m, d, h, min, 0, 0, time.UTC)
}

// startsByDay groups slot starts by Stockholm date as "HH:MM" wall-clock strings.
func startsByDay(tb testing.TB, slots []Interval) map[Date][]string {
	tb.Helper()
	out := map[Date][]string{}
	for _, s := range slots {
		d := DateOf(s.Start)
		out[d] = append(out[d], s.Start.In(Stockholm()).Format("15:04"))
	}
	return out
}

func TestSlotsDST(t *testing.T) {
	t.Parallel()
	threeHours := func(from, to time.Time) []Interval {
		return Slots(SlotParams{Hours: StandardHours(), From: from, To: to, Duration: 3 * time.Hour, Step: time.Hour})
	}
	tests := []struct {
		name      string
		slots     []Interval
		wantDays  []Date
		wantFirst map[Date]time.Time // first slot start of the day, UTC
	}{
		{
			// Spring change on Sunday 2027-03-28, which is also påskdagen:
			// långfredagen (26th) and annandag påsk (29th) are off too.
			name:  "spring 2027",
			slots: threeHours(local(2027, 3, 22, 0, 0), local(2027, 4, 3, 0, 0)),
			wantDays: []Date{
				{2027, 3, 22}, {2027, 3, 23}, {2027, 3, 24}, {2027, 3, 25},
				{2027, 3, 30}, {2027, 3, 31}, {2027, 4, 1}, {2027, 4, 2},
			},
			wantFirst: map[Date]time.Time{
				{2027, 3, 25}: utc(2027, 3, 25, 7, 0), // 08:00 CET
				{2027, 3, 30}: utc(2027, 3, 30, 6, 0), // 08:00 CEST
			},
		},
		{
			name:  "autumn 2026",
			slots: threeHours(local(2026, 10, 19, 0, 0), local(2026, 10, 31, 0, 0)),
			wantDays: []Date{
				{2026, 10, 19}, {2026, 10, 20}, {2026, 10, 21}, {2026, 10, 22}, {2026, 10, 23},
				{2026, 10, 26}, {2026, 10, 27}, {2026, 10, 28}, {2026, 10, 29}, {2026, 10, 30},
			},
			wantFirst: map[Date]time.Time{
				{2026, 10, 23}: utc(2026, 10, 23, 6, 0), // 08:00 CEST
				{2026, 10, 26}: utc(2026, 10, 26, 7, 0), // 08:00 CET
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			byDay := startsByDay(t, tt.slots)
			if len(byDay) != len(tt.wantDays) {
				t.Errorf("got slots on %d days, want %d: %v", len(byDay), len(tt.wantDays), byDay)
			}
			wantStarts := "08:00 09:00 10:00 11:00 12:00 13:00 14:00"
			for _, d := range tt.wantDays {
				if got := strings.Join(byDay[d], " "); got != wantStarts {
					t.Errorf("%s: got starts %q, want %q", d, got, wantStarts)
				}
			}
			for d, want := range tt.wantFirst {
				for _, s := range tt.slots {
					if DateOf(s.Start) == d {
						if !s.Start.Equal(want) || !s.End.Equal(want.Add(3*time.Hour)) {
							t.Errorf("%s: first slot %v–%v, want start %v", d, s.Start, s.End, want)
						}
						break
					}
				}
			}
			for _, s := range tt.slots {
				if s.Start.Location() != time.UTC || s.End.Location() != time.UTC {
					t.Errorf("slot %v not in UTC", s)
				}
			}
		})
	}
}

func TestSlotsOnDSTDay(t *testing.T) {
	t.Parallel()
	allDay := func(d time.Weekday, r ClockRange) WeeklyHours {
		var w WeeklyHours
		w[d] = []ClockRange{r}
		return w
	}
	tests := []struct {
		name       string
		hours      WeeklyHours
		day        Date
		duration   time.Duration
		wantCount  int
		wantFirst  time.Time
		wantLast   time.Time
		wantLength time.Duration
	}{
		{
			name:  "spring 2026 Sunday 08-17",
			hours: allDay(time.Sunday, ClockRange{8 * 60, 17 * 60}), day: Date{2026, 3, 29}, duration: 3 * time.Hour,
			wantCount: 7, wantFirst: utc(2026, 3, 29, 6, 0), wantLast: utc(2026, 3, 29, 12, 0),
		},
		{
			name:  "autumn 2026 Sunday 08-17",
			hours: allDay(time.Sunday, ClockRange{8 * 60, 17 * 60}), day: Date{2026, 10, 25}, duration: 3 * time.Hour,
			wantCount: 7, wantFirst: utc(2026, 10, 25, 7, 0), wantLast: utc(2026, 10, 25, 13, 0),
		},
		{
			// A 23-hour day: 02:00 does not exist, so 23 one-hour slots.
			name:  "spring 2026 Sunday 00-24",
			hours: allDay(time.Sunday, ClockRange{0, MinutesPerDay}), day: Date{2026, 3, 29}, duration: time.Hour,
			wantCount: 23, wantFirst: utc(2026, 3, 28, 23, 0), wantLast: utc(2026, 3, 29, 21, 0),
		},
		{
			// A 25-hour day on a wall-clock grid: 02:00 is offered once.
			name:  "autumn 2026 Sunday 00-24",
			hours: allDay(time.Sunday, ClockRange{0, MinutesPerDay}), day: Date{2026, 10, 25}, duration: time.Hour,
			wantCount: 24, wantFirst: utc(2026, 10, 24, 22, 0), wantLast: utc(2026, 10, 25, 22, 0),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Slots(SlotParams{
				Hours: tt.hours, From: tt.day.At(0), To: tt.day.At(MinutesPerDay),
				Duration: tt.duration, Step: time.Hour,
			})
			if len(got) != tt.wantCount {
				t.Fatalf("got %d slots, want %d: %v", len(got), tt.wantCount, got)
			}
			if !got[0].Start.Equal(tt.wantFirst) || !got[len(got)-1].Start.Equal(tt.wantLast) {
				t.Errorf("got first %v last %v, want %v and %v", got[0].Start, got[len(got)-1].Start, tt.wantFirst, tt.wantLast)
			}
			for i, s := range got {
				if s.Duration() != tt.duration {
					t.Errorf("slot %d lasts %v, want %v", i, s.Duration(), tt.duration)
				}
				if i > 0 && !got[i-1].Start.Before(s.Start) {
					t.Errorf("slot %d does not start after its predecessor", i)
				}
			}
		})
	}
}

func TestSlotsRules(t *testing.T) {
	t.Parallel()
	tue := Date{2026, 11, 24}
	base := SlotParams{
		Hours: StandardHours(), From: tue.At(0), To: tue.At(MinutesPerDay),
		Duration: 3 * time.Hour, Step: time.Hour,
	}
	with := func(f func(*SlotParams)) SlotParams {
		p := base
		f(&p)
		return p
	}
	tests := []struct {
		name string
		p    SlotParams
		want map[Date]string // wall-clock starts per day
	}{
		{"plain day", base, map[Date]string{tue: "08:00 09:00 10:00 11:00 12:00 13:00 14:00"}},
		{"busy excludes overlaps, touching allowed", with(func(p *SlotParams) {
			p.Busy = []Interval{{local(2026, 11, 24, 9, 0), local(2026, 11, 24, 10, 0)}}
		}), map[Date]string{tue: "10:00 11:00 12:00 13:00 14:00"}},
		{"busy at both ends, unsorted", with(func(p *SlotParams) {
			p.Busy = []Interval{
				{local(2026, 11, 24, 15, 0), local(2026, 11, 24, 15, 30)},
				{local(2026, 11, 24, 7, 0), local(2026, 11, 24, 9, 0)},
			}
		}), map[Date]string{tue: "09:00 10:00 11:00 12:00"}},
		{"earliest", with(func(p *SlotParams) { p.Earliest = local(2026, 11, 24, 10, 30) }),
			map[Date]string{tue: "11:00 12:00 13:00 14:00"}},
		{"earliest exactly on a start", with(func(p *SlotParams) { p.Earliest = local(2026, 11, 24, 11, 0) }),
			map[Date]string{tue: "11:00 12:00 13:00 14:00"}},
		{"limit", with(func(p *SlotParams) { p.Limit = 3 }), map[Date]string{tue: "08:00 09:00 10:00"}},
		{"window end holds the whole slot", with(func(p *SlotParams) { p.To = local(2026, 11, 24, 13, 0) }),
			map[Date]string{tue: "08:00 09:00 10:00"}},
		{"window start", with(func(p *SlotParams) { p.From = local(2026, 11, 24, 12, 15) }),
			map[Date]string{tue: "13:00 14:00"}},
		{"step 30 minutes", with(func(p *SlotParams) { p.Step = 30 * time.Minute; p.Duration = 8 * time.Hour }),
			map[Date]string{tue: "08:00 08:30 09:00"}},
		{"zero step is one hour", with(func(p *SlotParams) { p.Step = 0; p.Duration = 7 * time.Hour }),
			map[Date]string{tue: "08:00 09:00 10:00"}},
		{"daily range", with(func(p *SlotParams) { p.Daily = ClockRange{12 * 60, MinutesPerDay} }),
			map[Date]string{tue: "12:00 13:00 14:00"}},
		{"daily range outside hours", with(func(p *SlotParams) { p.Daily = ClockRange{17 * 60, 21 * 60} }), map[Date]string{}},
		{"whole working day", with(func(p *SlotParams) { p.Duration = 9 * time.Hour }), map[Date]string{tue: "08:00"}},
		{"longer than the working day", with(func(p *SlotParams) { p.Duration = 9*time.Hour + time.Minute }), map[Date]string{}},
		{"zero duration", with(func(p *SlotParams) { p.Duration = 0 }), map[Date]string{}},
		{"empty window", with(func(p *SlotParams) { p.To = p.From }), map[Date]string{}},
		{"earliest after window", with(func(p *SlotParams) { p.Earliest = p.To }), map[Date]string{}},
		{"split day, no job across the break", with(func(p *SlotParams) {
			p.Hours = WeeklyHours{time.Tuesday: {{8 * 60, 12 * 60}, {13 * 60, 17 * 60}}}
		}), map[Date]string{tue: "08:00 09:00 13:00 14:00"}},
		{"weekend has no hours", with(func(p *SlotParams) {
			p.From, p.To = local(2026, 11, 21, 0, 0), local(2026, 11, 23, 0, 0)
		}), map[Date]string{}},
		{"midsommar", with(func(p *SlotParams) {
			p.From, p.To, p.Duration = local(2026, 6, 18, 0, 0), local(2026, 6, 23, 0, 0), 9*time.Hour
		}), map[Date]string{{2026, 6, 18}: "08:00", {2026, 6, 22}: "08:00"}},
		{"christmas and new year", with(func(p *SlotParams) {
			p.From, p.To, p.Duration = local(2026, 12, 21, 0, 0), local(2027, 1, 9, 0, 0), 9*time.Hour
		}), map[Date]string{
			{2026, 12, 21}: "08:00", {2026, 12, 22}: "08:00", {2026, 12, 23}: "08:00",
			{2026, 12, 28}: "08:00", {2026, 12, 29}: "08:00", {2026, 12, 30}: "08:00",
			{2027, 1, 4}: "08:00", {2027, 1, 5}: "08:00", {2027, 1, 7}: "08:00", {2027, 1, 8}: "08:00",
		}},
		{"ascension and national day", with(func(p *SlotParams) {
			p.From, p.To, p.Duration = local(2026, 5, 11, 0, 0), local(2026, 5, 16, 0, 0), 9*time.Hour
		}), map[Date]string{{2026, 5, 11}: "08:00", {2026, 5, 12}: "08:00", {2026, 5, 13}: "08:00", {2026, 5, 15}: "08:00"}},
		{"malformed range skipped", with(func(p *SlotParams) {
			p.Hours = WeeklyHours{time.Tuesday: {{17 * 60, 8 * 60}, {8 * 60, 11 * 60}}}
		}), map[Date]string{tue: "08:00"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Slots(tt.p)
			byDay := startsByDay(t, got)
			if len(byDay) != len(tt.want) {
				t.Errorf("got slots on %d days, want %d: %v", len(byDay), len(tt.want), byDay)
			}
			for d, want := range tt.want {
				if g := strings.Join(byDay[d], " "); g != want {
					t.Errorf("%s: got starts %q, want %q", d, g, want)
				}
			}
			for i := 1; i < len(got); i++ {
				if !got[i-1].Start.Before(got[i].Start) {
					t.Errorf("slots not strictly sorted at %d: %v then %v", i, got[i-1].Start, got[i].Start)
				}
			}
		})
	}
}

func TestSlotsDeterministic(t *testing.T) {
	t.Parallel()
	p := SlotParams{
		Hours: StandardHours(), From: local(2026, 11, 21, 10, 0), To: local(2026, 12, 5, 10, 0),
		Duration: 2 * time.Hour, Step: time.Hour,
		Busy: []Interval{{local(2026, 11, 25, 9, 0), local(2026, 11, 25, 12, 0)}},
	}
	a, b := Slots(p), Slots(p)
	if len(a) == 0 || len(a) != len(b) {
		t.Fatalf("got %d and %d slots", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("slot %d differs: %v and %v", i, a[i], b[i])
		}
	}
	// 14 days from Saturday: ten working days, eight two-hour slots a day,
	// minus the four that overlap the busy morning of Wednesday 25th.
	if want := 10*8 - 4; len(a) != want {
		t.Errorf("got %d slots, want %d", len(a), want)
	}
}

func TestInterval(t *testing.T) {
	t.Parallel()
	iv := Interval{utc(2026, 11, 24, 8, 0), utc(2026, 11, 24, 11, 0)}
	tests := []struct {
		name string
		got  bool
		want bool
	}{
		{"overlaps inside", iv.Overlaps(Interval{utc(2026, 11, 24, 9, 0), utc(2026, 11, 24, 10, 0)}), true},
		{"overlaps partly", iv.Overlaps(Interval{utc(2026, 11, 24, 10, 0), utc(2026, 11, 24, 12, 0)}), true},
		{"overlaps around", iv.Overlaps(Interval{utc(2026, 11, 24, 7, 0), utc(2026, 11, 24, 12, 0)}), true},
		{"touching before", iv.Overlaps(Interval{utc(2026, 11, 24, 7, 0), utc(2026, 11, 24, 8, 0)}), false},
		{"touching after", iv.Overlaps(Interval{utc(2026, 11, 24, 11, 0), utc(2026, 11, 24, 12, 0)}), false},
		{"empty interval inside", iv.Overlaps(Interval{utc(2026, 11, 24, 9, 0), utc(2026, 11, 24, 9, 0)}), false},
		{"contains start", iv.Contains(utc(2026, 11, 24, 8, 0)), true},
		{"contains middle", iv.Contains(utc(2026, 11, 24, 10, 59)), true},
		{"excludes end", iv.Contains(utc(2026, 11, 24, 11, 0)), false},
		{"excludes before", iv.Contains(utc(2026, 11, 24, 7, 59)), false},
		{"contains interval", iv.ContainsInterval(Interval{utc(2026, 11, 24, 8, 0), utc(2026, 11, 24, 11, 0)}), true},
		{"does not contain longer", iv.ContainsInterval(Interval{utc(2026, 11, 24, 8, 0), utc(2026, 11, 24, 11, 1)}), false},
		{"instants in other zones", iv.Contains(local(2026, 11, 24, 9, 0)), true},
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

func TestWeeklyHoursValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		hours   WeeklyHours
		wantErr string
	}{
		{"standard", StandardHours(), ""},
		{"empty week", WeeklyHours{}, ""},
		{"touching ranges", WeeklyHours{time.Monday: {{8 * 60, 12 * 60}, {12 * 60, 17 * 60}}}, ""},
		{"whole day", WeeklyHours{time.Sunday: {{0, MinutesPerDay}}}, ""},
		{"reversed", WeeklyHours{time.Monday: {{17 * 60, 8 * 60}}}, "Monday range 0"},
		{"empty range", WeeklyHours{time.Monday: {{8 * 60, 8 * 60}}}, "Monday range 0"},
		{"past midnight", WeeklyHours{time.Friday: {{20 * 60, 25 * 60}}}, "Friday range 0"},
		{"negative", WeeklyHours{time.Friday: {{-1, 60}}}, "Friday range 0"},
		{"overlapping", WeeklyHours{time.Tuesday: {{8 * 60, 12 * 60}, {11 * 60, 17 * 60}}}, "Tuesday range 1"},
		{"out of order", WeeklyHours{time.Tuesday: {{13 * 60, 17 * 60}, {8 * 60, 12 * 60}}}, "Tuesday range 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.hours.Validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("Validate() = %v, want an error mentioning %q", err, tt.wantErr)
			}
		})
	}
}

func TestSlotLabel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		iv     Interval
		locale string
		want   string
	}{
		{"sv winter", Interval{utc(2026, 11, 24, 7, 0), utc(2026, 11, 24, 10, 0)}, "sv-SE", "tisdag 24 november 2026 kl. 08:00–11:00"},
		{"en winter", Interval{utc(2026, 11, 24, 7, 0), utc(2026, 11, 24, 10, 0)}, "en", "Tuesday 24 November 2026, 08:00–11:00"},
		{"en-GB summer", Interval{utc(2027, 3, 30, 6, 0), utc(2027, 3, 30, 9, 0)}, "en-GB", "Tuesday 30 March 2027, 08:00–11:00"},
		{"empty locale is Swedish", Interval{utc(2027, 3, 30, 6, 0), utc(2027, 3, 30, 9, 0)}, "", "tisdag 30 mars 2027 kl. 08:00–11:00"},
		{"other locale is Swedish", Interval{utc(2026, 6, 22, 6, 0), utc(2026, 6, 22, 15, 0)}, "de-DE", "måndag 22 juni 2026 kl. 08:00–17:00"},
		{"ends at midnight", Interval{local(2026, 11, 24, 21, 0), local(2026, 11, 25, 0, 0)}, "sv", "tisdag 24 november 2026 kl. 21:00–24:00"},
		{"spans midnight sv", Interval{local(2026, 11, 24, 22, 0), local(2026, 11, 25, 1, 0)}, "sv", "tisdag 24 november 2026 kl. 22:00 – onsdag 25 november 2026 kl. 01:00"},
		{"spans midnight en", Interval{local(2026, 11, 24, 22, 0), local(2026, 11, 25, 1, 0)}, "EN-us", "Tuesday 24 November 2026, 22:00 – Wednesday 25 November 2026, 01:00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := SlotLabel(tt.iv, tt.locale); got != tt.want {
				t.Errorf("SlotLabel() = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestLabelPartsWriteWhatFmtWrites keeps the append-style clock and date
// writers of SlotLabel equal to the fmt and string forms they replaced.
func TestLabelPartsWriteWhatFmtWrites(t *testing.T) {
	t.Parallel()
	for minute := -130; minute <= 200*60; minute++ {
		if got, want := clock(minute), fmt.Sprintf("%02d:%02d", minute/60, minute%60); got != want {
			t.Fatalf("clock(%d) = %q, want %q", minute, got, want)
		}
	}
	for _, l := range []lang{swedish, english} {
		for d := NewDate(2025, time.December, 20); d.Before(NewDate(2028, time.January, 10)); d = d.AddDays(1) {
			want := weekdayName(d.Weekday(), l) + " " + strconv.Itoa(d.Day) + " " + monthName(d.Month, l) + " " + strconv.Itoa(d.Year)
			if got := string(appendLongDate([]byte("x"), d, l)); got != "x"+want {
				t.Fatalf("appendLongDate(%v, %d) = %q, want %q", d, l, got, "x"+want)
			}
		}
	}
}
