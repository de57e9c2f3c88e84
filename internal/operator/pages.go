package operator

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"bokat"
	"bokat/internal/auth"
	"bokat/internal/catalog"
	"bokat/internal/credentials"
	"bokat/internal/provider"
	"bokat/internal/ratelimit"
	"bokat/internal/schedule"
	"bokat/internal/web"
)

// Prefix is where the operator console is served.
const Prefix = "/operator"

// PagesConfig holds the console's dependencies.
type PagesConfig struct {
	// BaseURL is the origin the console is reached at; https makes the
	// cookies Secure.
	BaseURL    string
	Production bool
	Store      Store
	Hasher     *auth.Hasher
	// Sender delivers sign-in codes; nil in development (the log has them).
	Sender web.CodeSender
	Logger *slog.Logger
	Now    func() time.Time
	// Wake is called after a write queued notification jobs (nil: none).
	Wake func()
	// Mover finds times to move a booking to and moves it; nil leaves the
	// move out.
	Mover *Mover
	// Limiter enforces Limits (nil: none).
	Limiter ratelimit.Limiter
	Limits  Limits
	// Credentials is the credential lifecycle the partners page runs
	// (rotate, revoke, purge); required.
	Credentials *credentials.Service
	// CalendarStaleAfter is how long a provider's calendar may fail before
	// the console shows it stale, as serve's --calendar-stale-after (0:
	// StaleAfter).
	CalendarStaleAfter time.Duration
	// Catalog names the jobs of follow-up requests (nil: by their ids).
	Catalog *catalog.Catalog
}

// Limits are the console's budgets.
type Limits struct {
	Pages  ratelimit.Policy
	SignIn web.SendLimits
}

// DefaultLimits are the product defaults.
func DefaultLimits() Limits {
	return Limits{
		Pages: ratelimit.Policy{Name: "operator-pages", Quota: 300, Window: time.Minute},
		SignIn: web.SendLimits{
			IP:      ratelimit.Policy{Name: "operator-signin-ip", Quota: 20, Window: time.Hour},
			Address: ratelimit.Policy{Name: "operator-signin-address", Quota: 5, Window: time.Hour},
			Global:  ratelimit.Policy{Name: "operator-signin-global", Quota: 200, Window: time.Hour},
		},
	}
}

// Pages serves the console under Prefix.
type Pages struct {
	svc     *Service
	mover   *Mover
	creds   *credentials.Service
	catalog *catalog.Catalog
	site    *web.Site[Tx]
	mux     *http.ServeMux
}

// NewPages returns the console.
func NewPages(cfg PagesConfig) (*Pages, error) {
	if cfg.Store == nil || cfg.Hasher == nil || cfg.Logger == nil || cfg.BaseURL == "" || cfg.Credentials == nil {
		return nil, errors.New("operator pages: BaseURL, Store, Hasher, Logger and Credentials are required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	layout, err := web.NewLayout(Prefix+"/static/site.css", Prefix+"/", texts, pageTemplates, cfg.Logger)
	if err != nil {
		return nil, err
	}
	svc := NewService(cfg.Store, cfg.Now, cfg.Logger, cfg.Wake)
	if cfg.CalendarStaleAfter > 0 {
		svc.staleAfter = cfg.CalendarStaleAfter
	}
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
		Multiline:   []string{"note"},
		LogName:     "operator page",
		Refusals: []web.Refusal{
			{Err: bokat.ErrNotFound, Status: http.StatusNotFound, MessageKey: "err_not_found", Code: "not_found"},
			{Err: ErrNotConfirmed, Status: http.StatusConflict, MessageKey: "err_not_confirmed", Code: "booking_not_confirmed"},
		},
	}, cfg.BaseURL, cfg.Hasher, SessionTTL)
	p := &Pages{svc: svc, mover: cfg.Mover, creds: cfg.Credentials, catalog: cfg.Catalog, site: site, mux: http.NewServeMux()}
	p.routes()
	return p, nil
}

// Service returns the console's use cases.
func (p *Pages) Service() *Service { return p.svc }

