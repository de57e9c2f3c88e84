package operator

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"bokat"
	"bokat/internal/credentials"
	"bokat/internal/web"
)

// The partners page runs the credential lifecycle (package credentials)
// with the signed-in operator as the audit actor: rotate a partner's token
// with an overlap, revoke a partner or an OAuth client (after a
// confirmation page, so no script is needed), purge unused dynamically
// registered clients. A rotation's new token is on its answer page only:
// never stored, logged or shown again; every page is served no-store, and
// the rotate form carries the rotation it was shown with, so the same form
// sent again (a reload of the answer) rotates nothing and shows no token.

// Overlaps are the overlaps the rotate form offers, by form value.
var Overlaps = []struct {
	Value string
	D     time.Duration
}{{"0", 0}, {"1h", time.Hour}, {"24h", 24 * time.Hour}, {"7d", 7 * 24 * time.Hour}}

// PurgePeriods are the idle times the purge form offers, by form value.
var PurgePeriods = []struct {
	Value string
	D     time.Duration
}{{"7d", 7 * 24 * time.Hour}, {"30d", 30 * 24 * time.Hour}, {"90d", 90 * 24 * time.Hour}}

func overlapOf(v string) (time.Duration, bool) {
	for _, o := range Overlaps {
		if o.Value == v {
			return o.D, true
		}
	}
	return 0, false
}

func purgePeriodOf(v string) (time.Duration, bool) {
	for _, o := range PurgePeriods {
		if o.Value == v {
			return o.D, true
		}
	}
	return 0, false
}

// partnerRow is a partner credential as the partners page shows it.
type partnerRow struct {
	ID, Name, Scopes, Mode, Created, LastUsed string
	State, StateClass                         string
	// Previous is the replaced token's line while it still works.
	Previous string
	Active   bool
	// Seen is the rotation the rotate form was shown with (Unix ms, 0:
	// never rotated).
	Seen string
}

// clientRow is an OAuth client as the partners page shows it.
type clientRow struct {
	ID, Name, Scopes, Mode, Registration, Created, LastUsed string
	State, StateClass                                       string
	Active                                                  bool
}

// credentialsPage is the data of the partners page.
type credentialsPage struct {
	Partners []partnerRow
	Clients  []clientRow
	Overlaps []string
	Periods  []string
}

