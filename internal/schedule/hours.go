package schedule

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// MinutesPerDay is the end of the wall-clock day, 24:00, in minutes.
const MinutesPerDay = 24 * 60

// ClockRange is a half-open wall-clock range [Start, End) within one local
// day, in minutes after 00:00: 08:00–17:00 is ClockRange{480, 1020}. The
// minutes count the wall clock, not elapsed time, so 08:00 stays 08:00 on the
// day of a DST change. The zero ClockRange means "no restriction" where a
// field is documented as optional.
type ClockRange struct {
	Start, End int
}

// IsZero reports whether r is the zero ClockRange.
func (r ClockRange) IsZero() bool { return r == ClockRange{} }

// Validate returns an error unless 0 <= Start < End <= 1440.
func (r ClockRange) Validate() error {
	if r.Start < 0 || r.End > MinutesPerDay || r.Start >= r.End {
		return fmt.Errorf("clock range %s: want 00:00 <= start < end <= 24:00", r)
	}
	return nil
}

// intersect returns the overlap of r and o and whether it is non-empty.
func (r ClockRange) intersect(o ClockRange) (ClockRange, bool) {
	out := ClockRange{Start: max(r.Start, o.Start), End: min(r.End, o.End)}
	return out, out.Start < out.End
}

// String formats r as "08:00–17:00".
func (r ClockRange) String() string { return clock(r.Start) + "–" + clock(r.End) }

// clock formats minutes after midnight as HH:MM; 1440 is "24:00".
func clock(minute int) string { return string(appendClock(make([]byte, 0, 5), minute)) }

// appendClock appends what clock returns, as fmt's "%02d:%02d" of the hour
// and minute writes it (a test compares the two).
func appendClock(b []byte, minute int) []byte {
	if minute < 0 {
		return fmt.Appendf(b, "%02d:%02d", minute/60, minute%60)
	}
	h, m := minute/60, minute%60
	if h < 10 {
		b = append(b, '0')
	}
	b = strconv.AppendInt(b, int64(h), 10)
	b = append(b, ':', byte('0'+m/10), byte('0'+m%10))
	return b
}

// WeeklyHours holds working hours per weekday, indexed by time.Weekday
// (time.Sunday is 0). Each day has zero or more ranges, in ascending order and
// not overlapping (touching is allowed, e.g. 08:00–12:00 and 12:00–17:00, but
// a job never spans two ranges). A day without ranges has no work.
type WeeklyHours [7][]ClockRange

// StandardHours returns Monday–Friday 08:00–17:00, the hours of the demo supply.
func StandardHours() WeeklyHours {
	var w WeeklyHours
	for d := time.Monday; d <= time.Friday; d++ {
		w[d] = []ClockRange{{Start: 8 * 60, End: 17 * 60}}
	}
	return w
}

// Validate returns nil, or an error naming every weekday range that is
// malformed, out of order or overlapping its predecessor.
func (w WeeklyHours) Validate() error {
	var errs []error
	for d, ranges := range w {
		for i, r := range ranges {
			if err := r.Validate(); err != nil {
				errs = append(errs, fmt.Errorf("%s range %d: %w", time.Weekday(d), i, err))
				continue
			}
			if i > 0 && r.Start < ranges[i-1].End {
				errs = append(errs, fmt.Errorf("%s range %d: %s starts before the previous range ends", time.Weekday(d), i, r))
			}
		}
	}
	return errors.Join(errs...)
}

// Interval is a half-open span of time [Start, End) between two instants.
// Functions of this package return its times in UTC.
type Interval struct {
	Start, End time.Time
}

// Duration returns the length of iv.
func (iv Interval) Duration() time.Duration { return iv.End.Sub(iv.Start) }

// Overlaps reports whether iv and o share a moment. Intervals that only
// touch (one ends when the other starts) do not overlap, and an empty
// interval overlaps nothing.
func (iv Interval) Overlaps(o Interval) bool {
	return iv.Start.Before(iv.End) && o.Start.Before(o.End) &&
		iv.Start.Before(o.End) && o.Start.Before(iv.End)
}

// Contains reports whether the instant t lies in [Start, End).
func (iv Interval) Contains(t time.Time) bool {
	return !t.Before(iv.Start) && t.Before(iv.End)
}

// ContainsInterval reports whether o lies entirely within iv.
func (iv Interval) ContainsInterval(o Interval) bool {
	return !o.Start.Before(iv.Start) && !o.End.After(iv.End) && !o.End.Before(o.Start)
}
