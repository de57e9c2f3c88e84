package provider

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"bokat"
	"bokat/internal/calsync"
	"bokat/internal/web"
)

// The calendars page: the provider's own calendar subscriptions (label,
// rule, last sync, last error, stale warning), adding and removing one,
// changing a rule, the conflicts a sync found with confirmed bookings, and
// (for owners) the address of the provider's own Bokat feed. An address is
// a secret: the page shows its host only and never shows an address back,
// not even a refused one.

func (p *Pages) calendarRoutes() {
	m := p.mux
	m.Handle("GET "+Prefix+"/calendars", p.signedIn(p.calendarsPage))
	m.Handle("POST "+Prefix+"/calendars", p.signedIn(p.addCalendar))
	m.Handle("POST "+Prefix+"/calendars/{feed_id}/rule", p.signedIn(p.setCalendarRule))
	m.Handle("POST "+Prefix+"/calendars/{feed_id}/remove", p.signedIn(p.removeCalendar))
}

// calendarRules are the rules in the order the page offers them.
var calendarRules = []calsync.Rule{calsync.RuleBusyOnly, calsync.RuleEverything, calsync.RuleAllDayBusy}

// ruleOption is one rule as the forms offer it.
type ruleOption struct {
	Value, Label, Help string
	Selected           bool
}

// calendarRow is one subscription as the page shows it.
type calendarRow struct {
	ID, Label, Rule, RuleHelp string
	Synced, Error, Stale      string
	Busy                      int
	RuleAction, RemoveAction  string
	Rules                     []ruleOption
}

// conflictRow is one conflict as the page shows it.
type conflictRow struct {
	BookingID, URL, When, Calendar string
}

type calendarsPage struct {
	Calendars []calendarRow
	Conflicts []conflictRow
	Action    string
	Rules     []ruleOption
	Max       int
	Full      bool
	ExportURL string
	Owner     bool
}

func (p *Pages) rules(pg web.Page, selected calsync.Rule) []ruleOption {
	out := make([]ruleOption, 0, len(calendarRules))
	for _, r := range calendarRules {
		out = append(out, ruleOption{Value: string(r), Label: pg.T["rule_"+string(r)], Help: pg.T["rule_"+string(r)+"_help"],
			Selected: r == selected})
	}
	return out
}

func (p *Pages) calendarsPage(w http.ResponseWriter, r *http.Request, u User, pg web.Page) {
	p.renderCalendars(w, r, u, pg, http.StatusOK, calsync.RuleBusyOnly)
}

// renderCalendars shows the page; rule is the rule the add form offers
// checked.
func (p *Pages) renderCalendars(w http.ResponseWriter, r *http.Request, u User, pg web.Page, status int, rule calsync.Rule) {
	ctx := r.Context()
	feeds, err := p.calendars.List(ctx, u)
	if err != nil {
		p.site.Fail(w, r, "list calendars", err)
		return
	}
	conflicts, err := p.calendars.Conflicts(ctx, u)
	if err != nil {
		p.site.Fail(w, r, "list calendar conflicts", err)
		return
	}
	pg.Title = pg.T["calendars_title"]
	pg.MarkCurrent(Prefix + "/calendars")
	pg.ShowNotice(r, "calendar_added", "calendar_removed", "calendar_rule_saved")
	now := p.svc.now()
	d := calendarsPage{Action: Prefix + "/calendars", Rules: p.rules(pg, rule), Max: calsync.MaxFeedsPerProvider,
		Full: len(feeds) >= calsync.MaxFeedsPerProvider, Owner: u.Role == Owner}
	if d.Owner {
		d.ExportURL = p.calendars.ExportURL(u.ProviderID)
	}
	labels := map[string]string{}
	for _, f := range feeds {
		labels[f.ID] = f.Label
		row := calendarRow{ID: f.ID, Label: f.Label, Rule: pg.T["rule_"+string(f.Rule)], RuleHelp: pg.T["rule_"+string(f.Rule)+"_help"],
			Busy: f.BusyCount, Synced: pg.T["never_synced"], Rules: p.rules(pg, f.Rule),
			RuleAction: Prefix + "/calendars/" + f.ID + "/rule", RemoveAction: Prefix + "/calendars/" + f.ID + "/remove"}
		if !f.LastSyncedAt.IsZero() {
			row.Synced = stamp(f.LastSyncedAt, pg.Lang)
		}
		if f.LastError != "" {
			row.Error = fmt.Sprintf(pg.T["sync_failed"], syncErrorText(f.LastError, pg.Lang))
			if !f.LastAttemptAt.IsZero() {
				row.Error = fmt.Sprintf(pg.T["sync_failed_at"], stamp(f.LastAttemptAt, pg.Lang), syncErrorText(f.LastError, pg.Lang))
			}
		}
		if f.Stale(now, p.calendars.StaleAfter()) {
			row.Stale = fmt.Sprintf(pg.T["calendar_stale"], stamp(f.FailingSince, pg.Lang))
		}
		d.Calendars = append(d.Calendars, row)
	}
	for _, c := range conflicts {
		d.Conflicts = append(d.Conflicts, conflictRow{BookingID: c.BookingID, URL: Prefix + "/bookings/" + c.BookingID,
			When: stamp(c.SlotStart, pg.Lang), Calendar: labels[c.FeedID]})
	}
	pg.Data = d
	p.site.Layout.Render(w, r, status, "calendars", pg)
}