func (p *Pages) credentials(w http.ResponseWriter, r *http.Request, _ Operator, pg web.Page) {
	partners, err := p.creds.Partners(r.Context())
	if err != nil {
		p.site.Fail(w, r, "read partners", err)
		return
	}
	clients, err := p.creds.OAuthClients(r.Context())
	if err != nil {
		p.site.Fail(w, r, "read OAuth clients", err)
		return
	}
	pg.Title = pg.T["partners_title"]
	pg.MarkCurrent(Prefix + "/partners")
	pg.ShowNotice(r, "partner_revoked_notice", "client_revoked_notice")
	if r.URL.Query().Get("done") == "purged_notice" {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		pg.Notice = fmt.Sprintf(pg.T["purged_notice"], n)
	}
	now := p.creds.Now()
	d := credentialsPage{}
	for _, o := range Overlaps {
		d.Overlaps = append(d.Overlaps, o.Value)
	}
	for _, o := range PurgePeriods {
		d.Periods = append(d.Periods, o.Value)
	}
	for _, c := range partners {
		row := partnerRow{ID: c.ID, Name: c.Name, Scopes: scopeLine(c.Scopes), Mode: string(c.Mode),
			Created: stamp(c.CreatedAt, pg.Lang), LastUsed: lastUsed(c.LastUsedAt, pg), Seen: "0"}
		if !c.RotatedAt.IsZero() {
			row.Seen = strconv.FormatInt(c.RotatedAt.UnixMilli(), 10)
		}
		switch c.State(now) {
		case credentials.StateRevoked:
			row.State, row.StateClass = fmt.Sprintf(pg.T["cr_revoked"], stamp(c.RevokedAt, pg.Lang)), "cancelled"
		case credentials.StateRotating:
			row.State, row.Active = fmt.Sprintf(pg.T["cr_rotated"], stamp(c.RotatedAt, pg.Lang)), true
			row.Previous = fmt.Sprintf(pg.T["cr_previous"], stamp(c.PreviousValidUntil, pg.Lang), lastUsed(c.PreviousLastUsedAt, pg))
		default:
			row.State, row.StateClass, row.Active = pg.T["cr_active"], "ok", true
			if !c.RotatedAt.IsZero() {
				row.State = fmt.Sprintf(pg.T["cr_rotated"], stamp(c.RotatedAt, pg.Lang))
			}
		}
		d.Partners = append(d.Partners, row)
	}
	for _, c := range clients {
		row := clientRow{ID: c.ID, Name: c.Name, Scopes: scopeLine(c.Scopes), Mode: string(c.Mode),
			Registration: c.Registration, Created: stamp(c.CreatedAt, pg.Lang), LastUsed: lastUsed(c.LastUsedAt, pg)}
		if c.State() == credentials.StateRevoked {
			row.State, row.StateClass = fmt.Sprintf(pg.T["cr_revoked"], stamp(c.RevokedAt, pg.Lang)), "cancelled"
		} else {
			row.State, row.StateClass, row.Active = pg.T["cr_active"], "ok", true
		}
		d.Clients = append(d.Clients, row)
	}
	pg.Data = d
	p.site.Layout.Render(w, r, http.StatusOK, "partners", pg)
}

func lastUsed(t time.Time, pg web.Page) string {
	if t.IsZero() {
		return pg.T["never"]
	}
	return stamp(t, pg.Lang)
}

func scopeLine(scopes []bokat.Scope) string {
	parts := make([]string, len(scopes))
	for i, s := range scopes {
		parts[i] = string(s)
	}
	return strings.Join(parts, " ")
}

// rotatedPage is the data of a rotation's answer: the new token, shown
// this once.
type rotatedPage struct {
	ID, Name, Token, PreviousUntil string
	EndedEarlier                   bool
	BackURL                        string
}

func (p *Pages) rotatePartner(w http.ResponseWriter, r *http.Request, op Operator, pg web.Page) {
	id := r.PathValue("partner_id")
	overlap, ok := overlapOf(r.PostForm.Get("overlap"))
	seenMS, err := strconv.ParseInt(r.PostForm.Get("seen"), 10, 64)
	if !ok || err != nil || seenMS < 0 {
		p.site.Layout.RenderError(w, r, http.StatusBadRequest, "err_rotate", "invalid_form")
		return
	}
	var seen time.Time
	if seenMS > 0 {
		seen = time.UnixMilli(seenMS)
	}
	rot, err := p.creds.RotatePartnerSeen(r.Context(), op.ID, id, overlap, seen)
	if errors.Is(err, bokat.ErrConflict) {
		p.site.Layout.RenderError(w, r, http.StatusConflict, "err_rotated_since", "rotated_since")
		return
	}
	if p.credentialRefused(w, r, "rotate partner", err) {
		return
	}
	pg.Title = fmt.Sprintf(pg.T["rotated_title"], rot.Partner.Name)
	pg.MarkCurrent(Prefix + "/partners")
	d := rotatedPage{ID: id, Name: rot.Partner.Name, Token: rot.Token, EndedEarlier: rot.EndedEarlier,
		PreviousUntil: stamp(rot.PreviousValidUntil, pg.Lang), BackURL: Prefix + "/partners"}
	pg.Data = d
	pg.OtherLangURL = "" // the answer of a POST: switching language would ask for it again
	// The page is the token's only showing: not stored by the browser or
	// anything between (Render sets no-store on every page; said again
	// here, as this one must never lose it).
	w.Header().Set("Cache-Control", "no-store")
	p.site.Layout.Render(w, r, http.StatusOK, "rotated", pg)
}

