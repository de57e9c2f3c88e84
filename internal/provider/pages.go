package provider

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"bokat"
	"bokat/internal/auth"
	"bokat/internal/ratelimit"
	"bokat/internal/schedule"
	"bokat/internal/web"
)

// Prefix is where the provider pages are served.
const Prefix = "/provider"

// listLimit is the most bookings one list page shows.
const listLimit = 200

// PagesConfig holds the provider pages' dependencies.
type PagesConfig struct {
	// BaseURL is the public origin; https makes the cookies Secure.
	BaseURL    string
	Production bool
	Store      Store
	Hasher     *auth.Hasher
	// Sender delivers sign-in codes; nil in development (the log has them).
	Sender web.CodeSender
	// Mail sends invitations made on the team page; nil sends none (the
	// owner tells the person).
	Mail   Mail
	Logger *slog.Logger
	Now    func() time.Time
	// Limiter enforces Limits (nil: none); limiter failures let requests
	// pass.
	Limiter ratelimit.Limiter
	Limits  Limits
	// Supply, when set, serves the supply pages (blocks, hours, prices,
	// postcodes) through its use cases.
	Supply *Supply
	// Calendars, when set, serves the calendars page (the provider's
	// calendar subscriptions, their conflicts, the export address).
	Calendars *Calendars
}

// Limits are the provider pages' budgets.
type Limits struct {
	// Pages: requests per client IP.
	Pages ratelimit.Policy
	// SignIn: sign-in codes sent per client IP, per (address, client IP)
	// and overall.
	SignIn web.SendLimits
}

// DefaultLimits are the product defaults.
func DefaultLimits() Limits {
	return Limits{
		Pages: ratelimit.Policy{Name: "provider-pages", Quota: 300, Window: time.Minute},
		SignIn: web.SendLimits{
			IP:      ratelimit.Policy{Name: "provider-signin-ip", Quota: 20, Window: time.Hour},
			Address: ratelimit.Policy{Name: "provider-signin-address", Quota: 5, Window: time.Hour},
			Global:  ratelimit.Policy{Name: "provider-signin-global", Quota: 1000, Window: time.Hour},
		},
	}
}

// Pages serves the provider pages under Prefix.
type Pages struct {
	svc       *Service
	supply    *Supply
	calendars *Calendars
	site      *web.Site[Tx]
	log       *slog.Logger
	mux       *http.ServeMux
	mail      Mail
	baseURL   string
}

