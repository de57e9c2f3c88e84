package schedule

import (
	"slices"
	"testing"
	"time"
)

func TestParseTiming(t *testing.T) {
	t.Parallel()
	// Saturday 21 November 2026, 10:00 in Stockholm; ISO week 47.
	sat := local(2026, 11, 21, 10, 0)
	type want struct {
		start, end time.Time
		daily      ClockRange
		label      string
		understood bool
		phrase     string
	}
	ok := func(start, end time.Time, label, phrase string) want {
		return want{start: start, end: end, label: label, understood: true, phrase: phrase}
	}
	okDaily := func(start, end time.Time, daily ClockRange, label, phrase string) want {
		return want{start: start, end: end, daily: daily, label: label, understood: true, phrase: phrase}
	}
	const (
		svDefault = "Inom de närmaste 14 dagarna (tidsönskemålet kunde inte tolkas)"
		enDefault = "Within the next 14 days (the preferred time could not be read)"
		svPassed  = "Inom de närmaste 14 dagarna (den önskade tiden har redan passerat)"
		enPassed  = "Within the next 14 days (the requested time has already passed)"
	)
	in14 := local(2026, 12, 5, 10, 0)
	morning := ClockRange{8 * 60, 12 * 60}
	afternoon := ClockRange{12 * 60, 17 * 60}
	evening := ClockRange{17 * 60, 21 * 60}
	tests := []struct {
		name      string
		preferred string
		urgency   string
		locale    string
		now       time.Time // sat when zero
		want      want
	}{
		// Days.
		{"i dag", "i dag", "", "sv-SE", time.Time{}, ok(sat, local(2026, 11, 22, 0, 0), "I dag, lördag 21 november 2026", "i dag")},
		{"idag", "Kan ni komma idag?", "", "sv-SE", time.Time{}, ok(sat, local(2026, 11, 22, 0, 0), "I dag, lördag 21 november 2026", "idag")},
		{"today", "today please", "", "en", time.Time{}, ok(sat, local(2026, 11, 22, 0, 0), "Today, Saturday 21 November 2026", "today")},
		{"i morgon", "i morgon", "", "sv", time.Time{}, ok(local(2026, 11, 22, 0, 0), local(2026, 11, 23, 0, 0), "I morgon, söndag 22 november 2026", "i morgon")},
		{"imorgon", "IMORGON", "", "sv", time.Time{}, ok(local(2026, 11, 22, 0, 0), local(2026, 11, 23, 0, 0), "I morgon, söndag 22 november 2026", "IMORGON")},
		{"tomorrow", "Tomorrow", "", "en-GB", time.Time{}, ok(local(2026, 11, 22, 0, 0), local(2026, 11, 23, 0, 0), "Tomorrow, Sunday 22 November 2026", "Tomorrow")},
		{"i övermorgon", "i övermorgon", "", "sv", time.Time{}, ok(local(2026, 11, 23, 0, 0), local(2026, 11, 24, 0, 0), "I övermorgon, måndag 23 november 2026", "i övermorgon")},
		{"day after tomorrow", "the day after tomorrow", "", "en", time.Time{}, ok(local(2026, 11, 23, 0, 0), local(2026, 11, 24, 0, 0), "The day after tomorrow, Monday 23 November 2026", "the day after tomorrow")},
		{"i overmorgon without diacritics", "i overmorgon", "", "sv", time.Time{}, ok(local(2026, 11, 23, 0, 0), local(2026, 11, 24, 0, 0), "I övermorgon, måndag 23 november 2026", "i overmorgon")},

		// Weeks.
		{"nästa vecka", "nästa vecka", "", "sv", time.Time{}, ok(local(2026, 11, 23, 0, 0), local(2026, 11, 30, 0, 0), "Nästa vecka (vecka 48), måndag 23 november – söndag 29 november 2026", "nästa vecka")},
		{"NASTA VECKA", "NASTA VECKA", "", "sv", time.Time{}, ok(local(2026, 11, 23, 0, 0), local(2026, 11, 30, 0, 0), "Nästa vecka (vecka 48), måndag 23 november – söndag 29 november 2026", "NASTA VECKA")},
		{"next week", "sometime next week", "", "en", time.Time{}, ok(local(2026, 11, 23, 0, 0), local(2026, 11, 30, 0, 0), "Next week (week 48), Monday 23 November – Sunday 29 November 2026", "next week")},
		{"denna vecka", "denna vecka", "", "sv", time.Time{}, ok(sat, local(2026, 11, 23, 0, 0), "Denna vecka (vecka 47), lördag 21 november – söndag 22 november 2026", "denna vecka")},
		{"den här veckan", "helst den här veckan", "", "sv", time.Time{}, ok(sat, local(2026, 11, 23, 0, 0), "Denna vecka (vecka 47), lördag 21 november – söndag 22 november 2026", "den här veckan")},
		{"this week", "this week", "", "en", time.Time{}, ok(sat, local(2026, 11, 23, 0, 0), "This week (week 47), Saturday 21 November – Sunday 22 November 2026", "this week")},
		{"vecka 50", "vecka 50", "", "sv", time.Time{}, ok(local(2026, 12, 7, 0, 0), local(2026, 12, 14, 0, 0), "Vecka 50, måndag 7 december – söndag 13 december 2026", "vecka 50")},
		{"v. 50", "v. 50", "", "sv", time.Time{}, ok(local(2026, 12, 7, 0, 0), local(2026, 12, 14, 0, 0), "Vecka 50, måndag 7 december – söndag 13 december 2026", "v. 50")},
		{"v50", "v50", "", "sv", time.Time{}, ok(local(2026, 12, 7, 0, 0), local(2026, 12, 14, 0, 0), "Vecka 50, måndag 7 december – söndag 13 december 2026", "v50")},
		{"week 50", "week 50", "", "en", time.Time{}, ok(local(2026, 12, 7, 0, 0), local(2026, 12, 14, 0, 0), "Week 50, Monday 7 December – Sunday 13 December 2026", "week 50")},
		{"current week number", "vecka 47", "", "sv", time.Time{}, ok(sat, local(2026, 11, 23, 0, 0), "Vecka 47, lördag 21 november – söndag 22 november 2026", "vecka 47")},
		{"week number of next year", "vecka 2", "", "sv", time.Time{}, ok(local(2027, 1, 11, 0, 0), local(2027, 1, 18, 0, 0), "Vecka 2, måndag 11 januari – söndag 17 januari 2027", "vecka 2")},
		{"passed week number rolls to next year", "week 46", "", "en", time.Time{}, ok(local(2027, 11, 15, 0, 0), local(2027, 11, 22, 0, 0), "Week 46, Monday 15 November – Sunday 21 November 2027", "week 46")},
		{"week 53 of the next year that has one", "vecka 53", "", "sv", time.Time{}, ok(local(2026, 12, 28, 0, 0), local(2027, 1, 4, 0, 0), "Vecka 53, måndag 28 december 2026 – söndag 3 januari 2027", "vecka 53")},
		{"helgen during the weekend", "i helgen", "", "sv", time.Time{}, ok(sat, local(2026, 11, 23, 0, 0), "Helgen, lördag 21 november – söndag 22 november 2026", "helgen")},
		{"weekend", "at the weekend", "", "en", time.Time{}, ok(sat, local(2026, 11, 23, 0, 0), "The weekend, Saturday 21 November – Sunday 22 November 2026", "weekend")},
		{"helgen on a Monday", "helgen", "", "sv", local(2026, 11, 23, 9, 0), ok(local(2026, 11, 28, 0, 0), local(2026, 11, 30, 0, 0), "Helgen, lördag 28 november – söndag 29 november 2026", "helgen")},

		// Weekdays and parts of the day.
		{"tisdag", "tisdag", "", "sv", time.Time{}, ok(local(2026, 11, 24, 0, 0), local(2026, 11, 25, 0, 0), "Tisdag 24 november 2026", "tisdag")},
		{"Tuesday", "on Tuesday", "", "en", time.Time{}, ok(local(2026, 11, 24, 0, 0), local(2026, 11, 25, 0, 0), "Tuesday 24 November 2026", "Tuesday")},
		{"tisdag förmiddag", "på tisdag förmiddag", "", "sv", time.Time{}, okDaily(local(2026, 11, 24, 8, 0), local(2026, 11, 24, 12, 0), morning, "Tisdag 24 november 2026, förmiddag (08:00–12:00)", "tisdag + förmiddag")},
		{"tisdagsförmiddag", "Tisdagsförmiddag", "", "sv", time.Time{}, okDaily(local(2026, 11, 24, 8, 0), local(2026, 11, 24, 12, 0), morning, "Tisdag 24 november 2026, förmiddag (08:00–12:00)", "Tisdagsförmiddag")},
		{"torsdag morgon", "torsdag morgon", "", "sv", time.Time{}, okDaily(local(2026, 11, 26, 8, 0), local(2026, 11, 26, 12, 0), morning, "Torsdag 26 november 2026, förmiddag (08:00–12:00)", "torsdag + morgon")},
		{"Tuesday morning", "Tuesday morning", "", "en", time.Time{}, okDaily(local(2026, 11, 24, 8, 0), local(2026, 11, 24, 12, 0), morning, "Tuesday 24 November 2026, morning (08:00–12:00)", "Tuesday + morning")},
		{"onsdag eftermiddag", "onsdag eftermiddag", "", "sv", time.Time{}, okDaily(local(2026, 11, 25, 12, 0), local(2026, 11, 25, 17, 0), afternoon, "Onsdag 25 november 2026, eftermiddag (12:00–17:00)", "onsdag + eftermiddag")},
		{"Wednesday afternoon", "wednesday afternoon", "", "en", time.Time{}, okDaily(local(2026, 11, 25, 12, 0), local(2026, 11, 25, 17, 0), afternoon, "Wednesday 25 November 2026, afternoon (12:00–17:00)", "wednesday + afternoon")},
		{"fredag kväll", "fredag kväll", "", "sv", time.Time{}, okDaily(local(2026, 11, 27, 17, 0), local(2026, 11, 27, 21, 0), evening, "Fredag 27 november 2026, kväll (17:00–21:00)", "fredag + kväll")},
		{"Friday evening", "Friday evening", "", "en", time.Time{}, okDaily(local(2026, 11, 27, 17, 0), local(2026, 11, 27, 21, 0), evening, "Friday 27 November 2026, evening (17:00–21:00)", "Friday + evening")},
		{"today's weekday, part still ahead", "lördag förmiddag", "", "sv", time.Time{}, okDaily(sat, local(2026, 11, 21, 12, 0), morning, "Lördag 21 november 2026, förmiddag (08:00–12:00)", "lördag + förmiddag")},
		{"today's weekday, part passed", "Saturday morning", "", "en", local(2026, 11, 21, 13, 0), okDaily(local(2026, 11, 28, 8, 0), local(2026, 11, 28, 12, 0), morning, "Saturday 28 November 2026, morning (08:00–12:00)", "Saturday + morning")},
		{"today's weekday, day not over", "lördag", "", "sv", local(2026, 11, 21, 13, 0), ok(local(2026, 11, 21, 13, 0), local(2026, 11, 22, 0, 0), "Lördag 21 november 2026", "lördag")},
		{"weekday of next week", "Helst tisdag nästa vecka, efter kl. 15.30 om det går", "", "sv", time.Time{}, okDaily(local(2026, 11, 24, 15, 30), local(2026, 11, 25, 0, 0), ClockRange{15*60 + 30, MinutesPerDay}, "Tisdag 24 november 2026, efter kl. 15:30", "tisdag + nästa vecka + efter kl. 15.30")},
		{"weekday of a week number", "thursday week 50", "", "en", time.Time{}, ok(local(2026, 12, 10, 0, 0), local(2026, 12, 11, 0, 0), "Thursday 10 December 2026", "thursday + week 50")},
		{"i kväll", "ikväll", "", "sv", time.Time{}, okDaily(local(2026, 11, 21, 17, 0), local(2026, 11, 21, 21, 0), evening, "I dag, lördag 21 november 2026, kväll (17:00–21:00)", "ikväll")},
		{"tomorrow afternoon", "tomorrow afternoon", "", "en", time.Time{}, okDaily(local(2026, 11, 22, 12, 0), local(2026, 11, 22, 17, 0), afternoon, "Tomorrow, Sunday 22 November 2026, afternoon (12:00–17:00)", "tomorrow + afternoon")},
		{"förmiddag alone", "förmiddagar passar bäst", "", "sv", time.Time{}, okDaily(sat, local(2026, 12, 5, 10, 0), morning, "Inom de närmaste 14 dagarna, förmiddag (08:00–12:00)", "förmiddagar")},

		// Hours.
		{"efter 15", "efter 15", "", "sv", time.Time{}, okDaily(local(2026, 11, 21, 15, 0), local(2026, 12, 5, 0, 0), ClockRange{15 * 60, MinutesPerDay}, "Inom de närmaste 14 dagarna, efter kl. 15:00", "efter 15")},
		{"efter kl 15", "efter kl 15", "", "sv", time.Time{}, okDaily(local(2026, 11, 21, 15, 0), local(2026, 12, 5, 0, 0), ClockRange{15 * 60, MinutesPerDay}, "Inom de närmaste 14 dagarna, efter kl. 15:00", "efter kl 15")},
		{"after 3 pm", "after 3 pm", "", "en", time.Time{}, okDaily(local(2026, 11, 21, 15, 0), local(2026, 12, 5, 0, 0), ClockRange{15 * 60, MinutesPerDay}, "Within the next 14 days, after 15:00", "after 3 pm")},
		{"after 15:00", "any day after 15:00", "", "en", time.Time{}, okDaily(local(2026, 11, 21, 15, 0), local(2026, 12, 5, 0, 0), ClockRange{15 * 60, MinutesPerDay}, "Within the next 14 days, after 15:00", "after 15:00")},
		{"after 3 reads as afternoon", "after 3", "", "en", time.Time{}, okDaily(local(2026, 11, 21, 15, 0), local(2026, 12, 5, 0, 0), ClockRange{15 * 60, MinutesPerDay}, "Within the next 14 days, after 15:00", "after 3")},
		{"efter 15 when 15 has passed", "efter 15", "", "sv", local(2026, 11, 21, 16, 0), okDaily(local(2026, 11, 21, 16, 0), local(2026, 12, 5, 16, 0), ClockRange{15 * 60, MinutesPerDay}, "Inom de närmaste 14 dagarna, efter kl. 15:00", "efter 15")},
		{"i morgon efter 15", "i morgon efter 15", "", "sv", time.Time{}, okDaily(local(2026, 11, 22, 15, 0), local(2026, 11, 23, 0, 0), ClockRange{15 * 60, MinutesPerDay}, "I morgon, söndag 22 november 2026, efter kl. 15:00", "i morgon + efter 15")},
		{"före 12", "före 12", "", "sv", time.Time{}, okDaily(sat, local(2026, 12, 5, 10, 0), ClockRange{0, 12 * 60}, "Inom de närmaste 14 dagarna, före kl. 12:00", "före 12")},
		{"before noon", "before noon", "", "en", time.Time{}, okDaily(sat, local(2026, 12, 5, 10, 0), ClockRange{0, 12 * 60}, "Within the next 14 days, before 12:00", "before noon")},
		{"före 12 after noon", "före kl. 12", "", "sv", local(2026, 11, 21, 13, 0), okDaily(local(2026, 11, 22, 0, 0), local(2026, 12, 5, 12, 0), ClockRange{0, 12 * 60}, "Inom de närmaste 14 dagarna, före kl. 12:00", "före kl. 12")},
		{"mellan 10 och 14", "mellan 10 och 14", "", "sv", time.Time{}, okDaily(sat, local(2026, 12, 4, 14, 0), ClockRange{10 * 60, 14 * 60}, "Inom de närmaste 14 dagarna, kl. 10:00–14:00", "mellan 10 och 14")},
		{"från 9 till 13", "från kl. 9 till 13", "", "sv", time.Time{}, okDaily(sat, local(2026, 12, 5, 10, 0), ClockRange{9 * 60, 13 * 60}, "Inom de närmaste 14 dagarna, kl. 09:00–13:00", "från kl. 9 till 13")},
		{"from 9 to 5", "from 9 to 5", "", "en", time.Time{}, okDaily(sat, local(2026, 12, 5, 10, 0), ClockRange{9 * 60, 17 * 60}, "Within the next 14 days, 09:00–17:00", "from 9 to 5")},
		{"kl 10-14", "kl 10-14", "", "sv", time.Time{}, okDaily(sat, local(2026, 12, 4, 14, 0), ClockRange{10 * 60, 14 * 60}, "Inom de närmaste 14 dagarna, kl. 10:00–14:00", "kl 10-14")},
		{"between 8 and 5", "between 8 and 5", "", "en", time.Time{}, okDaily(sat, local(2026, 12, 5, 10, 0), ClockRange{8 * 60, 17 * 60}, "Within the next 14 days, 08:00–17:00", "between 8 and 5")},

		// How soon.
		{"så snart som möjligt", "så snart som möjligt", "", "sv", time.Time{}, ok(sat, local(2026, 11, 24, 10, 0), "Så snart som möjligt (inom 3 dagar)", "så snart som möjligt")},
		{"snarast", "Snarast!", "", "sv", time.Time{}, ok(sat, local(2026, 11, 24, 10, 0), "Så snart som möjligt (inom 3 dagar)", "Snarast")},
		{"akut is a window, not triage", "", "akut", "sv", time.Time{}, ok(sat, local(2026, 11, 24, 10, 0), "Så snart som möjligt (inom 3 dagar)", "akut")},
		{"asap", "", "ASAP", "en", time.Time{}, ok(sat, local(2026, 11, 24, 10, 0), "As soon as possible (within 3 days)", "ASAP")},
		{"as soon as possible", "as soon as possible", "", "en", time.Time{}, ok(sat, local(2026, 11, 24, 10, 0), "As soon as possible (within 3 days)", "as soon as possible")},
		{"inom en vecka", "", "inom en vecka", "sv", time.Time{}, ok(sat, local(2026, 11, 28, 10, 0), "Inom en vecka", "inom en vecka")},
		{"within a week", "", "within a week", "en", time.Time{}, ok(sat, local(2026, 11, 28, 10, 0), "Within a week", "within a week")},
		{"inom två veckor", "", "inom två veckor", "sv", time.Time{}, ok(sat, local(2026, 12, 5, 10, 0), "Inom 2 veckor", "inom två veckor")},
		{"within 10 days", "", "within the next 10 days", "en", time.Time{}, ok(sat, local(2026, 12, 1, 10, 0), "Within 10 days", "within the next 10 days")},
		{"flexibel", "", "flexibel", "sv", time.Time{}, ok(sat, in14, "Flexibelt, inom de närmaste 14 dagarna", "flexibel")},
		{"flexible", "", "I'm flexible", "en", time.Time{}, ok(sat, in14, "Flexible, within the next 14 days", "flexible")},

		// Dates.
		{"ISO date", "2026-12-03", "", "sv", time.Time{}, ok(local(2026, 12, 3, 0, 0), local(2026, 12, 4, 0, 0), "Torsdag 3 december 2026", "2026-12-03")},
		{"ISO date en", "on 2026-12-03 please", "", "en", time.Time{}, ok(local(2026, 12, 3, 0, 0), local(2026, 12, 4, 0, 0), "Thursday 3 December 2026", "2026-12-03")},
		{"3 december", "den 3 december", "", "sv", time.Time{}, ok(local(2026, 12, 3, 0, 0), local(2026, 12, 4, 0, 0), "Torsdag 3 december 2026", "3 december")},
		{"3:e dec", "3:e dec", "", "sv", time.Time{}, ok(local(2026, 12, 3, 0, 0), local(2026, 12, 4, 0, 0), "Torsdag 3 december 2026", "3:e dec")},
		{"December 3", "December 3", "", "en", time.Time{}, ok(local(2026, 12, 3, 0, 0), local(2026, 12, 4, 0, 0), "Thursday 3 December 2026", "December 3")},
		{"3rd of December", "the 3rd of December", "", "en", time.Time{}, ok(local(2026, 12, 3, 0, 0), local(2026, 12, 4, 0, 0), "Thursday 3 December 2026", "3rd of December")},
		{"3/12 is day first", "3/12", "", "sv", time.Time{}, ok(local(2026, 12, 3, 0, 0), local(2026, 12, 4, 0, 0), "Torsdag 3 december 2026", "3/12")},
		{"passed date without year rolls forward", "1 november", "", "sv", time.Time{}, ok(local(2027, 11, 1, 0, 0), local(2027, 11, 2, 0, 0), "Måndag 1 november 2027", "1 november")},
		{"date with year", "3 januari 2027 förmiddag", "", "sv", time.Time{}, okDaily(local(2027, 1, 3, 8, 0), local(2027, 1, 3, 12, 0), morning, "Söndag 3 januari 2027, förmiddag (08:00–12:00)", "3 januari 2027 + förmiddag")},

		// Both fields.
		{"preferred wins", "i morgon", "asap", "sv", time.Time{}, ok(local(2026, 11, 22, 0, 0), local(2026, 11, 23, 0, 0), "I morgon, söndag 22 november 2026", "i morgon")},
		{"urgency when preferred unreadable", "när det passar er", "snarast", "sv", time.Time{}, ok(sat, local(2026, 11, 24, 10, 0), "Så snart som möjligt (inom 3 dagar)", "snarast")},
		{"preferred time of day, urgency span", "förmiddag", "inom en vecka", "sv", time.Time{}, okDaily(sat, local(2026, 11, 28, 10, 0), morning, "Inom en vecka, förmiddag (08:00–12:00)", "förmiddag + inom en vecka")},
		{"a day beats asap in one text", "asap, ideally Tuesday", "", "en", time.Time{}, ok(local(2026, 11, 24, 0, 0), local(2026, 11, 25, 0, 0), "Tuesday 24 November 2026", "Tuesday")},
		{"first day phrase wins", "i morgon eller tisdag", "", "sv", time.Time{}, ok(local(2026, 11, 22, 0, 0), local(2026, 11, 23, 0, 0), "I morgon, söndag 22 november 2026", "i morgon")},

		// DST: the window is built on the wall clock.
		{"tomorrow is the 23-hour day", "i morgon", "", "sv", local(2027, 3, 27, 10, 0), ok(utc(2027, 3, 27, 23, 0), utc(2027, 3, 28, 22, 0), "I morgon, söndag 28 mars 2027", "i morgon")},
		{"morning after spring forward", "söndag förmiddag", "", "sv", local(2027, 3, 27, 10, 0), okDaily(utc(2027, 3, 28, 6, 0), utc(2027, 3, 28, 10, 0), morning, "Söndag 28 mars 2027, förmiddag (08:00–12:00)", "söndag + förmiddag")},
		{"tomorrow is the 25-hour day", "tomorrow", "", "en", local(2026, 10, 24, 10, 0), ok(utc(2026, 10, 24, 22, 0), utc(2026, 10, 25, 23, 0), "Tomorrow, Sunday 25 October 2026", "tomorrow")},
		{"asap across spring forward", "asap", "", "en", local(2027, 3, 27, 10, 0), ok(utc(2027, 3, 27, 9, 0), utc(2027, 3, 30, 8, 0), "As soon as possible (within 3 days)", "asap")},

		// Defaults.
		{"unreadable sv", "när det passar", "", "sv-SE", time.Time{}, want{start: sat, end: in14, label: svDefault}},
		{"unreadable en", "whenever suits you best", "soonish", "en", time.Time{}, ok(sat, in14, "Flexible, within the next 14 days", "whenever")},
		{"unreadable en plain", "when it suits you", "not sure", "en", time.Time{}, want{start: sat, end: in14, label: enDefault}},
		{"empty", "", "", "sv", time.Time{}, want{start: sat, end: in14, label: "Inom de närmaste 14 dagarna (inget tidsönskemål angavs)"}},
		{"empty en", " ", "", "en-US", time.Time{}, want{start: sat, end: in14, label: "Within the next 14 days (no preferred time was given)"}},
		{"passed ISO date", "2026-11-01", "", "sv", time.Time{}, want{start: sat, end: in14, label: svPassed, phrase: "2026-11-01"}},
		{"today's morning passed", "this morning", "", "en", local(2026, 11, 21, 13, 0), want{start: local(2026, 11, 21, 13, 0), end: local(2026, 12, 5, 13, 0), label: enPassed, phrase: "this morning"}},
		{"this week at its very end", "this week", "", "en", local(2026, 11, 22, 23, 59), ok(local(2026, 11, 22, 23, 59), local(2026, 11, 23, 0, 0), "This week (week 47), Sunday 22 November 2026", "this week")},
		{"this week's mornings have passed", "denna vecka förmiddag", "", "sv", local(2026, 11, 22, 13, 0), want{start: local(2026, 11, 22, 13, 0), end: local(2026, 12, 6, 13, 0), label: svPassed, phrase: "denna vecka + förmiddag"}},
		{"impossible date", "31/2", "", "sv", time.Time{}, want{start: sat, end: in14, label: svDefault}},
		{"24/7 is not a date", "24/7", "", "sv", time.Time{}, want{start: sat, end: in14, label: svDefault}},
		{"holiday name is not a weekend", "alla helgons dag", "", "sv", time.Time{}, want{start: sat, end: in14, label: svDefault}},
		{"words inside words", "tisdagarnas idagsläge morgonrock", "", "sv", time.Time{}, want{start: sat, end: in14, label: svDefault}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			now := tt.now
			if now.IsZero() {
				now = sat
			}
			got := ParseTiming(tt.preferred, tt.urgency, tt.locale, now)
			w := tt.want
			if !got.Start.Equal(w.start) || !got.End.Equal(w.end) {
				t.Errorf("window = [%s, %s), want [%s, %s)", fmtLocal(got.Start), fmtLocal(got.End), fmtLocal(w.start), fmtLocal(w.end))
			}
			if got.Daily != w.daily {
				t.Errorf("Daily = %v, want %v", got.Daily, w.daily)
			}
			if got.Label != w.label {
				t.Errorf("Label = %q, want %q", got.Label, w.label)
			}
			if got.Understood != w.understood {
				t.Errorf("Understood = %v, want %v", got.Understood, w.understood)
			}
			if got.Phrase != w.phrase {
				t.Errorf("Phrase = %q, want %q", got.Phrase, w.phrase)
			}
			if got.Start.Before(now) || !got.End.After(got.Start) {
				t.Errorf("window [%v, %v) starts before now %v or is empty", got.Start, got.End, now)
			}
			if got.Start.Location() != time.UTC || got.End.Location() != time.UTC {
				t.Errorf("window times not in UTC: %v, %v", got.Start.Location(), got.End.Location())
			}
		})
	}
}