// confirmPage is the data of a revocation's confirmation.
type confirmPage struct {
	Kind, ID, Name, Action, BackURL, Intro string
}

// revocation is one kind of credential C the partners page revokes, after
// a confirmation page: its form's address (Prefix+path+id+"/revoke", the
// id in the wildcard param), the text keys of its confirmation and its
// notice, what reading its list and revoking it are called in the log, and
// its lifecycle calls, with of reading a credential's id, name and
// revocation time.
type revocation[C any] struct {
	kind, param, path    string
	intro, notice        string
	listWhat, revokeWhat string
	list                 func(ctx context.Context) ([]C, error)
	revoke               func(ctx context.Context, actor, id string) (C, error)
	of                   func(C) (id, name string, revokedAt time.Time)
}

func (p *Pages) revokePartner() pageFunc {
	return revoke(p, revocation[credentials.Partner]{kind: "partner", param: "partner_id", path: "/partners/",
		intro: "revoke_partner_intro", notice: "partner_revoked_notice", listWhat: "read partners", revokeWhat: "revoke partner",
		list: p.creds.Partners, revoke: p.creds.RevokePartner,
		of: func(c credentials.Partner) (string, string, time.Time) { return c.ID, c.Name, c.RevokedAt }})
}

func (p *Pages) revokeClient() pageFunc {
	return revoke(p, revocation[credentials.OAuthClient]{kind: "client", param: "client_id", path: "/oauth-clients/",
		intro: "revoke_client_intro", notice: "client_revoked_notice", listWhat: "read OAuth clients", revokeWhat: "revoke OAuth client",
		list: p.creds.OAuthClients, revoke: p.creds.RevokeOAuthClient,
		of: func(c credentials.OAuthClient) (string, string, time.Time) { return c.ID, c.Name, c.RevokedAt }})
}

// revoke serves a revocation's form: without confirm=yes the confirmation
// page of an unrevoked credential (404 for any other id), with it the
// revocation, which leads back to the partners page with its notice.
func revoke[C any](p *Pages, k revocation[C]) pageFunc {
	return func(w http.ResponseWriter, r *http.Request, op Operator, pg web.Page) {
		id := r.PathValue(k.param)
		if r.PostForm.Get("confirm") != "yes" {
			list, err := k.list(r.Context())
			if err != nil {
				p.site.Fail(w, r, k.listWhat, err)
				return
			}
			for _, c := range list {
				if cid, name, revokedAt := k.of(c); cid == id && revokedAt.IsZero() {
					p.renderConfirm(w, r, pg, confirmPage{Kind: k.kind, ID: id, Name: name,
						Action: Prefix + k.path + id + "/revoke", Intro: pg.T[k.intro]})
					return
				}
			}
			p.site.Layout.RenderError(w, r, http.StatusNotFound, "err_not_found", "not_found")
			return
		}
		_, err := k.revoke(r.Context(), op.ID, id)
		if p.credentialRefused(w, r, k.revokeWhat, err) {
			return
		}
		web.RedirectNotice(w, r, pg.Lang, Prefix+"/partners", k.notice)
	}
}

func (p *Pages) renderConfirm(w http.ResponseWriter, r *http.Request, pg web.Page, d confirmPage) {
	pg.Title = fmt.Sprintf(pg.T["revoke_title"], d.Name)
	pg.MarkCurrent(Prefix + "/partners")
	if d.BackURL == "" {
		d.BackURL = Prefix + "/partners"
	} else {
		pg.MarkCurrent(Prefix + "/providers")
	}
	pg.OtherLangURL = "" // the answer of a POST: switching language would ask for it again
	pg.Data = d
	p.site.Layout.Render(w, r, http.StatusOK, "revoke", pg)
}