// NewPages returns the provider pages.
func NewPages(cfg PagesConfig) (*Pages, error) {
	if cfg.Store == nil || cfg.Hasher == nil || cfg.Logger == nil || cfg.BaseURL == "" {
		return nil, errors.New("provider pages: BaseURL, Store, Hasher and Logger are required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	layout, err := web.NewLayout(Prefix+"/static/site.css", Prefix+"/", mergeTexts(texts, supplyTexts, calendarTexts),
		mergePages(pageTemplates, supplyTemplates, calendarTemplates), cfg.Logger)
	if err != nil {
		return nil, err
	}
	svc := NewService(cfg.Store, cfg.Now, cfg.Logger)
	site := web.NewSite(web.Site[Tx]{
		Prefix:      Prefix,
		Layout:      layout,
		Codes:       &web.Codes{Hasher: cfg.Hasher, Sender: cfg.Sender, Production: cfg.Production, Log: cfg.Logger, Now: cfg.Now},
		Spend:       web.SpendOn(cfg.Limiter, cfg.Logger),
		Pages:       cfg.Limits.Pages,
		SendLimits:  cfg.Limits.SignIn,
		Production:  cfg.Production,
		InTx:        cfg.Store.InTx,
		Admits:      svc.Admits,
		Begin:       svc.Begin,
		End:         svc.EndSession,
		SignInIntro: "signin_intro",
		Multiline:   []string{"note", "cancel_notes", "postcodes"},
		LogName:     "provider page",
		Refusals: []web.Refusal{
			{Err: bokat.ErrNotFound, Status: http.StatusNotFound, MessageKey: "err_not_found", Code: "not_found"},
			{Err: ErrForbidden, Status: http.StatusForbidden, MessageKey: "err_forbidden", Code: "forbidden"},
			{Err: ErrNotConfirmed, Status: http.StatusConflict, MessageKey: "err_not_confirmed", Code: "booking_not_confirmed"},
		},
	}, cfg.BaseURL, cfg.Hasher, SessionTTL)
	p := &Pages{svc: svc, supply: cfg.Supply, calendars: cfg.Calendars, site: site, log: cfg.Logger, mux: http.NewServeMux(), mail: cfg.Mail,
		baseURL: strings.TrimRight(cfg.BaseURL, "/")}
	p.routes()
	if p.supply != nil {
		p.supplyRoutes()
	}
	if p.calendars != nil {
		p.calendarRoutes()
	}
	return p, nil
}

// ServeHTTP serves the pages.
func (p *Pages) ServeHTTP(w http.ResponseWriter, r *http.Request) { p.mux.ServeHTTP(w, r) }

func (p *Pages) routes() {
	m := p.mux
	m.Handle("GET "+Prefix+"/static/site.css", web.Style())
	m.Handle(Prefix+"/sign-in", p.site.SignIn())
	m.Handle(Prefix+"/sign-in/code", p.site.SignInCode())
	m.Handle("POST "+Prefix+"/sign-out", p.site.SignOut())
	m.Handle("GET "+Prefix+"/{$}", p.signedIn(p.home))
	m.Handle("GET "+Prefix+"/bookings", p.signedIn(p.bookings))
	m.Handle("GET "+Prefix+"/bookings/{booking_id}", p.signedIn(p.booking))
	m.Handle("POST "+Prefix+"/bookings/{booking_id}/acknowledge", p.signedIn(p.acknowledge))
	m.Handle("POST "+Prefix+"/bookings/{booking_id}/flag", p.signedIn(p.flag))
	m.Handle("POST "+Prefix+"/bookings/{booking_id}/cancel", p.signedIn(p.cancel))
	m.Handle("GET "+Prefix+"/team", p.signedIn(p.team))
	m.Handle("POST "+Prefix+"/team/invitations", p.signedIn(p.invite))
	m.Handle("POST "+Prefix+"/team/invitations/{invitation_id}/withdraw", p.signedIn(p.withdraw))
	m.Handle("POST "+Prefix+"/team/users/{user_id}/remove", p.signedIn(p.remove))
	m.Handle(Prefix+"/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.site.Layout.RenderError(w, r, http.StatusNotFound, "err_not_found", "not_found")
	}))
}

// pageFunc serves a request of a signed-in user with the page's layout
// data filled in.
type pageFunc func(w http.ResponseWriter, r *http.Request, u User, pg web.Page)

// signedIn admits a page request (budget, clean parameters, CSRF on
// POST), finds its user by session and calls h; without a valid session it
// leads to the sign-in page.
func (p *Pages) signedIn(h pageFunc) http.Handler {
	return p.site.Protect(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, pg, ok := web.SignedIn(p.site, w, r, p.svc.SessionUser)
		if !ok {
			return
		}
		pg.SignedIn = u.Email
		pg.Nav = []web.NavLink{
			{URL: Prefix + "/bookings", Label: pg.T["nav_bookings"]},
			{URL: Prefix + "/bookings?view=past", Label: pg.T["nav_past"]},
			{URL: Prefix + "/team", Label: pg.T["nav_team"]},
		}
		if p.supply != nil {
			pg.Nav = append(pg.Nav, supplyNav(pg)...)
		}
		if p.calendars != nil {
			pg.Nav = append(pg.Nav, web.NavLink{URL: Prefix + "/calendars", Label: pg.T["nav_calendars"]})
		}
		h(w, r, u, pg)
	}))
}

