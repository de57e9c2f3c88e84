package provider

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"bokat/internal/schedule"
	"bokat/internal/supply"
	"bokat/internal/web"
)

// The supply pages: blocks, hours (weekly, single dates, notice, horizon,
// pause), prices and postcodes. Each form posts to one use case of Supply
// and, on success, redirects back with a notice.

func (p *Pages) supplyRoutes() {
	m := p.mux
	m.Handle("GET "+Prefix+"/blocks", p.signedIn(p.blocksPage))
	m.Handle("POST "+Prefix+"/blocks", p.signedIn(p.addBlock))
	m.Handle("POST "+Prefix+"/blocks/{block_id}/remove", p.signedIn(p.removeBlock))
	m.Handle("GET "+Prefix+"/hours", p.signedIn(p.hoursPage))
	m.Handle("POST "+Prefix+"/hours", p.signedIn(p.putHours))
	m.Handle("POST "+Prefix+"/hours/days", p.signedIn(p.setDay))
	m.Handle("POST "+Prefix+"/hours/days/{date}/remove", p.signedIn(p.clearDay))
	m.Handle("POST "+Prefix+"/pause", p.signedIn(p.pause))
	m.Handle("GET "+Prefix+"/prices", p.signedIn(p.pricesPage))
	m.Handle("POST "+Prefix+"/prices", p.signedIn(p.putPrices))
	m.Handle("GET "+Prefix+"/postcodes", p.signedIn(p.postcodesPage))
	m.Handle("POST "+Prefix+"/postcodes", p.signedIn(p.putPostcodes))
}

// supplyNav are the supply pages' navigation entries.
func supplyNav(pg web.Page) []web.NavLink {
	return []web.NavLink{
		{URL: Prefix + "/blocks", Label: pg.T["nav_blocks"]},
		{URL: Prefix + "/hours", Label: pg.T["nav_hours"]},
		{URL: Prefix + "/prices", Label: pg.T["nav_prices"]},
		{URL: Prefix + "/postcodes", Label: pg.T["nav_postcodes"]},
	}
}

// supplyRefused renders a supply use case's refusal on the form's page
// (render), or reports whether there was none.
func (p *Pages) supplyRefused(w http.ResponseWriter, r *http.Request, pg web.Page, what string, err error,
	render func(pg web.Page, status int)) bool {
	if err == nil {
		return false
	}
	if problems, ok := IsInvalid(err); ok {
		pg.Error = pg.T["err_check"] + " " + problemText(problems, pg.Lang)
		render(pg, http.StatusBadRequest)
		return true
	}
	var way *BookingInTheWay
	if errors.As(err, &way) {
		pg.Error = fmt.Sprintf(pg.T["err_block_booking"], way.BookingID,
			schedule.SlotLabel(schedule.Interval{Start: way.Start, End: way.End}, pg.Lang))
		render(pg, http.StatusConflict)
		return true
	}
	return p.site.Refused(w, r, what, err)
}

// blockRow is one block as the blocks page shows it.
type blockRow struct {
	ID, When, Repeat, Note, RemoveURL string
	FromFile                          bool
}

type blocksPage struct {
	Blocks                         []blockRow
	Action                         string
	WholeDays                      bool
	From, To, Start, End, Weeks    string
	Note, InTheWayURL, InTheWayLab string
}

func (p *Pages) blocksPage(w http.ResponseWriter, r *http.Request, u User, pg web.Page) {
	p.renderBlocks(w, r, u, pg, http.StatusOK, blocksPage{Weeks: "1"})
}

func (p *Pages) renderBlocks(w http.ResponseWriter, r *http.Request, u User, pg web.Page, status int, d blocksPage) {
	list, err := p.supply.Blocks(r.Context(), u)
	if err != nil {
		p.site.Fail(w, r, "list blocks", err)
		return
	}
	pg.Title = pg.T["blocks_title"]
	pg.MarkCurrent(Prefix + "/blocks")
	pg.ShowNotice(r, "block_added", "block_removed")
	d.Action = Prefix + "/blocks"
	d.Blocks = nil
	for _, b := range list {
		row := blockRow{ID: b.ID, Note: b.Note, FromFile: b.FromFile, RemoveURL: Prefix + "/blocks/" + b.ID + "/remove",
			When: blockLabel(b, pg.Lang), Repeat: pg.T["once"]}
		if b.Weeks > 1 {
			row.Repeat = fmt.Sprintf(pg.T["weekly_n"], b.Weeks)
		}
		d.Blocks = append(d.Blocks, row)
	}
	pg.Data = d
	p.site.Layout.Render(w, r, status, "blocks", pg)
}