// ServeHTTP serves the console.
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
	m.Handle("POST "+Prefix+"/bookings/{booking_id}/cancel", p.signedIn(p.cancel))
	m.Handle("GET "+Prefix+"/bookings/{booking_id}/move", p.signedIn(p.moveOptions))
	m.Handle("POST "+Prefix+"/bookings/{booking_id}/move", p.signedIn(p.move))
	m.Handle("GET "+Prefix+"/providers", p.signedIn(p.providers))
	m.Handle("GET "+Prefix+"/providers/{provider_id}", p.signedIn(p.providerPage))
	m.Handle("POST "+Prefix+"/providers/{provider_id}/pause", p.signedIn(p.pause))
	m.Handle("POST "+Prefix+"/providers/{provider_id}/invite", p.signedIn(p.inviteProviderUser))
	m.Handle("POST "+Prefix+"/providers/{provider_id}/tokens/{token_id}/revoke", p.signedIn(p.revokeProviderToken))
	m.Handle("GET "+Prefix+"/follow-ups", p.signedIn(p.followUps))
	m.Handle("POST "+Prefix+"/follow-ups/{request_id}/note", p.signedIn(p.noteFollowUp))
	m.Handle("GET "+Prefix+"/webhooks", p.signedIn(p.webhooks))
	m.Handle("GET "+Prefix+"/partners", p.signedIn(p.credentials))
	m.Handle("POST "+Prefix+"/partners/{partner_id}/rotate", p.signedIn(p.rotatePartner))
	m.Handle("POST "+Prefix+"/partners/{partner_id}/revoke", p.signedIn(p.revokePartner()))
	m.Handle("POST "+Prefix+"/oauth-clients/{client_id}/revoke", p.signedIn(p.revokeClient()))
	m.Handle("POST "+Prefix+"/oauth-clients/purge", p.signedIn(p.purgeClients))
	m.Handle("GET "+Prefix+"/audit", p.signedIn(p.audit))
	m.Handle(Prefix+"/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.site.Layout.RenderError(w, r, http.StatusNotFound, "err_not_found", "not_found")
	}))
}

// Routes are the console's routes (method and pattern), for the
// authorization matrix.
func Routes() [][2]string {
	return [][2]string{
		{"GET", Prefix + "/"}, {"GET", Prefix + "/bookings"}, {"GET", Prefix + "/bookings/{booking_id}"},
		{"POST", Prefix + "/bookings/{booking_id}/cancel"}, {"GET", Prefix + "/bookings/{booking_id}/move"},
		{"POST", Prefix + "/bookings/{booking_id}/move"},
		{"GET", Prefix + "/providers"}, {"GET", Prefix + "/providers/{provider_id}"},
		{"POST", Prefix + "/providers/{provider_id}/pause"}, {"POST", Prefix + "/providers/{provider_id}/invite"},
		{"POST", Prefix + "/providers/{provider_id}/tokens/{token_id}/revoke"},
		{"GET", Prefix + "/follow-ups"}, {"POST", Prefix + "/follow-ups/{request_id}/note"},
		{"GET", Prefix + "/webhooks"}, {"GET", Prefix + "/partners"},
		{"POST", Prefix + "/partners/{partner_id}/rotate"}, {"POST", Prefix + "/partners/{partner_id}/revoke"},
		{"POST", Prefix + "/oauth-clients/{client_id}/revoke"}, {"POST", Prefix + "/oauth-clients/purge"},
		{"GET", Prefix + "/audit"},
	}
}

// pageFunc serves a request of a signed-in operator.
type pageFunc func(w http.ResponseWriter, r *http.Request, op Operator, pg web.Page)

// signedIn admits a page request (budget, clean parameters, CSRF on POST),
// finds its operator by session and calls h; without a valid operator
// session it leads to the sign-in page. Nothing else signs in here: a
// provider's session, a partner's or a provider's token is not looked at.
func (p *Pages) signedIn(h pageFunc) http.Handler {
	return p.site.Protect(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		op, pg, ok := web.SignedIn(p.site, w, r, p.svc.SessionOperator)
		if !ok {
			return
		}
		pg.SignedIn = op.Email
		pg.Nav = []web.NavLink{
			{URL: Prefix + "/bookings", Label: pg.T["nav_bookings"]},
			{URL: Prefix + "/providers", Label: pg.T["nav_providers"]},
			{URL: Prefix + "/follow-ups", Label: pg.T["nav_followups"]},
			{URL: Prefix + "/webhooks", Label: pg.T["nav_webhooks"]},
			{URL: Prefix + "/partners", Label: pg.T["nav_partners"]},
			{URL: Prefix + "/audit", Label: pg.T["nav_audit"]},
		}
		h(w, r, op, pg)
	}))
}

// stamp is an instant in Stockholm time ("" for zero).
func stamp(t time.Time, lang string) string {
	if t.IsZero() {
		return ""
	}
	t = t.In(schedule.Stockholm())
	if lang == web.EN {
		return t.Format("2 Jan 2006, 15:04")
	}
	return t.Format("2006-01-02 15:04")
}