func (p *Pages) home(w http.ResponseWriter, r *http.Request, _ User, pg web.Page) {
	http.Redirect(w, r, web.Link(pg.Lang, Prefix+"/bookings"), http.StatusSeeOther)
}

// bookingRow is one booking as the pages show it.
type bookingRow struct {
	ID, URL, When, Service, Postcode, Status, StatusClass string
}

func row(b Booking, pg web.Page, now time.Time) bookingRow {
	out := bookingRow{ID: b.ID, URL: Prefix + "/bookings/" + b.ID, Postcode: b.Postcode,
		When:    schedule.SlotLabel(schedule.Interval{Start: b.SlotStart, End: b.SlotEnd}, pg.Lang),
		Service: b.ServiceLabelSV}
	if pg.Lang == web.EN && b.ServiceLabelEN != "" {
		out.Service = b.ServiceLabelEN
	}
	switch {
	case !b.Active():
		out.Status, out.StatusClass = pg.T["status_cancelled"], "cancelled"
	case !b.AcknowledgedAt.IsZero():
		out.Status, out.StatusClass = pg.T["status_acked"], "ok"
	case !b.SlotEnd.After(now):
		out.Status = pg.T["status_confirmed"]
	default:
		out.Status = pg.T["status_new"]
	}
	return out
}

// bookingsPage is the data of a bookings list: a page of rows and, when
// more follow, the address of the next page and its link's text key.
type bookingsPage struct {
	Rows             []bookingRow
	MoreURL, MoreKey string
}

func (p *Pages) bookings(w http.ResponseWriter, r *http.Request, u User, pg web.Page) {
	past := r.URL.Query().Get("view") == "past"
	list, err := p.svc.Bookings(r.Context(), u, past, r.URL.Query().Get("after"), listLimit)
	if p.site.Refused(w, r, "list bookings", err) {
		return
	}
	pg.Title = pg.T["upcoming_title"]
	pg.MarkCurrent(Prefix + "/bookings")
	data := bookingsPage{Rows: make([]bookingRow, 0, len(list.Bookings)), MoreKey: "more_upcoming"}
	next := url.Values{"after": {list.Next}}
	if past {
		pg.Title = pg.T["past_title"]
		pg.MarkCurrent(Prefix + "/bookings?view=past")
		data.MoreKey = "more_past"
		next.Set("view", "past")
	}
	for _, b := range list.Bookings {
		data.Rows = append(data.Rows, row(b, pg, p.svc.now()))
	}
	if list.Next != "" {
		data.MoreURL = Prefix + "/bookings?" + next.Encode()
	}
	pg.Data = data
	p.site.Layout.Render(w, r, http.StatusOK, "bookings", pg)
}

// bookingPage is the data of a booking's page.
type bookingPage struct {
	Row          bookingRow
	Price        string
	Cancelled    string
	Acked        string
	CanAck       bool
	AckAction    string
	ContactShown bool
	Erased       bool
	Contact      bokat.BookingContact
	FlagAction   string
	Note         string
	CancelAction string
	// CancelReasons are the reasons the cancel form offers.
	CancelReasons []string
}

func (p *Pages) booking(w http.ResponseWriter, r *http.Request, u User, pg web.Page) {
	p.renderBooking(w, r, u, pg, http.StatusOK, "")
}