// calendarRefused renders a refusal of a calendar change on the page, or
// reports whether there was none.
func (p *Pages) calendarRefused(w http.ResponseWriter, r *http.Request, u User, pg web.Page, what string, err error, rule calsync.Rule) bool {
	var be *bokat.Error
	if errors.As(err, &be) && be.Code == bokat.CodeValidationFailed {
		lead := pg.T["calendar_refused"]
		if what != "add calendar" {
			lead = pg.T["err_check"]
		}
		pg.Error = lead + " " + calendarRefusal(be.Issues, pg.Lang)
		p.renderCalendars(w, r, u, pg, http.StatusBadRequest, rule)
		return true
	}
	return p.site.Refused(w, r, what, err)
}

func (p *Pages) addCalendar(w http.ResponseWriter, r *http.Request, u User, pg web.Page) {
	rule := calsync.Rule(r.PostForm.Get("rule"))
	if _, err := calsync.ParseRule(string(rule)); err != nil {
		rule = calsync.RuleBusyOnly
	}
	_, err := p.calendars.Add(r.Context(), u, r.PostForm.Get("url"), calsync.Rule(r.PostForm.Get("rule")))
	if p.calendarRefused(w, r, u, pg, "add calendar", err, rule) {
		return
	}
	web.RedirectNotice(w, r, pg.Lang, Prefix+"/calendars", "calendar_added")
}

func (p *Pages) setCalendarRule(w http.ResponseWriter, r *http.Request, u User, pg web.Page) {
	_, err := p.calendars.SetRule(r.Context(), u, r.PathValue("feed_id"), calsync.Rule(r.PostForm.Get("rule")))
	if p.calendarRefused(w, r, u, pg, "set calendar rule", err, calsync.RuleBusyOnly) {
		return
	}
	web.RedirectNotice(w, r, pg.Lang, Prefix+"/calendars", "calendar_rule_saved")
}

func (p *Pages) removeCalendar(w http.ResponseWriter, r *http.Request, u User, pg web.Page) {
	if err := p.calendars.Remove(r.Context(), u, r.PathValue("feed_id")); p.site.Refused(w, r, "remove calendar", err) {
		return
	}
	web.RedirectNotice(w, r, pg.Lang, Prefix+"/calendars", "calendar_removed")
}

// plainText is a pattern of calendar sync's English texts and what it
// says in plain words, Swedish and English.
type plainText struct {
	pattern *regexp.Regexp
	sv, en  string
}