func (p *Pages) home(w http.ResponseWriter, r *http.Request, _ Operator, pg web.Page) {
	http.Redirect(w, r, web.Link(pg.Lang, Prefix+"/bookings"), http.StatusSeeOther)
}

// bookingRow is one booking as the lists show it.
type bookingRow struct {
	ID, URL, When, Service, Provider, Postcode, Status, StatusClass string
}

func row(b Booking, pg web.Page) bookingRow {
	out := bookingRow{ID: b.ID, URL: Prefix + "/bookings/" + b.ID, Postcode: b.Postcode, Provider: b.ProviderName,
		When: schedule.SlotLabel(schedule.Interval{Start: b.SlotStart, End: b.SlotEnd}, pg.Lang), Service: b.ServiceLabelSV}
	if pg.Lang == web.EN && b.ServiceLabelEN != "" {
		out.Service = b.ServiceLabelEN
	}
	switch {
	case !b.Active():
		out.Status, out.StatusClass = pg.T["status_cancelled"], "cancelled"
	case !b.AcknowledgedAt.IsZero():
		out.Status, out.StatusClass = pg.T["status_acked"], "ok"
	default:
		out.Status = pg.T["status_confirmed"]
	}
	return out
}

// searchPage is the data of the bookings page.
type searchPage struct {
	Q        FindInput
	Searched bool
	Rows     []bookingRow
	Statuses []string
	Full     bool
}

func (p *Pages) bookings(w http.ResponseWriter, r *http.Request, _ Operator, pg web.Page) {
	q := r.URL.Query()
	in := FindInput{ID: q.Get("id"), ProviderID: q.Get("provider"), Status: q.Get("status"), From: q.Get("from"),
		To: q.Get("to"), Email: q.Get("email")}
	pg.Title = pg.T["bookings_title"]
	pg.MarkCurrent(Prefix + "/bookings")
	d := searchPage{Q: in, Statuses: []string{bokat.BookingConfirmed, bokat.BookingCancelled}}
	status := http.StatusOK
	if !in.Empty() {
		list, err := p.svc.FindBookings(r.Context(), in)
		switch {
		case errors.Is(err, ErrInvalid):
			pg.Error, status = pg.T["err_search"], http.StatusBadRequest
		case err != nil:
			p.site.Fail(w, r, "find bookings", err)
			return
		default:
			d.Searched, d.Full = true, len(list) >= SearchLimit
			for _, b := range list {
				d.Rows = append(d.Rows, row(b, pg))
			}
		}
	}
	pg.Data = d
	p.site.Layout.Render(w, r, status, "bookings", pg)
}

// storyLine is one line of a booking's story.
type storyLine struct {
	At, What, Detail, Class string
}

// storySection is one part of a booking's story: events, messages,
// webhook deliveries, operator actions.
type storySection struct {
	ID, Heading string
	Lines       []storyLine
}

// bookingPage is the data of a booking's page.
type bookingPage struct {
	Row                       bookingRow
	Price, Owner              string
	Cancelled, CancelReason   string
	Rescheduled               string
	Acked, ProviderMsg        string
	CustomerMsg               string
	Sections                  []storySection
	Active                    bool
	CancelAction, MoveURL     string
	Reasons                   []string
	For, Reason, Note         string
	CancelReasonsForCustomers []string
}

func (p *Pages) booking(w http.ResponseWriter, r *http.Request, _ Operator, pg web.Page) {
	p.renderBooking(w, r, pg, http.StatusOK, CancelInput{})
}