func (p *Pages) renderBooking(w http.ResponseWriter, r *http.Request, u User, pg web.Page, status int, note string) {
	v, err := p.svc.Booking(r.Context(), u, r.PathValue("booking_id"))
	if p.site.Refused(w, r, "open booking", err) {
		return
	}
	b := v.Booking
	pg.Title = fmt.Sprintf("%s %s", pg.T["booking_title"], b.ID)
	pg.ShowNotice(r, "acked_notice", "flagged_notice", "cancelled_notice")
	d := bookingPage{Row: row(b, pg, p.svc.now()), Price: fmt.Sprintf(pg.T["price_sek"], b.PriceSEK), ContactShown: v.ContactShown,
		Contact: v.Contact, CanAck: b.Active() && b.AcknowledgedAt.IsZero(),
		AckAction: Prefix + "/bookings/" + b.ID + "/acknowledge"}
	d.Erased = v.ContactShown && v.Contact == (bokat.BookingContact{})
	if b.Active() {
		d.FlagAction, d.Note = Prefix+"/bookings/"+b.ID+"/flag", note
		d.CancelAction, d.CancelReasons = Prefix+"/bookings/"+b.ID+"/cancel", CancelReasons
	}
	if !b.CancelledAt.IsZero() {
		d.Cancelled = stamp(b.CancelledAt, pg.Lang)
	}
	if !b.AcknowledgedAt.IsZero() {
		d.Acked = fmt.Sprintf(pg.T["acked_by"], stamp(b.AcknowledgedAt, pg.Lang), p.userLabel(r.Context(), u, b.AcknowledgedBy))
	}
	pg.Data = d
	p.site.Layout.Render(w, r, status, "booking", pg)
}

// userLabel names a provider user of u's provider by address.
func (p *Pages) userLabel(ctx context.Context, u User, id string) string {
	if id == u.ID {
		return u.Email
	}
	users, err := p.svc.store.ProviderUsers(ctx, u.ProviderID)
	if err == nil {
		for _, x := range users {
			if x.ID == id {
				return x.Email
			}
		}
	}
	return id
}

// stamp is an instant in Stockholm time.
func stamp(t time.Time, lang string) string {
	t = t.In(schedule.Stockholm())
	if lang == web.EN {
		return t.Format("2 Jan 2006, 15:04")
	}
	return t.Format("2006-01-02 15:04")
}

func (p *Pages) acknowledge(w http.ResponseWriter, r *http.Request, u User, pg web.Page) {
	id := r.PathValue("booking_id")
	if _, err := p.svc.Acknowledge(r.Context(), u, id); p.site.Refused(w, r, "acknowledge", err) {
		return
	}
	web.RedirectNotice(w, r, pg.Lang, Prefix+"/bookings/"+id, "acked_notice")
}

func (p *Pages) flag(w http.ResponseWriter, r *http.Request, u User, pg web.Page) {
	id, note := r.PathValue("booking_id"), r.PostForm.Get("note")
	err := p.svc.Flag(r.Context(), u, id, note)
	if errors.Is(err, ErrInvalid) {
		pg.Error = pg.T["err_note"]
		p.renderBooking(w, r, u, pg, http.StatusBadRequest, note)
		return
	}
	if p.site.Refused(w, r, "flag", err) {
		return
	}
	web.RedirectNotice(w, r, pg.Lang, Prefix+"/bookings/"+id, "flagged_notice")
}

func (p *Pages) cancel(w http.ResponseWriter, r *http.Request, u User, pg web.Page) {
	id := r.PathValue("booking_id")
	err := ErrInvalid
	if r.PostForm.Get("confirm") == "yes" {
		err = p.svc.Cancel(r.Context(), u, id, r.PostForm.Get("reason"), r.PostForm.Get("cancel_notes"))
	}
	if errors.Is(err, ErrInvalid) {
		pg.Error = pg.T["err_cancel"]
		p.renderBooking(w, r, u, pg, http.StatusBadRequest, "")
		return
	}
	if p.site.Refused(w, r, "cancel", err) {
		return
	}
	web.RedirectNotice(w, r, pg.Lang, Prefix+"/bookings/"+id, "cancelled_notice")
}

// teamPage is the data of the team page.
type teamPage struct {
	Owner       bool
	Users       []teamUser
	Invitations []teamInvitation
	InviteURL   string
	Email       string
}

type teamUser struct {
	Email, Role, RemoveURL string
	You                    bool
}

type teamInvitation struct {
	Email, Role, Expires, WithdrawURL string
}

func (p *Pages) team(w http.ResponseWriter, r *http.Request, u User, pg web.Page) {
	p.renderTeam(w, r, u, pg, http.StatusOK, "")
}