func (p *Pages) purgeClients(w http.ResponseWriter, r *http.Request, op Operator, pg web.Page) {
	period, ok := purgePeriodOf(r.PostForm.Get("unused_for"))
	if !ok {
		p.site.Layout.RenderError(w, r, http.StatusBadRequest, "err_purge", "invalid_form")
		return
	}
	ids, err := p.creds.PurgeDynamicClients(r.Context(), op.ID, period)
	if p.credentialRefused(w, r, "purge OAuth clients", err) {
		return
	}
	web.RedirectNotice(w, r, pg.Lang, Prefix+"/partners?n="+strconv.Itoa(len(ids)), "purged_notice")
}

// credentialRefused renders a lifecycle refusal (unknown, already revoked),
// or reports whether there was none.
func (p *Pages) credentialRefused(w http.ResponseWriter, r *http.Request, what string, err error) bool {
	var be *bokat.Error
	switch {
	case err == nil:
		return false
	case errors.As(err, &be) && be.Code == bokat.CodeNotFound:
		p.site.Layout.RenderError(w, r, http.StatusNotFound, "err_not_found", "not_found")
	case errors.As(err, &be) && be.Code == bokat.CodeValidationFailed:
		p.site.Layout.RenderError(w, r, http.StatusConflict, "err_credential_state", "credential_state")
	default:
		return p.site.Refused(w, r, what, err)
	}
	return true
}

// tokenRow is a provider API token as the provider's page shows it.
type tokenRow struct {
	ID, Name, Scopes, Created, LastUsed, State, StateClass, RevokeAction string
	Active                                                               bool
}

func tokenRowOf(t credentials.ProviderToken, providerID string, pg web.Page) tokenRow {
	row := tokenRow{ID: t.ID, Name: t.Name, Scopes: scopeLine(t.Scopes), Created: stamp(t.CreatedAt, pg.Lang),
		LastUsed: lastUsed(t.LastUsedAt, pg), RevokeAction: Prefix + "/providers/" + providerID + "/tokens/" + t.ID + "/revoke"}
	if row.Name == "" {
		row.Name = t.ID
	}
	if t.RevokedAt.IsZero() {
		row.State, row.StateClass, row.Active = pg.T["cr_active"], "ok", true
	} else {
		row.State, row.StateClass = fmt.Sprintf(pg.T["cr_revoked"], stamp(t.RevokedAt, pg.Lang)), "cancelled"
	}
	return row
}

func (p *Pages) revokeProviderToken(w http.ResponseWriter, r *http.Request, op Operator, pg web.Page) {
	providerID, id := r.PathValue("provider_id"), r.PathValue("token_id")
	tokens, err := p.creds.ProviderTokens(r.Context(), providerID)
	if err != nil {
		p.site.Fail(w, r, "read provider tokens", err)
		return
	}
	var tok *credentials.ProviderToken
	for i := range tokens {
		if tokens[i].ID == id && tokens[i].RevokedAt.IsZero() {
			tok = &tokens[i]
		}
	}
	if tok == nil { // unknown, revoked, or another provider's
		p.site.Layout.RenderError(w, r, http.StatusNotFound, "err_not_found", "not_found")
		return
	}
	if r.PostForm.Get("confirm") != "yes" {
		name := tok.Name
		if name == "" {
			name = tok.ID
		}
		p.renderConfirm(w, r, pg, confirmPage{Kind: "provider_token", ID: id, Name: name,
			Action: Prefix + "/providers/" + providerID + "/tokens/" + id + "/revoke", Intro: pg.T["revoke_token_intro"],
			BackURL: Prefix + "/providers/" + providerID})
		return
	}
	_, err = p.creds.RevokeProviderToken(r.Context(), op.ID, id)
	if p.credentialRefused(w, r, "revoke provider token", err) {
		return
	}
	web.RedirectNotice(w, r, pg.Lang, Prefix+"/providers/"+providerID, "token_revoked_notice")
}