func (p *Pages) renderBooking(w http.ResponseWriter, r *http.Request, pg web.Page, status int, in CancelInput) {
	v, err := p.svc.Story(r.Context(), r.PathValue("booking_id"))
	if p.site.Refused(w, r, "read booking", err) {
		return
	}
	b := v.Booking
	pg.Title = fmt.Sprintf("%s %s", pg.T["booking_title"], b.ID)
	pg.MarkCurrent(Prefix + "/bookings")
	pg.ShowNotice(r, "cancelled_notice", "moved_notice")
	d := bookingPage{Row: row(b, pg), Price: fmt.Sprintf(pg.T["price_sek"], b.PriceSEK), Active: b.Active(),
		Owner: b.OwnerClientID, Cancelled: stamp(b.CancelledAt, pg.Lang), CancelReason: b.CancelReason,
		Rescheduled: stamp(b.RescheduledAt, pg.Lang), Reasons: CustomerCancelReasons,
		For: in.For, Reason: in.Reason, Note: in.Note,
		CustomerMsg: msgStatus(pg, b.CustomerConfirmationStatus), ProviderMsg: msgStatus(pg, b.ProviderConfirmationStatus)}
	if b.OwnerUserID != "" {
		d.Owner += " / " + b.OwnerUserID
	}
	if !b.AcknowledgedAt.IsZero() {
		d.Acked = fmt.Sprintf(pg.T["acked_by"], stamp(b.AcknowledgedAt, pg.Lang), b.AcknowledgedBy)
	}
	if b.Active() {
		d.CancelAction = Prefix + "/bookings/" + b.ID + "/cancel"
		if p.mover != nil {
			d.MoveURL = Prefix + "/bookings/" + b.ID + "/move"
		}
	}
	var events, messages, deliveries []storyLine
	for _, e := range v.Story.Events {
		l := storyLine{At: stamp(e.OccurredAt, pg.Lang), What: e.Type, Detail: e.Reason}
		if e.RelayedAt.IsZero() {
			l.Detail = strings.TrimSpace(l.Detail + " " + pg.T["not_relayed"])
		}
		events = append(events, l)
	}
	for _, m := range v.Story.Messages {
		l := storyLine{At: stamp(m.UpdatedAt, pg.Lang), What: pg.T["to_"+m.Recipient] + ": " + m.EventType,
			Detail: fmt.Sprintf(pg.T["msg_detail"], pg.T["job_"+m.Status], m.Attempts), Class: statusClass(m.Status)}
		if m.LastError != "" {
			l.Detail += " – " + m.LastError
		}
		messages = append(messages, l)
	}
	for _, x := range v.Story.Deliveries {
		l := storyLine{At: stamp(x.UpdatedAt, pg.Lang), What: x.EventType + " → " + x.EndpointID,
			Detail: fmt.Sprintf(pg.T["msg_detail"], pg.T["job_"+x.Status], x.Attempts), Class: statusClass(x.Status)}
		if x.LastStatusCode != 0 {
			l.Detail += fmt.Sprintf(" – HTTP %d", x.LastStatusCode)
		}
		if x.LastError != "" {
			l.Detail += " – " + x.LastError
		}
		deliveries = append(deliveries, l)
	}
	d.Sections = []storySection{{"events", "events_heading", events}, {"messages", "messages_heading", messages},
		{"webhooks", "webhooks_heading", deliveries}, {"actions", "audit_heading", auditLines(v.Audit, pg)}}
	pg.Data = d
	p.site.Layout.Render(w, r, status, "booking", pg)
}

func auditLines(entries []AuditEntry, pg web.Page) []storyLine {
	out := make([]storyLine, 0, len(entries))
	for _, a := range entries {
		out = append(out, storyLine{At: stamp(a.At, pg.Lang), What: a.Action + " " + a.ObjectKind + " " + a.ObjectID,
			Detail: a.Actor + " " + FormatDetails(a.Details)})
	}
	return out
}

func statusClass(s string) string {
	switch s {
	case "sent", "delivered":
		return "ok"
	case "failed", "cancelled":
		return "cancelled"
	}
	return ""
}

func msgStatus(pg web.Page, s string) string {
	if s == "" {
		return pg.T["job_pending"]
	}
	return pg.T["job_"+s]
}

func (p *Pages) cancel(w http.ResponseWriter, r *http.Request, op Operator, pg web.Page) {
	id := r.PathValue("booking_id")
	in := CancelInput{For: r.PostForm.Get("for"), Reason: r.PostForm.Get("reason"), Note: r.PostForm.Get("note")}
	err := ErrInvalid
	if r.PostForm.Get("confirm") == "yes" {
		err = p.svc.Cancel(r.Context(), op, id, in)
	}
	if errors.Is(err, ErrInvalid) {
		pg.Error = pg.T["err_cancel"]
		p.renderBooking(w, r, pg, http.StatusBadRequest, in)
		return
	}
	if p.site.Refused(w, r, "cancel", err) {
		return
	}
	web.RedirectNotice(w, r, pg.Lang, Prefix+"/bookings/"+id, "cancelled_notice")
}

// movePage is the data of the move page.
type movePage struct {
	Row         bookingRow
	When        string
	Options     []moveOption
	NoOptions   string
	Action      string
	BackURL     string
	For, Note   string
	SearchedFor string
}

type moveOption struct {
	ID, Label, Price string
}

