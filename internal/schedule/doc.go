// Package schedule holds the pure calendar rules of Bokat: Swedish days off,
// weekly working hours, free slots and the reading of customers' timing
// phrases. Every rule runs on the Europe/Stockholm wall clock (the zone
// database is embedded), takes the current time as an argument and does no
// I/O.
//
// # Days off
//
// IsNonWorkingDay reports the Swedish public holidays and the eves
// midsommarafton, julafton and nyårsafton; the dates come from the holiday
// library github.com/rickar/cal/v2/se.
//
// # Slots
//
// Slots lays jobs of a given length on a grid of wall-clock starts inside the
// working hours of each day, skipping days off, busy intervals and starts
// before the earliest permitted instant. 08:00 is 08:00 local on both sides
// of a DST change.
//
// # Timing phrases
//
// ParseTiming reads the preferred_time_text and urgency of a request into a
// Window, in Swedish or English, case-insensitive, also inside longer
// sentences and without å/ä/ö:
//
//   - days: "i dag"/"idag"/"today", "i morgon"/"imorgon"/"tomorrow",
//     "i övermorgon"/"the day after tomorrow", weekday names ("tisdag",
//     "Tuesday"; next occurrence that has not passed), ISO dates
//     "2026-12-03", "3 december"/"December 3"/"3/12" (day first);
//   - weeks: "denna vecka"/"den här veckan"/"i veckan"/"this week",
//     "nästa vecka"/"next week", "vecka 50"/"v. 50"/"week 50",
//     "helgen"/"weekend"; a weekday narrows a week ("tisdag nästa vecka");
//   - how soon: "så snart som möjligt"/"snarast"/"akut"/"asap"/"as soon as
//     possible" (3 days), "inom en vecka"/"within a week" and other
//     "inom N dagar/veckor", "flexibel"/"flexible"/"inte akut" (14 days);
//   - the calendar: holidays ("julafton", "påsk", "midsommar", "Christmas
//     Eve"; the label says when they are days off), months and their
//     thirds ("i december", "i mitten av december", "early January",
//     "nästa månad"), parts of a week ("i slutet av veckan"), offsets ("om
//     två veckor", "in 3 days"), a day of the month alone ("den 15:e", "the
//     4th"), a weekday with a date ("fredag den 4:e");
//   - before, after, around: "före jul"/"before Christmas", "senast
//     fredag"/"by Friday", "efter nyår"/"after New Year", "från måndag",
//     "kring den 15:e"/"around the 20th";
//   - time of day: "förmiddag"/"morgon"/"morning" 08–12,
//     "eftermiddag"/"afternoon" 12–17, "kväll"/"evening" 17–21,
//     "efter 15"/"after 3 pm", "före 12"/"before noon",
//     "mellan 10 och 14"/"between 10 and 2", "9–11";
//   - clock times: "kl 10", "10:30", "at 9am", "9 am" (slots starting in
//     that hour, Window.Starts);
//   - days left out: "men inte fredag", "utom måndag", "not on Friday",
//     "except Monday", "inte i helgen" (Window.Except);
//   - parts of a week in words: "helst tidigt i veckan", "early in the week".
//
// Anything else gives the default window, the next 14 days, with
// Understood false and a label saying so. Window.Unused lists the words of
// the texts that did not decide the window, so that an assistant can ask
// about them. PHRASES.md in this directory is the full list with the exact
// windows.
package schedule