// calendarRefusals say why an address was refused. The guard's reasons may
// name the host or an IP address; the plain words name neither.
var calendarRefusals = []plainText{
	{regexp.MustCompile(`already has this calendar`), "Kalendern finns redan bland era kalendrar.", "The calendar is already one of yours."},
	{regexp.MustCompile(`at most \d+ calendars`), "Ni har redan så många kalendrar som går (%d). Ta bort en först.", "You already have as many calendars as allowed (%d). Remove one first."},
	{regexp.MustCompile(`must use https|must be absolute|cannot be parsed|has no host`), "Klistra in hela adressen, som börjar med https:// eller webcal://.", "Paste the whole address, starting with https:// or webcal://."},
	{regexp.MustCompile(`port`), "Adressen måste använda https vanliga port.", "The address must use the usual https port."},
	{regexp.MustCompile(`user information`), "Adressen får inte innehålla användarnamn eller lösenord.", "The address must not contain a user name or password."},
	{regexp.MustCompile(`fragment`), "Adressen får inte sluta med #-del.", "The address must not end with a #-part."},
	{regexp.MustCompile(`longer than`), "Adressen är för lång.", "The address is too long."},
	{regexp.MustCompile(`could not be resolved|resolves to no address`), "Servern i adressen finns inte. Kontrollera att du kopierade hela adressen.", "The server in the address does not exist. Check that you copied the whole address."},
	{regexp.MustCompile(`private|loopback|link-local|not a global|single-label|reserved|unspecified|multicast|NAT64|6to4|IPv4-mapped`), "Adressen pekar på ett internt nätverk, som Bokat inte läser från.", "The address points into an internal network, which Bokat does not read from."},
	{regexp.MustCompile(`rule`), "Välj en av reglerna.", "Choose one of the rules."},
}

// calendarRefusal says a refusal's issues in the page's language without
// the address; an unknown reason is said generically.
func calendarRefusal(issues []string, lang string) string {
	var parts []string
	for _, issue := range issues {
		parts = append(parts, plain(calendarRefusals, issue, lang,
			"Adressen kan inte användas. Kopiera kalenderns hemliga adress i iCal-format (.ics).",
			"The address cannot be used. Copy the calendar's secret address in iCal format (.ics)."))
	}
	return strings.Join(parts, " ")
}

// syncErrors say calendar sync's failure summaries in plain words.
var syncErrors = []plainText{
	{regexp.MustCompile(`HTTP (401|403|404|410)`), "kalendern finns inte längre på adressen, eller så är den inte delad. Kontrollera delningen och lägg till adressen på nytt.", "the calendar is no longer at the address, or it is not shared. Check the sharing and add the address again."},
	{regexp.MustCompile(`HTTP \d+`), "kalenderns server svarade med ett fel. Vi försöker igen.", "the calendar's server answered with an error. We will try again."},
	{regexp.MustCompile(`did not answer in time`), "kalenderns server svarade inte i tid. Vi försöker igen.", "the calendar's server did not answer in time. We will try again."},
	{regexp.MustCompile(`interrupted`), "läsningen avbröts. Vi försöker igen.", "reading was interrupted. We will try again."},
	{regexp.MustCompile(`could not be resolved`), "servern i adressen finns inte.", "the server in the address does not exist."},
	{regexp.MustCompile(`certificate`), "serverns certifikat är inte giltigt.", "the server's certificate is not valid."},
	{regexp.MustCompile(`could not be reached`), "kalenderns server gick inte att nå. Vi försöker igen.", "the calendar's server could not be reached. We will try again."},
	{regexp.MustCompile(`larger than`), "kalendern är för stor för Bokat att läsa. Dela en mindre kalender.", "the calendar is too large for Bokat to read. Share a smaller calendar."},
	{regexp.MustCompile(`redirect|refused`), "adressen leder vidare till en plats Bokat inte läser från.", "the address leads on to a place Bokat does not read from."},
	{regexp.MustCompile(`not a valid iCalendar`), "det som finns på adressen är ingen kalender i iCal-format.", "what is at the address is not a calendar in iCal format."},
	{regexp.MustCompile(`too many busy times`), "kalendern har för många upptagna tider för att läsas.", "the calendar has too many busy times to be read."},
}

// syncErrorText says a feed's last error in plain words.
func syncErrorText(summary, lang string) string {
	return plain(syncErrors, summary, lang, "kalendern gick inte att läsa. Vi försöker igen.",
		"the calendar could not be read. We will try again.")
}

func plain(list []plainText, text, lang, fallbackSV, fallbackEN string) string {
	for _, t := range list {
		if t.pattern.MatchString(text) {
			out := t.sv
			if lang == web.EN {
				out = t.en
			}
			if strings.Contains(out, "%d") {
				out = fmt.Sprintf(out, calsync.MaxFeedsPerProvider)
			}
			return out
		}
	}
	if lang == web.EN {
		return fallbackEN
	}
	return fallbackSV
}