func (p *Pages) moveOptions(w http.ResponseWriter, r *http.Request, _ Operator, pg web.Page) {
	p.renderMove(w, r, pg, http.StatusOK, MoveInput{})
}

func (p *Pages) renderMove(w http.ResponseWriter, r *http.Request, pg web.Page, status int, in MoveInput) {
	if p.mover == nil {
		p.site.Layout.RenderError(w, r, http.StatusNotFound, "err_not_found", "not_found")
		return
	}
	id := r.PathValue("booking_id")
	when := r.URL.Query().Get("when")
	b, res, err := p.svc.MoveOptions(r.Context(), p.mover, id, when, pg.Lang)
	var be *bokat.Error
	if errors.As(err, &be) {
		pg.Error, err = be.Detail, nil
	}
	if p.site.Refused(w, r, "move options", err) {
		return
	}
	pg.Title = fmt.Sprintf("%s %s", pg.T["move_title"], b.ID)
	pg.MarkCurrent(Prefix + "/bookings")
	d := movePage{Row: row(b, pg), When: when, Action: Prefix + "/bookings/" + b.ID + "/move",
		BackURL: Prefix + "/bookings/" + b.ID, For: in.For, Note: in.Note}
	for _, o := range res.Options {
		d.Options = append(d.Options, moveOption{ID: o.ID, Price: fmt.Sprintf(pg.T["price_sek"], o.Price.AmountSEK),
			Label: schedule.SlotLabel(o.Slot, pg.Lang)})
	}
	if len(d.Options) == 0 && pg.Error == "" {
		d.NoOptions = pg.T["no_move_options"]
	}
	pg.Data = d
	p.site.Layout.Render(w, r, status, "move", pg)
}

func (p *Pages) move(w http.ResponseWriter, r *http.Request, op Operator, pg web.Page) {
	if p.mover == nil {
		p.site.Layout.RenderError(w, r, http.StatusNotFound, "err_not_found", "not_found")
		return
	}
	id := r.PathValue("booking_id")
	in := MoveInput{OptionID: r.PostForm.Get("option"), For: r.PostForm.Get("for"), Agreed: r.PostForm.Get("agreed") == "yes",
		Note: r.PostForm.Get("note")}
	err := p.svc.Move(r.Context(), p.mover, op, id, in)
	var be *bokat.Error
	switch {
	case errors.Is(err, ErrInvalid):
		pg.Error = pg.T["err_move"]
		p.renderMove(w, r, pg, http.StatusBadRequest, in)
		return
	case errors.As(err, &be):
		pg.Error = pg.T["err_move_refused"] + " " + be.Detail
		p.renderMove(w, r, pg, http.StatusConflict, in)
		return
	case p.site.Refused(w, r, "move", err):
		return
	}
	web.RedirectNotice(w, r, pg.Lang, Prefix+"/bookings/"+id, "moved_notice")
}

func (p *Pages) audit(w http.ResponseWriter, r *http.Request, _ Operator, pg web.Page) {
	entries, err := p.svc.AuditLog(r.Context(), "", "", 200)
	if err != nil {
		p.site.Fail(w, r, "read audit", err)
		return
	}
	pg.Title = pg.T["audit_title"]
	pg.MarkCurrent(Prefix + "/audit")
	rows := make([]auditRow, 0, len(entries))
	for _, a := range entries {
		rows = append(rows, auditRow{At: stamp(a.At, pg.Lang), Who: a.Actor, Action: a.Action,
			Object: a.ObjectKind + " " + a.ObjectID, URL: objectURL(a), Details: FormatDetails(a.Details)})
	}
	pg.Data = rows
	p.site.Layout.Render(w, r, http.StatusOK, "audit", pg)
}

type auditRow struct {
	At, Who, Action, Object, URL, Details string
}

func objectURL(a AuditEntry) string {
	switch a.ObjectKind {
	case "booking":
		return Prefix + "/bookings/" + a.ObjectID
	case "provider":
		return Prefix + "/providers/" + a.ObjectID
	case "follow_up":
		return Prefix + "/follow-ups"
	case credentials.KindPartner, credentials.KindOAuthClient:
		return Prefix + "/partners"
	}
	return ""
}

// providerRow is a provider as the providers pages show it.
type providerRow struct {
	ID, Name, URL, Status, StatusClass string
	Users, Invitations                 int
	LastSignIn                         string
	Failures                           int
	LastFailure                        string
	Feeds                              []feedRow
	FeedsLine                          string
	FeedsClass                         string
}

type feedRow struct {
	Label, Synced, Error, Failing, Class string
	Stale                                bool
}