// blockLabel says when a block's first occurrence is.
func blockLabel(b Block, lang string) string {
	if b.WholeDays {
		from, to := schedule.DateOf(b.Start), schedule.DateOf(b.End).AddDays(-1)
		if from == to {
			return dayLabel(from, lang)
		}
		return dayLabel(from, lang) + " – " + dayLabel(to, lang)
	}
	return schedule.SlotLabel(schedule.Interval{Start: b.Start, End: b.End}, lang)
}

func dayLabel(d schedule.Date, lang string) string {
	t := d.At(12 * 60)
	if lang == web.EN {
		return t.Format("Mon 2 Jan 2006")
	}
	return swedishWeekday[t.Weekday()] + " " + d.String()
}

var swedishWeekday = [7]string{"sön", "mån", "tis", "ons", "tors", "fre", "lör"}

func (p *Pages) addBlock(w http.ResponseWriter, r *http.Request, u User, pg web.Page) {
	f := r.PostForm
	d := blocksPage{WholeDays: f.Get("kind") == "days", From: f.Get("from"), To: f.Get("to"), Start: f.Get("start"),
		End: f.Get("end"), Weeks: f.Get("weeks"), Note: f.Get("block_note")}
	weeks := 1
	if d.Weeks != "" {
		n, err := strconv.Atoi(strings.TrimSpace(d.Weeks))
		if err != nil {
			n = -1
		}
		weeks = n
	}
	_, err := p.supply.AddBlock(r.Context(), u, BlockInput{WholeDays: d.WholeDays, From: d.From, To: d.To,
		StartTime: d.Start, EndTime: d.End, Weeks: weeks, Note: d.Note})
	render := func(pg web.Page, status int) { p.renderBlocks(w, r, u, pg, status, d) }
	var way *BookingInTheWay
	if errors.As(err, &way) {
		d.InTheWayURL, d.InTheWayLab = Prefix+"/bookings/"+way.BookingID, way.BookingID
	}
	if p.supplyRefused(w, r, pg, "add block", err, render) {
		return
	}
	web.RedirectNotice(w, r, pg.Lang, Prefix+"/blocks", "block_added")
}

func (p *Pages) removeBlock(w http.ResponseWriter, r *http.Request, u User, pg web.Page) {
	if err := p.supply.RemoveBlock(r.Context(), u, r.PathValue("block_id")); p.site.Refused(w, r, "remove block", err) {
		return
	}
	web.RedirectNotice(w, r, pg.Lang, Prefix+"/blocks", "block_removed")
}

// weekdayFields are the weekly hours form's fields, Monday first.
var weekdayFields = []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday, time.Saturday, time.Sunday}

type dayField struct {
	Name, Label, Value string
}

type dayRow struct {
	Date, Label, Hours, RemoveURL string
}

type hoursPage struct {
	Action, DaysAction, PauseAction string
	Days                            []dayField
	Notice, Horizon                 string
	Dates                           []dayRow
	DayDate, DayRanges              string
	DayClosed                       bool
	PausedUntil, PauseValue         string
}

func (p *Pages) hoursPage(w http.ResponseWriter, r *http.Request, u User, pg web.Page) {
	p.renderHours(w, r, u, pg, http.StatusOK, nil)
}