func fmtLocal(t time.Time) string { return t.In(Stockholm()).Format("Mon 2006-01-02 15:04 MST") }

// TestParseTimingSlots checks that a window with a daily range feeds Slots.
func TestParseTimingSlots(t *testing.T) {
	t.Parallel()
	now := local(2026, 11, 23, 9, 0) // Monday
	w := ParseTiming("förmiddag", "inom en vecka", "sv", now)
	got := Slots(SlotParams{
		Hours: StandardHours(), From: w.Start, To: w.End, Daily: w.Daily,
		Duration: 3 * time.Hour, Step: time.Hour, Earliest: now.Add(2 * time.Hour),
	})
	byDay := startsByDay(t, got)
	want := map[Date]string{
		{2026, 11, 24}: "08:00 09:00", {2026, 11, 25}: "08:00 09:00",
		{2026, 11, 26}: "08:00 09:00", {2026, 11, 27}: "08:00 09:00",
	}
	if len(byDay) != len(want) {
		t.Errorf("got slots on %v, want on %d days", byDay, len(want))
	}
	for d, starts := range want {
		if g := joinStarts(byDay[d]); g != starts {
			t.Errorf("%s: got %q, want %q", d, g, starts)
		}
	}
}

func joinStarts(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out
}

// TestParseTimingClockAndExceptSlots checks that a clock time and a day left
// out reach Slots: "i morgon kl 9" offers only slots starting 09:00–09:59,
// also on the day the clocks go forward, and "nästa vecka men inte fredag"
// none on Friday.
func TestParseTimingClockAndExceptSlots(t *testing.T) {
	t.Parallel()
	allWeek := WeeklyHours{}
	for d := range allWeek {
		allWeek[d] = []ClockRange{{Start: 7 * 60, End: 17 * 60}}
	}
	slots := func(w Window, now time.Time, step time.Duration) map[Date][]string {
		return startsByDay(t, Slots(SlotParams{Hours: allWeek, From: w.Start, To: w.End, Daily: w.Daily, Starts: w.Starts,
			Except: w.Except, Duration: 90 * time.Minute, Step: step, Earliest: now}))
	}
	tests := []struct {
		name, text string
		now        time.Time
		step       time.Duration
		want       map[Date]string
	}{
		{"kl 9 on a half-hour grid", "i morgon kl 9", local(2026, 11, 26, 10, 0), 30 * time.Minute,
			map[Date]string{{2026, 11, 27}: "09:00 09:30"}},
		{"kl 06 before the working hours", "i morgon kl 06", local(2026, 11, 26, 10, 0), time.Hour, map[Date]string{}},
		{"kl 10.30", "tisdag kl 10.30", local(2026, 11, 26, 10, 0), time.Hour, map[Date]string{{2026, 12, 1}: "10:30"}},
		{"spring DST change", "tomorrow at 9", local(2026, 3, 28, 10, 0), 30 * time.Minute,
			map[Date]string{{2026, 3, 29}: "09:00 09:30"}},
		{"autumn DST change", "i morgon kl 9", local(2027, 10, 30, 10, 0), 30 * time.Minute,
			map[Date]string{{2027, 10, 31}: "09:00 09:30"}},
		{"range holds the whole slot", "i morgon 9-11", local(2026, 11, 26, 10, 0), 30 * time.Minute,
			map[Date]string{{2026, 11, 27}: "09:00 09:30"}},
		{"Friday left out", "nästa vecka kl 8 men inte fredag", local(2026, 11, 26, 10, 0), time.Hour, map[Date]string{
			{2026, 11, 30}: "08:00", {2026, 12, 1}: "08:00", {2026, 12, 2}: "08:00", {2026, 12, 3}: "08:00",
			{2026, 12, 5}: "08:00", {2026, 12, 6}: "08:00"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := ParseTiming(tt.text, "", "sv", tt.now)
			if !w.Understood {
				t.Fatalf("%q not understood: %q", tt.text, w.Label)
			}
			got := slots(w, tt.now, tt.step)
			if len(got) != len(tt.want) {
				t.Errorf("got slots on %v, want on %v", got, tt.want)
			}
			for d, starts := range tt.want {
				if g := joinStarts(got[d]); g != starts {
					t.Errorf("%s: got %q, want %q", d, g, starts)
				}
			}
		})
	}
}