func providerRowOf(h ProviderHealth, pg web.Page) providerRow {
	out := providerRow{ID: h.ID, Name: h.Name, URL: Prefix + "/providers/" + h.ID, Users: h.Users,
		Invitations: h.OpenInvitations, LastSignIn: stamp(h.LastSignIn, pg.Lang), Failures: h.MessageFailures,
		LastFailure: h.LastMessageError}
	switch {
	case !h.Active:
		out.Status, out.StatusClass = pg.T["p_inactive"], "cancelled"
	case !h.PausedUntil.IsZero():
		out.Status, out.StatusClass = fmt.Sprintf(pg.T["p_paused_until"], schedule.DateOf(h.PausedUntil).String()), "cancelled"
	default:
		out.Status, out.StatusClass = pg.T["p_active"], "ok"
	}
	if out.LastSignIn == "" {
		out.LastSignIn = pg.T["never"]
	}
	stale, failing := 0, 0
	for _, f := range h.Feeds {
		fr := feedRow{Label: f.Label, Synced: stamp(f.LastSyncedAt, pg.Lang), Error: f.LastError,
			Failing: stamp(f.FailingSince, pg.Lang), Stale: f.Stale}
		if fr.Synced == "" {
			fr.Synced = pg.T["never"]
		}
		switch {
		case f.Stale:
			stale++
			fr.Class = "cancelled"
		case !f.FailingSince.IsZero():
			failing++
		default:
			fr.Class = "ok"
		}
		out.Feeds = append(out.Feeds, fr)
	}
	switch {
	case len(h.Feeds) == 0:
		out.FeedsLine = pg.T["feeds_none"]
	case stale > 0:
		out.FeedsLine, out.FeedsClass = fmt.Sprintf(pg.T["feeds_stale"], stale, len(h.Feeds)), "cancelled"
	case failing > 0:
		out.FeedsLine = fmt.Sprintf(pg.T["feeds_failing"], failing, len(h.Feeds))
	default:
		out.FeedsLine, out.FeedsClass = fmt.Sprintf(pg.T["feeds_ok"], len(h.Feeds)), "ok"
	}
	return out
}

// ProvidersShown is the most providers the providers page lists: a
// national supply has tens of thousands, which the search narrows.
const ProvidersShown = 100

// providersPage is the data of the providers list.
type providersPage struct {
	Rows      []providerRow
	Attention bool
	AllURL    string
	AttnURL   string
	// Q is the search (a part of a name or id); Matched how many providers
	// it and the attention filter let through, of which Rows shows the
	// first ProvidersShown.
	Q       string
	Matched int
}

func (p *Pages) providers(w http.ResponseWriter, r *http.Request, _ Operator, pg web.Page) {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	if len(q) > 100 {
		q = strings.ToValidUTF8(q[:100], "") // not half a letter
	}
	d := providersPage{Attention: r.URL.Query().Get("attention") == "1", AllURL: Prefix + "/providers",
		AttnURL: Prefix + "/providers?attention=1", Q: q}
	list, matched, err := p.svc.FindProviders(r.Context(), ProviderFilter{Search: q, Attention: d.Attention}, ProvidersShown)
	if err != nil {
		p.site.Fail(w, r, "read providers", err)
		return
	}
	pg.Title = pg.T["providers_title"]
	pg.MarkCurrent(Prefix + "/providers")
	d.Matched = matched
	for _, h := range list {
		d.Rows = append(d.Rows, providerRowOf(h, pg))
	}
	pg.Data = d
	p.site.Layout.Render(w, r, http.StatusOK, "providers", pg)
}

// providerPage is the data of one provider's page.
type providerPage struct {
	Row                      providerRow
	PauseAction, InviteURL   string
	Paused                   bool
	Until, Note, Email, Role string
	Roles                    []string
	Tokens                   []tokenRow
}

func (p *Pages) providerPage(w http.ResponseWriter, r *http.Request, _ Operator, pg web.Page) {
	p.renderProvider(w, r, pg, http.StatusOK, providerPage{})
}