// renderHours shows the hours page; form, when not nil, holds a refused
// form's values to show again.
func (p *Pages) renderHours(w http.ResponseWriter, r *http.Request, u User, pg web.Page, status int, form map[string]string) {
	s, err := p.supply.Supply(r.Context(), u)
	if p.site.Refused(w, r, "read hours", err) {
		return
	}
	pg.Title = pg.T["hours_title"]
	pg.MarkCurrent(Prefix + "/hours")
	pg.ShowNotice(r, "hours_saved", "day_saved", "day_removed", "pause_saved")
	weekly := supply.HoursEntries(s.Hours)
	d := hoursPage{Action: Prefix + "/hours", DaysAction: Prefix + "/hours/days", PauseAction: Prefix + "/pause",
		Notice: strconv.Itoa(s.MinNoticeMinutes), Horizon: strconv.Itoa(s.HorizonDays)}
	for _, wd := range weekdayFields {
		key := strings.ToLower(wd.String())
		var ranges []string
		list, _ := weekly[key].([]any)
		for _, v := range list {
			ranges = append(ranges, v.(string))
		}
		d.Days = append(d.Days, dayField{Name: "hours_" + key, Label: pg.T["day_"+key], Value: strings.Join(ranges, ", ")})
	}
	byDate := map[string][]string{}
	var order []string
	for _, x := range s.DayHours {
		if _, ok := byDate[x.Day]; !ok {
			order = append(order, x.Day)
		}
		if x.Closed() {
			byDate[x.Day] = append(byDate[x.Day], pg.T["closed"])
		} else {
			byDate[x.Day] = append(byDate[x.Day], strings.ReplaceAll(schedule.ClockRange{Start: x.StartMinute, End: x.EndMinute}.String(), "–", "-"))
		}
	}
	for _, day := range order {
		label := day
		if dd, err := supply.ParseDate(day); err == nil {
			label = dayLabel(dd, pg.Lang)
		}
		d.Dates = append(d.Dates, dayRow{Date: day, Label: label, Hours: strings.Join(byDate[day], ", "),
			RemoveURL: Prefix + "/hours/days/" + day + "/remove"})
	}
	if !s.PausedUntil.IsZero() && s.PausedUntil.After(p.svc.now()) {
		d.PausedUntil = dayLabel(schedule.DateOf(s.PausedUntil), pg.Lang)
		d.PauseValue = schedule.DateOf(s.PausedUntil).String()
	}
	for k, v := range form {
		switch k {
		case "notice":
			d.Notice = v
		case "horizon":
			d.Horizon = v
		case "day_date":
			d.DayDate = v
		case "day_ranges":
			d.DayRanges = v
		case "day_closed":
			d.DayClosed = v == "yes"
		case "until":
			d.PauseValue = v
		default:
			for i := range d.Days {
				if d.Days[i].Name == k {
					d.Days[i].Value = v
				}
			}
		}
	}
	pg.Data = d
	p.site.Layout.Render(w, r, status, "hours", pg)
}

// formValues keeps the named fields of a refused form.
func formValues(r *http.Request, names ...string) map[string]string {
	out := map[string]string{}
	for _, n := range names {
		out[n] = r.PostForm.Get(n)
	}
	return out
}

// splitList splits a field of entries separated by commas or lines.
func splitList(s string) []string {
	var out []string
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '\n' || r == ';' }) {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// atoiField reads a number field; a field that is not one reads -1, which
// every rule refuses.
func atoiField(s string) int {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return -1
	}
	return n
}

func (p *Pages) putHours(w http.ResponseWriter, r *http.Request, u User, pg web.Page) {
	in := HoursInput{Weekly: map[string][]string{}, MinNoticeMinutes: atoiField(r.PostForm.Get("notice")),
		HorizonDays: atoiField(r.PostForm.Get("horizon"))}
	names := []string{"notice", "horizon"}
	for _, wd := range weekdayFields {
		key := strings.ToLower(wd.String())
		names = append(names, "hours_"+key)
		if ranges := splitList(r.PostForm.Get("hours_" + key)); len(ranges) > 0 {
			in.Weekly[key] = ranges
		}
	}
	err := p.supply.PutHours(r.Context(), u, in)
	render := func(pg web.Page, status int) { p.renderHours(w, r, u, pg, status, formValues(r, names...)) }
	if p.supplyRefused(w, r, pg, "put hours", err, render) {
		return
	}
	web.RedirectNotice(w, r, pg.Lang, Prefix+"/hours", "hours_saved")
}