func (p *Pages) renderTeam(w http.ResponseWriter, r *http.Request, u User, pg web.Page, status int, email string) {
	users, invs, err := p.svc.Team(r.Context(), u)
	if err != nil {
		p.site.Fail(w, r, "read team", err)
		return
	}
	pg.Title = pg.T["team_title"]
	pg.MarkCurrent(Prefix + "/team")
	pg.ShowNotice(r, "invited_notice", "invited_mailed_notice", "invited_unsent_notice", "removed_notice", "withdrawn_notice")
	d := teamPage{Owner: u.Role == Owner, InviteURL: Prefix + "/team/invitations", Email: email}
	for _, x := range users {
		tu := teamUser{Email: x.Email, Role: pg.T["role_"+string(x.Role)], You: x.ID == u.ID}
		if d.Owner && x.Role == Staff {
			tu.RemoveURL = Prefix + "/team/users/" + x.ID + "/remove"
		}
		d.Users = append(d.Users, tu)
	}
	for _, inv := range invs {
		ti := teamInvitation{Email: inv.Email, Role: pg.T["role_"+string(inv.Role)], Expires: fmt.Sprintf(pg.T["expires"], stamp(inv.ExpiresAt, pg.Lang))}
		if d.Owner {
			ti.WithdrawURL = Prefix + "/team/invitations/" + inv.ID + "/withdraw"
		}
		d.Invitations = append(d.Invitations, ti)
	}
	pg.Data = d
	p.site.Layout.Render(w, r, status, "team", pg)
}

func (p *Pages) invite(w http.ResponseWriter, r *http.Request, u User, pg web.Page) {
	email := r.PostForm.Get("email")
	inv, err := p.svc.Invite(r.Context(), &u, u.ProviderID, email, Staff)
	switch {
	case errors.Is(err, ErrInvalid):
		pg.Error = pg.T["bad_email"]
		p.renderTeam(w, r, u, pg, http.StatusBadRequest, email)
		return
	case errors.Is(err, bokat.ErrConflict):
		pg.Error = pg.T["err_has_account"]
		p.renderTeam(w, r, u, pg, http.StatusConflict, email)
		return
	case p.site.Refused(w, r, "invite", err):
		return
	}
	web.RedirectNotice(w, r, pg.Lang, Prefix+"/team", p.mailInvitation(r.Context(), u, inv, pg.Lang))
}

// mailInvitation sends the invitation e-mail, after the invitation is
// stored, and returns the notice to show: whether it went out.
func (p *Pages) mailInvitation(ctx context.Context, u User, inv Invitation, lang string) string {
	if p.mail == nil {
		return "invited_notice"
	}
	name, err := p.svc.ProviderName(ctx, u)
	if err == nil {
		err = p.mail.Send(ctx, invitationMessage(inv.Email, name, web.Link(lang, p.baseURL+Prefix+"/sign-in"), lang))
	}
	if err != nil {
		p.log.WarnContext(ctx, "invitation e-mail not sent", "invitation_id", inv.ID, "error", err.Error())
		return "invited_unsent_notice"
	}
	return "invited_mailed_notice"
}

func (p *Pages) withdraw(w http.ResponseWriter, r *http.Request, u User, pg web.Page) {
	if err := p.svc.Withdraw(r.Context(), u, r.PathValue("invitation_id")); p.site.Refused(w, r, "withdraw", err) {
		return
	}
	web.RedirectNotice(w, r, pg.Lang, Prefix+"/team", "withdrawn_notice")
}

func (p *Pages) remove(w http.ResponseWriter, r *http.Request, u User, pg web.Page) {
	if err := p.svc.RemoveStaff(r.Context(), u, r.PathValue("user_id")); p.site.Refused(w, r, "remove", err) {
		return
	}
	web.RedirectNotice(w, r, pg.Lang, Prefix+"/team", "removed_notice")
}