func (p *Pages) renderProvider(w http.ResponseWriter, r *http.Request, pg web.Page, status int, d providerPage) {
	id := r.PathValue("provider_id")
	h, err := p.svc.Provider(r.Context(), id)
	if errors.Is(err, bokat.ErrNotFound) {
		p.site.Layout.RenderError(w, r, http.StatusNotFound, "err_not_found", "not_found")
		return
	}
	if err != nil {
		p.site.Fail(w, r, "read the provider", err)
		return
	}
	d.Row, d.Paused = providerRowOf(h, pg), !h.PausedUntil.IsZero()
	pg.Title = d.Row.Name
	pg.MarkCurrent(Prefix + "/providers")
	pg.ShowNotice(r, "paused_notice", "unpaused_notice", "provider_invited_notice", "token_revoked_notice")
	tokens, err := p.creds.ProviderTokens(r.Context(), id)
	if err != nil {
		p.site.Fail(w, r, "read provider tokens", err)
		return
	}
	for _, t := range tokens {
		d.Tokens = append(d.Tokens, tokenRowOf(t, id, pg))
	}
	d.PauseAction, d.InviteURL = Prefix+"/providers/"+id+"/pause", Prefix+"/providers/"+id+"/invite"
	d.Roles = []string{string(provider.Owner), string(provider.Staff)}
	if d.Role == "" {
		d.Role = string(provider.Owner)
	}
	pg.Data = d
	p.site.Layout.Render(w, r, status, "provider", pg)
}

func (p *Pages) pause(w http.ResponseWriter, r *http.Request, op Operator, pg web.Page) {
	id := r.PathValue("provider_id")
	until := r.PostForm.Get("until")
	if r.PostForm.Get("resume") == "yes" {
		until = ""
	}
	err := p.svc.Pause(r.Context(), op, id, until, r.PostForm.Get("note"))
	if errors.Is(err, ErrInvalid) {
		pg.Error = pg.T["err_pause"]
		p.renderProvider(w, r, pg, http.StatusBadRequest, providerPage{Until: r.PostForm.Get("until"), Note: r.PostForm.Get("note")})
		return
	}
	if p.site.Refused(w, r, "pause", err) {
		return
	}
	done := "paused_notice"
	if until == "" {
		done = "unpaused_notice"
	}
	web.RedirectNotice(w, r, pg.Lang, Prefix+"/providers/"+id, done)
}

func (p *Pages) inviteProviderUser(w http.ResponseWriter, r *http.Request, op Operator, pg web.Page) {
	id := r.PathValue("provider_id")
	email, role := r.PostForm.Get("email"), r.PostForm.Get("role")
	_, err := p.svc.InviteProviderUser(r.Context(), op, id, email, role)
	switch {
	case errors.Is(err, ErrInvalid):
		pg.Error = pg.T["bad_email"]
		p.renderProvider(w, r, pg, http.StatusBadRequest, providerPage{Email: email, Role: role})
		return
	case errors.Is(err, bokat.ErrConflict):
		pg.Error = pg.T["err_has_account"]
		p.renderProvider(w, r, pg, http.StatusConflict, providerPage{Email: email, Role: role})
		return
	case p.site.Refused(w, r, "invite", err):
		return
	}
	web.RedirectNotice(w, r, pg.Lang, Prefix+"/providers/"+id, "provider_invited_notice")
}

// followUpRow is a follow-up request as the queue shows it.
type followUpRow struct {
	ID, Created, Job, Postcode, Status, Mode string
	Uncovered                                bool
	Handed                                   string
	HandedClass                              string
	Notes                                    []storyLine
	NoteAction                               string
}

// followUpsPage is the data of the queue.
type followUpsPage struct {
	Rows      []followUpRow
	Uncovered bool
	AllURL    string
	UncovURL  string
	Note      string
	NoteFor   string
}

// jobName is a job type's name in the page's language after its
// vertical's ("VVS: Byte av blandare"), or its ids ("vvs / install_faucet")
// when the catalog does not know it or the console has none.
func (p *Pages) jobName(verticalID, jobTypeID, lang string) string {
	if p.catalog != nil {
		v, okV := p.catalog.Vertical(verticalID)
		j, okJ := p.catalog.JobType(verticalID, jobTypeID)
		if okV && okJ {
			if lang == "en" {
				return v.LabelEN + ": " + j.LabelEN
			}
			return v.LabelSV + ": " + j.LabelSV
		}
	}
	return verticalID + " / " + jobTypeID
}

func (p *Pages) followUps(w http.ResponseWriter, r *http.Request, _ Operator, pg web.Page) {
	p.renderFollowUps(w, r, pg, http.StatusOK, "", "")
}