// TestUnusedWords checks what a reading reports as not used, across both
// fields, and that a TimingReader reports the same.
func TestUnusedWords(t *testing.T) {
	t.Parallel()
	now := local(2026, 11, 26, 10, 0) // Thursday
	tests := []struct {
		preferred, urgency string
		want               []string
	}{
		{"nästa vecka", "", nil},
		{"Helst nästa vecka, tack!", "", nil},
		{"nästa vecka efter jobbet", "", nil},
		{"nästa vecka när lönen kommit", "", []string{"när lönen kommit"}},
		{"i morgon eller tisdag", "", []string{"tisdag"}},
		{"i morrn bitti", "", []string{"bitti"}},
		{"kl 9 eller 14", "", []string{"14"}},
		{"efter semestern", "", []string{"efter semestern"}},
		{"snarast, helst tisdag", "", nil}, // the day overrides "snarast" without contradicting it
		{"förmiddag, helst kl 10", "", nil},
		{"i morgon men inte fredag", "", []string{"inte fredag"}}, // tomorrow is the Friday
		{"We're away until the 5th", "", []string{"away", "until the 5th"}},
		{"tisdag", "inom en vecka", nil},
		{"tisdag", "helst efter lönen", []string{"efter lönen"}},
		{"tisdag bitti", "onsdag", []string{"bitti", "onsdag"}},
		{"typ nån gång", "", []string{"typ nån gång"}}, // fillers only: not read, so all of it is asked about
		{"", " some time ", []string{"some time"}},
		{"tack!", "typ nån gång", []string{"tack!", "typ nån gång"}},
		{"", "", nil},
	}
	tr := NewTimingReader(0)
	for _, tt := range tests {
		got := ParseTiming(tt.preferred, tt.urgency, "sv-SE", now)
		if !slices.Equal(got.Unused, tt.want) {
			t.Errorf("(%q, %q): unused %q, want %q", tt.preferred, tt.urgency, got.Unused, tt.want)
		}
		for range 2 {
			if r := tr.Parse(tt.preferred, tt.urgency, "sv-SE", now); !r.Equal(got) {
				t.Errorf("(%q, %q): TimingReader gives %+v, ParseTiming %+v", tt.preferred, tt.urgency, r, got)
			}
		}
	}
}