func (p *Pages) setDay(w http.ResponseWriter, r *http.Request, u User, pg web.Page) {
	in := DayInput{Date: r.PostForm.Get("day_date"), Closed: r.PostForm.Get("day_closed") == "yes",
		Ranges: splitList(r.PostForm.Get("day_ranges"))}
	err := p.supply.SetDay(r.Context(), u, in)
	render := func(pg web.Page, status int) {
		p.renderHours(w, r, u, pg, status, formValues(r, "day_date", "day_ranges", "day_closed"))
	}
	if p.supplyRefused(w, r, pg, "set day", err, render) {
		return
	}
	web.RedirectNotice(w, r, pg.Lang, Prefix+"/hours", "day_saved")
}

func (p *Pages) clearDay(w http.ResponseWriter, r *http.Request, u User, pg web.Page) {
	err := p.supply.ClearDay(r.Context(), u, r.PathValue("date"))
	render := func(pg web.Page, status int) { p.renderHours(w, r, u, pg, status, nil) }
	if p.supplyRefused(w, r, pg, "clear day", err, render) {
		return
	}
	web.RedirectNotice(w, r, pg.Lang, Prefix+"/hours", "day_removed")
}

func (p *Pages) pause(w http.ResponseWriter, r *http.Request, u User, pg web.Page) {
	until := r.PostForm.Get("until")
	if r.PostForm.Get("resume") == "yes" {
		until = ""
	}
	err := p.supply.Pause(r.Context(), u, until)
	render := func(pg web.Page, status int) { p.renderHours(w, r, u, pg, status, formValues(r, "until")) }
	if p.supplyRefused(w, r, pg, "pause", err, render) {
		return
	}
	web.RedirectNotice(w, r, pg.Lang, Prefix+"/hours", "pause_saved")
}

// priceRow is one catalog service on the prices page.
type priceRow struct {
	ID, Label, Vertical, Unit string
	PerUnit, Offered          bool
	Price, Minimum            string
	// Labour is the stated labour share in percent; empty: not stated.
	Labour string
}

func (p *Pages) pricesPage(w http.ResponseWriter, r *http.Request, u User, pg web.Page) {
	p.renderPrices(w, r, u, pg, http.StatusOK, false)
}

// renderPrices shows every bookable service of the catalog with the
// provider's price; refused shows the posted values again.
func (p *Pages) renderPrices(w http.ResponseWriter, r *http.Request, u User, pg web.Page, status int, refused bool) {
	s, err := p.supply.Supply(r.Context(), u)
	if p.site.Refused(w, r, "read prices", err) {
		return
	}
	pg.Title = pg.T["prices_title"]
	pg.MarkCurrent(Prefix + "/prices")
	pg.ShowNotice(r, "prices_saved")
	cat := p.supply.Catalog()
	var rows []priceRow
	for _, id := range cat.ServiceIDs() {
		svc, _ := cat.Service(id)
		row := priceRow{ID: id, Label: svc.LabelSV, Vertical: svc.VerticalID, PerUnit: svc.PricingModel.PerUnit(), Unit: svc.Unit}
		if pg.Lang == web.EN {
			row.Label, row.Unit = svc.LabelEN, svc.UnitEN
		}
		if offer, ok := s.Service(id); ok {
			row.Offered = true
			row.Price = strconv.FormatInt(offer.PriceSEK, 10)
			if row.PerUnit {
				row.Price = strconv.FormatInt(offer.UnitPriceSEK, 10)
				if offer.MinimumChargeSEK > 0 {
					row.Minimum = strconv.FormatInt(offer.MinimumChargeSEK, 10)
				}
			}
			if offer.Labour.Stated {
				row.Labour = strconv.Itoa(offer.Labour.Percent)
			}
		}
		if refused {
			row.Price, row.Minimum = r.PostForm.Get("price_"+id), r.PostForm.Get("min_"+id)
			row.Labour = r.PostForm.Get("labour_" + id)
		}
		rows = append(rows, row)
	}
	// The services offered first, then the others, each by vertical.
	slices.SortStableFunc(rows, func(a, b priceRow) int {
		if (a.Offered) != (b.Offered) {
			if a.Offered {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Vertical, b.Vertical)
	})
	pg.Data = struct {
		Action string
		Rows   []priceRow
	}{Prefix + "/prices", rows}
	p.site.Layout.Render(w, r, status, "prices", pg)
}

// priceNumber reads a price field as a number, or keeps the text so that
// the supply file's rules say what is wrong with it.
func priceNumber(s string) any {
	s = strings.ReplaceAll(strings.TrimSpace(s), " ", "")
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n
	}
	return s
}