func (p *Pages) renderFollowUps(w http.ResponseWriter, r *http.Request, pg web.Page, status int, noteFor, note string) {
	uncovered := r.URL.Query().Get("uncovered") == "1"
	list, err := p.svc.FollowUps(r.Context(), uncovered)
	if err != nil {
		p.site.Fail(w, r, "read follow-ups", err)
		return
	}
	pg.Title = pg.T["followups_title"]
	pg.MarkCurrent(Prefix + "/follow-ups")
	pg.ShowNotice(r, "noted_notice")
	d := followUpsPage{Uncovered: uncovered, AllURL: Prefix + "/follow-ups", UncovURL: Prefix + "/follow-ups?uncovered=1",
		Note: note, NoteFor: noteFor}
	for _, f := range list {
		row := followUpRow{ID: f.ID, Created: stamp(f.CreatedAt, pg.Lang), Job: p.jobName(f.VerticalID, f.JobTypeID, pg.Lang),
			Postcode: f.Postcode, Status: f.Status, Mode: f.Mode, Uncovered: f.CandidateCount == 0,
			NoteAction: Prefix + "/follow-ups/" + f.ID + "/note"}
		if row.Postcode == "" {
			row.Postcode = "–"
		}
		sent, failed := 0, 0
		for _, c := range f.Candidates {
			switch c.Status {
			case "sent":
				sent++
			case "failed":
				failed++
			}
		}
		switch {
		case row.Uncovered:
			row.Handed, row.HandedClass = pg.T["fu_uncovered"], "cancelled"
		case failed > 0:
			row.Handed, row.HandedClass = fmt.Sprintf(pg.T["fu_handed_failed"], len(f.Candidates), sent, failed), "cancelled"
		default:
			row.Handed = fmt.Sprintf(pg.T["fu_handed"], len(f.Candidates), sent)
			if sent == len(f.Candidates) {
				row.HandedClass = "ok"
			}
		}
		for _, n := range f.Notes {
			row.Notes = append(row.Notes, storyLine{At: stamp(n.At, pg.Lang), What: n.Details["note"], Detail: n.Actor})
		}
		d.Rows = append(d.Rows, row)
	}
	pg.Data = d
	p.site.Layout.Render(w, r, status, "followups", pg)
}

func (p *Pages) noteFollowUp(w http.ResponseWriter, r *http.Request, op Operator, pg web.Page) {
	id, note := r.PathValue("request_id"), r.PostForm.Get("note")
	err := p.svc.NoteFollowUp(r.Context(), op, id, note)
	if errors.Is(err, ErrInvalid) {
		pg.Error = pg.T["err_note"]
		p.renderFollowUps(w, r, pg, http.StatusBadRequest, id, note)
		return
	}
	if p.site.Refused(w, r, "note follow-up", err) {
		return
	}
	target := Prefix + "/follow-ups"
	if r.URL.Query().Get("uncovered") == "1" {
		target += "?uncovered=1"
	}
	web.RedirectNotice(w, r, pg.Lang, target, "noted_notice")
}

// endpointRow is a failing webhook endpoint as the page shows it.
type endpointRow struct {
	ID, Owner, Host, Mode, Disabled, Failed, Retrying, Last string
	DisabledClass                                           string
}

func (p *Pages) webhooks(w http.ResponseWriter, r *http.Request, _ Operator, pg web.Page) {
	list, err := p.svc.FailingEndpoints(r.Context())
	if err != nil {
		p.site.Fail(w, r, "read webhook endpoints", err)
		return
	}
	pg.Title = pg.T["webhooks_title"]
	pg.MarkCurrent(Prefix + "/webhooks")
	rows := make([]endpointRow, 0, len(list))
	for _, e := range list {
		row := endpointRow{ID: e.ID, Owner: e.OwnerClientID, Host: e.Host, Mode: e.Mode,
			Failed: fmt.Sprint(e.Failed), Retrying: fmt.Sprint(e.Retrying)}
		if e.OwnerUserID != "" {
			row.Owner += " / " + e.OwnerUserID
		}
		if !e.DisabledAt.IsZero() {
			row.Disabled, row.DisabledClass = fmt.Sprintf(pg.T["wh_disabled"], stamp(e.DisabledAt, pg.Lang), e.DisabledReason), "cancelled"
		} else {
			row.Disabled, row.DisabledClass = pg.T["wh_enabled"], "ok"
		}
		if !e.LastFailureAt.IsZero() {
			row.Last = stamp(e.LastFailureAt, pg.Lang)
			if e.LastStatusCode != 0 {
				row.Last += fmt.Sprintf(" – HTTP %d", e.LastStatusCode)
			}
			if e.LastError != "" {
				row.Last += " – " + e.LastError
			}
		}
		rows = append(rows, row)
	}
	pg.Data = rows
	p.site.Layout.Render(w, r, http.StatusOK, "webhooks", pg)
}