func (p *Pages) putPrices(w http.ResponseWriter, r *http.Request, u User, pg web.Page) {
	s, err := p.supply.Supply(r.Context(), u)
	if p.site.Refused(w, r, "read prices", err) {
		return
	}
	cat := p.supply.Catalog()
	var services []map[string]any
	for _, id := range cat.ServiceIDs() {
		price := strings.TrimSpace(r.PostForm.Get("price_" + id))
		if price == "" {
			continue
		}
		svc, _ := cat.Service(id)
		m := map[string]any{"service_id": id}
		if svc.PricingModel.PerUnit() {
			m["unit_price_sek"] = priceNumber(price)
			if minimum := strings.TrimSpace(r.PostForm.Get("min_" + id)); minimum != "" {
				m["minimum_charge_sek"] = priceNumber(minimum)
			}
		} else {
			m["price_sek"] = priceNumber(price)
		}
		// The labour share goes to the file's own check like the price;
		// empty means not stated (no ROT/RUT estimate).
		if labour := strings.TrimSpace(r.PostForm.Get("labour_" + id)); labour != "" {
			m["labour_percent"] = priceNumber(labour)
		}
		if offer, ok := s.Service(id); ok && !offer.Duration.IsZero() {
			m["duration"] = supply.ServiceEntry(offer, cat)["duration"]
		}
		services = append(services, m)
	}
	err = p.supply.PutPrices(r.Context(), u, services)
	render := func(pg web.Page, status int) { p.renderPrices(w, r, u, pg, status, true) }
	if p.supplyRefused(w, r, pg, "put prices", err, render) {
		return
	}
	web.RedirectNotice(w, r, pg.Lang, Prefix+"/prices", "prices_saved")
}

func (p *Pages) postcodesPage(w http.ResponseWriter, r *http.Request, u User, pg web.Page) {
	p.renderPostcodes(w, r, u, pg, http.StatusOK, "", false)
}

func (p *Pages) renderPostcodes(w http.ResponseWriter, r *http.Request, u User, pg web.Page, status int, value string, refused bool) {
	s, err := p.supply.Supply(r.Context(), u)
	if p.site.Refused(w, r, "read postcodes", err) {
		return
	}
	pg.Title = pg.T["postcodes_title"]
	pg.MarkCurrent(Prefix + "/postcodes")
	pg.ShowNotice(r, "postcodes_saved")
	if !refused {
		var lines []string
		for _, e := range supply.PostcodeEntries(s.Postcodes) {
			line := e.(string)
			if len(line) == 5 {
				line = line[:3] + " " + line[3:] // "116 45", as people write it
			}
			lines = append(lines, line)
		}
		value = strings.Join(lines, "\n")
	}
	var ranges []string
	for _, pr := range s.Postcodes {
		ranges = append(ranges, strings.ReplaceAll(pr.String(), " ", "\u00a0"))
	}
	pg.Data = struct{ Action, Value, Served string }{Prefix + "/postcodes", value, strings.Join(ranges, ", ")}
	p.site.Layout.Render(w, r, status, "postcodes", pg)
}

func (p *Pages) putPostcodes(w http.ResponseWriter, r *http.Request, u User, pg web.Page) {
	value := r.PostForm.Get("postcodes")
	err := p.supply.PutPostcodes(r.Context(), u, splitList(value))
	render := func(pg web.Page, status int) { p.renderPostcodes(w, r, u, pg, status, value, true) }
	if p.supplyRefused(w, r, pg, "put postcodes", err, render) {
		return
	}
	web.RedirectNotice(w, r, pg.Lang, Prefix+"/postcodes", "postcodes_saved")
}
