package operator

// pageTemplates are the console's contents; the layout (package web) wraps
// each.
var pageTemplates = map[string]string{
	"bookings": `{{define "content"}}{{with .Data}}<section class="card" aria-labelledby="search">
<h2 id="search">{{index $.T "search_heading"}}</h2>
<p id="search-intro" class="muted">{{index $.T "search_intro"}}</p>
<form method="get" action="{{$.Link "/operator/bookings"}}" aria-describedby="search-intro">
{{if eq $.Lang "en"}}<input type="hidden" name="lang" value="en">{{end}}
<div class="row">
<div><label for="q-id">{{index $.T "q_id"}}</label><input type="text" id="q-id" name="id" value="{{.Q.ID}}" maxlength="100"></div>
<div><label for="q-provider">{{index $.T "q_provider"}}</label><input type="text" id="q-provider" name="provider" value="{{.Q.ProviderID}}" maxlength="100"></div>
</div>
<div class="row">
<div><label for="q-from">{{index $.T "q_from"}}</label><input type="date" id="q-from" name="from" value="{{.Q.From}}"></div>
<div><label for="q-to">{{index $.T "q_to"}}</label><input type="date" id="q-to" name="to" value="{{.Q.To}}"></div>
</div>
<div class="row">
<div><label for="q-status">{{index $.T "q_status"}}</label><select id="q-status" name="status"><option value="">{{index $.T "q_any"}}</option>{{range .Statuses}}<option value="{{.}}"{{if eq . $.Data.Q.Status}} selected{{end}}>{{index $.T .}}</option>{{end}}</select></div>
<div><label for="q-email">{{index $.T "q_email"}}</label><input type="email" id="q-email" name="email" value="{{.Q.Email}}" maxlength="254" autocomplete="off"></div>
</div>
<button type="submit" id="search-submit">{{index $.T "search_button"}}</button>
</form></section>
{{if .Searched}}{{if .Rows}}<table class="stack" aria-describedby="search">
<thead><tr><th scope="col">{{index $.T "col_when"}}</th><th scope="col">{{index $.T "col_provider"}}</th><th scope="col">{{index $.T "col_service"}}</th><th scope="col">{{index $.T "col_status"}}</th></tr></thead>
<tbody>{{range .Rows}}<tr>
<td data-label="{{index $.T "col_when"}}"><a href="{{$.Link .URL}}">{{.When}}</a> <span class="muted">{{.ID}}</span></td>
<td data-label="{{index $.T "col_provider"}}">{{.Provider}}</td>
<td data-label="{{index $.T "col_service"}}">{{.Service}}</td>
<td data-label="{{index $.T "col_status"}}"><span class="status {{.StatusClass}}">{{.Status}}</span></td>
</tr>{{end}}</tbody></table>{{if .Full}}<p class="muted">{{index $.T "too_many"}}</p>{{end}}{{else}}<p>{{index $.T "no_match"}}</p>{{end}}{{end}}{{end}}{{end}}`,

	"booking": `{{define "content"}}{{with .Data}}<section class="card" aria-labelledby="facts">
<h2 id="facts">{{index $.T "facts_heading"}}</h2>
<dl class="facts">
<dt>{{index $.T "f_when"}}</dt><dd>{{.Row.When}}</dd>
<dt>{{index $.T "f_service"}}</dt><dd>{{.Row.Service}}</dd>
<dt>{{index $.T "f_provider"}}</dt><dd>{{.Row.Provider}}</dd>
<dt>{{index $.T "f_price"}}</dt><dd>{{.Price}}</dd>
<dt>{{index $.T "f_postcode"}}</dt><dd>{{.Row.Postcode}}</dd>
<dt>{{index $.T "f_status"}}</dt><dd><span class="status {{.Row.StatusClass}}">{{.Row.Status}}</span></dd>
{{if .Cancelled}}<dt>{{index $.T "f_cancelled"}}</dt><dd>{{.Cancelled}}{{if .CancelReason}} ({{.CancelReason}}){{end}}</dd>{{end}}
{{if .Rescheduled}}<dt>{{index $.T "f_rescheduled"}}</dt><dd>{{.Rescheduled}}</dd>{{end}}
<dt>{{index $.T "f_acked"}}</dt><dd>{{if .Acked}}{{.Acked}}{{else}}{{index $.T "not_acked"}}{{end}}</dd>
<dt>{{index $.T "f_customer_msg"}}</dt><dd>{{.CustomerMsg}}</dd>
<dt>{{index $.T "f_provider_msg"}}</dt><dd>{{.ProviderMsg}}</dd>
<dt>{{index $.T "f_owner"}}</dt><dd>{{.Owner}}</dd>
<dt>{{index $.T "f_booking"}}</dt><dd>{{.Row.ID}}</dd>
</dl></section>
{{range .Sections}}<section class="card" aria-labelledby="{{.ID}}">
<h2 id="{{.ID}}">{{index $.T .Heading}}</h2>
{{if .Lines}}<table class="stack"><thead><tr><th scope="col">{{index $.T "col_at"}}</th><th scope="col">{{index $.T "col_what"}}</th><th scope="col">{{index $.T "col_detail"}}</th></tr></thead>
<tbody>{{range .Lines}}<tr><td data-label="{{index $.T "col_at"}}">{{.At}}</td><td data-label="{{index $.T "col_what"}}">{{.What}}</td><td data-label="{{index $.T "col_detail"}}">{{if .Class}}<span class="status {{.Class}}">{{.Detail}}</span>{{else}}{{.Detail}}{{end}}</td></tr>{{end}}</tbody></table>
{{else}}<p class="muted">{{index $.T "none"}}</p>{{end}}</section>
{{end}}{{if .MoveURL}}<section class="card" aria-labelledby="move">
<h2 id="move">{{index $.T "move_heading"}}</h2>
<p><a href="{{$.Link .MoveURL}}" id="move-link">{{index $.T "move_link"}}</a></p>
</section>{{end}}
{{if .CancelAction}}<section class="card" aria-labelledby="cancel">
<h2 id="cancel">{{index $.T "cancel_heading"}}</h2>
<p id="cancel-intro">{{index $.T "cancel_intro"}}</p>
<form method="post" action="{{.CancelAction}}">{{template "csrf" $}}
<fieldset><legend>{{index $.T "for_label"}}</legend>
<p class="check"><input type="radio" id="for-customer" name="for" value="customer" required{{if eq .For "customer"}} checked{{end}}> <label for="for-customer">{{index $.T "for_customer"}}</label></p>
<p class="check"><input type="radio" id="for-provider" name="for" value="provider"{{if eq .For "provider"}} checked{{end}}> <label for="for-provider">{{index $.T "for_provider"}}</label></p>
</fieldset>
<label for="reason">{{index $.T "reason_label"}}</label>
<select id="reason" name="reason" aria-describedby="cancel-intro">{{range .Reasons}}<option value="{{.}}"{{if eq . $.Data.Reason}} selected{{end}}>{{index $.T (printf "reason_%s" .)}}</option>{{end}}</select>
<label for="cancel-note">{{index $.T "note_label"}}</label>
<textarea id="cancel-note" name="note" rows="3" maxlength="500" required>{{.Note}}</textarea>
<p class="check"><input type="checkbox" id="cancel-confirm" name="confirm" value="yes" required> <label for="cancel-confirm">{{index $.T "cancel_confirm"}}</label></p>
<button type="submit" class="danger" id="cancel-submit">{{index $.T "cancel_button"}}</button>
</form></section>{{end}}
<p><a href="{{$.Link "/operator/bookings"}}">{{index $.T "nav_bookings"}}</a></p>{{end}}{{end}}`,

	"move": `{{define "content"}}{{with .Data}}<p>{{.Row.When}} – {{.Row.Provider}} – {{.Row.Service}}</p>
<section class="card" aria-labelledby="window">
<h2 id="window">{{index $.T "times_legend"}}</h2>
<p id="move-intro">{{index $.T "move_intro"}}</p>
<form method="get" action="{{.Action}}">
{{if eq $.Lang "en"}}<input type="hidden" name="lang" value="en">{{end}}
<label for="when">{{index $.T "when_label"}}</label>
<input type="text" id="when" name="when" value="{{.When}}" maxlength="200">
<button type="submit" class="secondary" id="find-times">{{index $.T "find_times"}}</button>
</form>
{{if .Options}}<form method="post" action="{{.Action}}{{if .When}}?when={{.When}}{{end}}">{{template "csrf" $}}
<fieldset><legend>{{index $.T "times_legend"}}</legend>
{{range $i, $o := .Options}}<p class="check"><input type="radio" id="opt-{{$i}}" name="option" value="{{$o.ID}}" required> <label for="opt-{{$i}}">{{$o.Label}} – {{$o.Price}}</label></p>
{{end}}</fieldset>
<fieldset><legend>{{index $.T "for_label"}}</legend>
<p class="check"><input type="radio" id="for-customer" name="for" value="customer" required{{if eq .For "customer"}} checked{{end}}> <label for="for-customer">{{index $.T "for_customer"}}</label></p>
<p class="check"><input type="radio" id="for-provider" name="for" value="provider"{{if eq .For "provider"}} checked{{end}}> <label for="for-provider">{{index $.T "for_provider"}}</label></p>
</fieldset>
<label for="move-note">{{index $.T "note_label"}}</label>
<textarea id="move-note" name="note" rows="3" maxlength="500" required>{{.Note}}</textarea>
<p class="check"><input type="checkbox" id="agreed" name="agreed" value="yes" required> <label for="agreed">{{index $.T "agreed_label"}}</label></p>
<button type="submit" id="move-submit">{{index $.T "move_button"}}</button>
</form>{{else if .NoOptions}}<p>{{.NoOptions}}</p>{{end}}
</section>
<p><a href="{{$.Link .BackURL}}">{{index $.T "back_to_booking"}}</a></p>{{end}}{{end}}`,

	"audit": `{{define "content"}}<p>{{index .T "audit_intro"}}</p>
{{if .Data}}<table class="stack"><thead><tr><th scope="col">{{index .T "col_at"}}</th><th scope="col">{{index .T "col_who"}}</th><th scope="col">{{index .T "col_what"}}</th><th scope="col">{{index .T "col_object"}}</th><th scope="col">{{index .T "col_detail"}}</th></tr></thead>
<tbody>{{range .Data}}<tr><td data-label="{{index $.T "col_at"}}">{{.At}}</td><td data-label="{{index $.T "col_who"}}">{{.Who}}</td><td data-label="{{index $.T "col_what"}}">{{.Action}}</td>
<td data-label="{{index $.T "col_object"}}">{{if .URL}}<a href="{{$.Link .URL}}">{{.Object}}</a>{{else}}{{.Object}}{{end}}</td><td data-label="{{index $.T "col_detail"}}">{{.Details}}</td></tr>{{end}}</tbody></table>
{{else}}<p class="muted">{{index .T "none"}}</p>{{end}}{{end}}`,

	"providers": `{{define "content"}}{{with .Data}}<form method="get" action="{{$.Link "/operator/providers"}}" class="search">
{{if eq $.Lang "en"}}<input type="hidden" name="lang" value="en">{{end}}{{if .Attention}}<input type="hidden" name="attention" value="1">{{end}}
<div class="row"><div><label for="q">{{index $.T "p_search"}}</label><input type="search" id="q" name="q" value="{{.Q}}" maxlength="100"></div></div>
<button type="submit" id="search-submit">{{index $.T "p_search_button"}}</button></form>
<p>{{if .Attention}}<a href="{{$.Link .AllURL}}">{{index $.T "p_show_all"}}</a>{{else}}<a href="{{$.Link .AttnURL}}" id="attention">{{index $.T "p_show_attention"}}</a>{{end}}</p>
{{if gt .Matched (len .Rows)}}<p class="muted" id="capped">{{printf (index $.T "p_capped") (len .Rows) .Matched}}</p>{{end}}
{{if .Rows}}<table class="stack"><thead><tr><th scope="col">{{index $.T "col_provider"}}</th><th scope="col">{{index $.T "col_status"}}</th><th scope="col">{{index $.T "col_people"}}</th><th scope="col">{{index $.T "col_failures"}}</th><th scope="col">{{index $.T "col_calendars"}}</th></tr></thead>
<tbody>{{range .Rows}}<tr><td data-label="{{index $.T "col_provider"}}"><a href="{{$.Link .URL}}">{{.Name}}</a> <span class="muted">{{.ID}}</span></td>
<td data-label="{{index $.T "col_status"}}"><span class="status {{.StatusClass}}">{{.Status}}</span></td>
<td data-label="{{index $.T "col_people"}}">{{printf (index $.T "people_line") .Users .LastSignIn}}</td>
<td data-label="{{index $.T "col_failures"}}">{{if .Failures}}<span class="status cancelled">{{.Failures}}</span>{{else}}0{{end}}</td>
<td data-label="{{index $.T "col_calendars"}}">{{if .FeedsClass}}<span class="status {{.FeedsClass}}">{{.FeedsLine}}</span>{{else}}{{.FeedsLine}}{{end}}</td></tr>
{{end}}</tbody></table>{{else}}<p>{{index $.T "no_providers"}}</p>{{end}}{{end}}{{end}}`,

	"provider": `{{define "content"}}{{with .Data}}<section class="card" aria-labelledby="state">
<h2 id="state">{{index $.T "p_state_heading"}}</h2>
<dl class="facts">
<dt>{{index $.T "f_provider_id"}}</dt><dd>{{.Row.ID}}</dd>
<dt>{{index $.T "f_status"}}</dt><dd><span class="status {{.Row.StatusClass}}">{{.Row.Status}}</span></dd>
<dt>{{index $.T "f_people"}}</dt><dd>{{.Row.Users}}</dd>
<dt>{{index $.T "f_invitations"}}</dt><dd>{{.Row.Invitations}}</dd>
<dt>{{index $.T "f_last_sign_in"}}</dt><dd>{{.Row.LastSignIn}}</dd>
<dt>{{index $.T "f_failures"}}</dt><dd>{{.Row.Failures}}{{if .Row.LastFailure}} – {{.Row.LastFailure}}{{end}}</dd>
</dl></section>
<section class="card" aria-labelledby="feeds">
<h2 id="feeds">{{index $.T "feeds_heading"}}</h2>
{{if .Row.Feeds}}<table class="stack"><thead><tr><th scope="col">{{index $.T "col_calendar"}}</th><th scope="col">{{index $.T "col_synced"}}</th><th scope="col">{{index $.T "col_error"}}</th></tr></thead>
<tbody>{{range .Row.Feeds}}<tr><td data-label="{{index $.T "col_calendar"}}">{{.Label}}{{if .Stale}} <span class="status cancelled">{{index $.T "stale"}}</span>{{end}}</td>
<td data-label="{{index $.T "col_synced"}}">{{.Synced}}</td>
<td data-label="{{index $.T "col_error"}}">{{if .Error}}{{.Error}}{{if .Failing}} ({{printf (index $.T "failing_since") .Failing}}){{end}}{{else}}–{{end}}</td></tr>{{end}}</tbody></table>
{{else}}<p class="muted">{{index $.T "feeds_none"}}</p>{{end}}</section>
<section class="card" aria-labelledby="pause">
<h2 id="pause">{{index $.T "pause_heading"}}</h2>
<p id="pause-intro">{{index $.T "pause_intro"}}</p>
<form method="post" action="{{.PauseAction}}">{{template "csrf" $}}
<label for="until">{{index $.T "until_label"}}</label>
<input type="date" id="until" name="until" value="{{.Until}}" aria-describedby="pause-intro">
<label for="pause-note">{{index $.T "note_label"}}</label>
<textarea id="pause-note" name="note" rows="2" maxlength="500" required>{{.Note}}</textarea>
<button type="submit" class="secondary" id="pause-submit" name="resume" value="no">{{index $.T "pause_button"}}</button>
{{if .Paused}}<button type="submit" class="secondary" id="resume-submit" name="resume" value="yes">{{index $.T "resume_label"}}</button>{{end}}
</form></section>
<section class="card" aria-labelledby="tokens">
<h2 id="tokens">{{index $.T "tokens_heading"}}</h2>
<p id="tokens-intro" class="muted">{{index $.T "tokens_intro"}}</p>
{{range .Tokens}}<section class="cred" aria-labelledby="t-{{.ID}}">
<h3 id="t-{{.ID}}">{{.Name}}</h3>
<dl class="facts">
<dt>{{index $.T "cr_id"}}</dt><dd>{{.ID}}</dd>
<dt>{{index $.T "cr_scopes"}}</dt><dd>{{.Scopes}}</dd>
<dt>{{index $.T "cr_created"}}</dt><dd>{{.Created}}</dd>
<dt>{{index $.T "cr_last_used"}}</dt><dd>{{.LastUsed}}</dd>
<dt>{{index $.T "cr_state"}}</dt><dd><span class="status {{.StateClass}}">{{.State}}</span></dd>
</dl>
{{if .Active}}<form method="post" action="{{$.Link .RevokeAction}}">{{template "csrf" $}}
<button type="submit" class="danger" id="revoke-{{.ID}}">{{index $.T "cr_revoke_button"}}<span class="vh"> {{.Name}}</span></button>
</form>{{end}}
</section>
{{else}}<p class="muted">{{index $.T "none"}}</p>{{end}}</section>
<section class="card" aria-labelledby="invite">
<h2 id="invite">{{index $.T "p_invite_heading"}}</h2>
<p id="invite-intro">{{index $.T "p_invite_intro"}}</p>
<form method="post" action="{{.InviteURL}}">{{template "csrf" $}}
<label for="invite-email">{{index $.T "email_label"}}</label>
<input type="email" id="invite-email" name="email" value="{{.Email}}" maxlength="254" autocomplete="off" required aria-describedby="invite-intro">
<label for="role">{{index $.T "role_label"}}</label>
<select id="role" name="role">{{range .Roles}}<option value="{{.}}"{{if eq . $.Data.Role}} selected{{end}}>{{index $.T (printf "role_%s" .)}}</option>{{end}}</select>
<button type="submit" id="invite-submit">{{index $.T "p_invite_button"}}</button>
</form></section>
<p><a href="{{$.Link "/operator/providers"}}">{{index $.T "nav_providers"}}</a> · <a href="{{$.Link (printf "/operator/bookings?provider=%s" .Row.ID)}}">{{index $.T "p_bookings"}}</a></p>{{end}}{{end}}`,

	"followups": `{{define "content"}}{{with .Data}}<p>{{index $.T "fu_intro"}}</p>
<p>{{if .Uncovered}}<a href="{{$.Link .AllURL}}">{{index $.T "fu_show_all"}}</a>{{else}}<a href="{{$.Link .UncovURL}}" id="uncovered">{{index $.T "fu_show_uncovered"}}</a>{{end}}</p>
{{range .Rows}}<section class="card" aria-labelledby="fu-{{.ID}}">
<h2 id="fu-{{.ID}}">{{.Job}} – {{.Postcode}}</h2>
<dl class="facts">
<dt>{{index $.T "fu_request"}}</dt><dd>{{.ID}}{{if eq .Mode "test"}} ({{index $.T "fu_test"}}){{end}}</dd>
<dt>{{index $.T "fu_created"}}</dt><dd>{{.Created}}</dd>
<dt>{{index $.T "fu_status"}}</dt><dd>{{.Status}}</dd>
<dt>{{index $.T "fu_handed_to"}}</dt><dd>{{if .HandedClass}}<span class="status {{.HandedClass}}">{{.Handed}}</span>{{else}}{{.Handed}}{{end}}</dd>
</dl>
{{if .Notes}}<h3>{{index $.T "fu_done"}}</h3><ul class="notes">{{range .Notes}}<li>{{.At}}: {{.What}} <span class="muted">({{.Detail}})</span></li>{{end}}</ul>{{end}}
<form method="post" action="{{$.Link .NoteAction}}{{if $.Data.Uncovered}}{{if eq $.Lang "en"}}&{{else}}?{{end}}uncovered=1{{end}}">{{template "csrf" $}}
<label for="note-{{.ID}}">{{index $.T "fu_note_label"}}</label>
<textarea id="note-{{.ID}}" name="note" rows="2" maxlength="500" required>{{if eq .ID $.Data.NoteFor}}{{$.Data.Note}}{{end}}</textarea>
<button type="submit" class="secondary">{{index $.T "fu_note_button"}}<span class="vh"> {{.ID}}</span></button>
</form></section>
{{else}}<p>{{index $.T "fu_none"}}</p>{{end}}{{end}}{{end}}`,

	"webhooks": `{{define "content"}}<p>{{index .T "wh_intro"}}</p>
{{if .Data}}<table class="stack"><thead><tr><th scope="col">{{index .T "wh_endpoint"}}</th><th scope="col">{{index .T "wh_state"}}</th><th scope="col">{{index .T "wh_failed"}}</th><th scope="col">{{index .T "wh_retrying"}}</th><th scope="col">{{index .T "wh_last"}}</th></tr></thead>
<tbody>{{range .Data}}<tr><td data-label="{{index $.T "wh_endpoint"}}">{{.Host}} <span class="muted">{{.ID}}, {{.Owner}}{{if eq .Mode "test"}}, {{index $.T "fu_test"}}{{end}}</span></td>
<td data-label="{{index $.T "wh_state"}}"><span class="status {{.DisabledClass}}">{{.Disabled}}</span></td>
<td data-label="{{index $.T "wh_failed"}}">{{.Failed}}</td><td data-label="{{index $.T "wh_retrying"}}">{{.Retrying}}</td>
<td data-label="{{index $.T "wh_last"}}">{{if .Last}}{{.Last}}{{else}}–{{end}}</td></tr>{{end}}</tbody></table>
{{else}}<p>{{index .T "wh_none"}}</p>{{end}}{{end}}`,

	"partners": `{{define "content"}}{{with .Data}}<section class="card" aria-labelledby="partners">
<h2 id="partners">{{index $.T "cr_partners"}}</h2>
<p id="rotate-intro" class="muted">{{index $.T "cr_rotate_intro"}}</p>
{{range .Partners}}<section class="cred" aria-labelledby="p-{{.ID}}">
<h3 id="p-{{.ID}}">{{.Name}}</h3>
<dl class="facts">
<dt>{{index $.T "cr_id"}}</dt><dd>{{.ID}}{{if eq .Mode "test"}} ({{index $.T "fu_test"}}){{end}}</dd>
<dt>{{index $.T "cr_scopes"}}</dt><dd>{{.Scopes}}</dd>
<dt>{{index $.T "cr_created"}}</dt><dd>{{.Created}}</dd>
<dt>{{index $.T "cr_last_used"}}</dt><dd>{{.LastUsed}}</dd>
<dt>{{index $.T "cr_state"}}</dt><dd>{{if .StateClass}}<span class="status {{.StateClass}}">{{.State}}</span>{{else}}{{.State}}{{end}}</dd>
{{if .Previous}}<dt>{{index $.T "cr_previous_heading"}}</dt><dd>{{.Previous}}</dd>{{end}}
</dl>
{{if .Active}}<form method="post" action="{{$.Link (printf "/operator/partners/%s/rotate" .ID)}}" class="inline">{{template "csrf" $}}
<input type="hidden" name="seen" value="{{.Seen}}">
<label for="overlap-{{.ID}}">{{index $.T "cr_overlap"}}</label>
<select id="overlap-{{.ID}}" name="overlap" aria-describedby="rotate-intro">{{range $.Data.Overlaps}}<option value="{{.}}"{{if eq . "24h"}} selected{{end}}>{{index $.T (printf "overlap_%s" .)}}</option>{{end}}</select>
<button type="submit" class="secondary" id="rotate-{{.ID}}">{{index $.T "cr_rotate_button"}}<span class="vh"> {{.Name}}</span></button>
</form>
<form method="post" action="{{$.Link (printf "/operator/partners/%s/revoke" .ID)}}" class="inline">{{template "csrf" $}}
<button type="submit" class="danger" id="revoke-{{.ID}}">{{index $.T "cr_revoke_button"}}<span class="vh"> {{.Name}}</span></button>
</form>{{end}}
</section>
{{else}}<p class="muted">{{index $.T "none"}}</p>{{end}}</section>
<section class="card" aria-labelledby="clients">
<h2 id="clients">{{index $.T "cr_clients"}}</h2>
{{range .Clients}}<section class="cred" aria-labelledby="c-{{.ID}}">
<h3 id="c-{{.ID}}">{{.Name}}</h3>
<dl class="facts">
<dt>{{index $.T "cr_id"}}</dt><dd>{{.ID}}{{if eq .Mode "test"}} ({{index $.T "fu_test"}}){{end}}</dd>
<dt>{{index $.T "cr_registration"}}</dt><dd>{{.Registration}}</dd>
<dt>{{index $.T "cr_scopes"}}</dt><dd>{{.Scopes}}</dd>
<dt>{{index $.T "cr_created"}}</dt><dd>{{.Created}}</dd>
<dt>{{index $.T "cr_last_used"}}</dt><dd>{{.LastUsed}}</dd>
<dt>{{index $.T "cr_state"}}</dt><dd><span class="status {{.StateClass}}">{{.State}}</span></dd>
</dl>
{{if .Active}}<form method="post" action="{{$.Link (printf "/operator/oauth-clients/%s/revoke" .ID)}}">{{template "csrf" $}}
<button type="submit" class="danger" id="revoke-{{.ID}}">{{index $.T "cr_revoke_button"}}<span class="vh"> {{.Name}}</span></button>
</form>{{end}}
</section>
{{else}}<p class="muted">{{index $.T "none"}}</p>{{end}}</section>
<section class="card" aria-labelledby="purge">
<h2 id="purge">{{index $.T "cr_purge_heading"}}</h2>
<p id="purge-intro">{{index $.T "cr_purge_intro"}}</p>
<form method="post" action="{{$.Link "/operator/oauth-clients/purge"}}">{{template "csrf" $}}
<label for="unused-for">{{index $.T "cr_unused_for"}}</label>
<select id="unused-for" name="unused_for" aria-describedby="purge-intro">{{range .Periods}}<option value="{{.}}"{{if eq . "90d"}} selected{{end}}>{{index $.T (printf "period_%s" .)}}</option>{{end}}</select>
<button type="submit" class="secondary" id="purge-submit">{{index $.T "cr_purge_button"}}</button>
</form></section>{{end}}{{end}}`,

	"rotated": `{{define "content"}}{{with .Data}}<section class="card" aria-labelledby="token-heading">
<h2 id="token-heading">{{index $.T "rotated_heading"}}</h2>
<p id="token-intro">{{index $.T "rotated_intro"}}</p>
<label for="token">{{index $.T "rotated_token"}}</label>
<input type="text" id="token" value="{{.Token}}" readonly aria-describedby="token-intro" autocomplete="off" spellcheck="false">
<p>{{if .PreviousUntil}}{{printf (index $.T "rotated_previous_until") .PreviousUntil}}{{else}}{{index $.T "rotated_previous_ended"}}{{end}}</p>
{{if .EndedEarlier}}<p>{{index $.T "rotated_earlier_ended"}}</p>{{end}}
</section>
<p><a href="{{$.Link .BackURL}}" id="back">{{index $.T "back_to_partners"}}</a></p>{{end}}{{end}}`,

	"revoke": `{{define "content"}}{{with .Data}}<section class="card" aria-labelledby="confirm-heading">
<h2 id="confirm-heading">{{index $.T "revoke_heading"}}</h2>
<p id="confirm-intro">{{.Intro}}</p>
<dl class="facts"><dt>{{index $.T "cr_name"}}</dt><dd>{{.Name}}</dd><dt>{{index $.T "cr_id"}}</dt><dd>{{.ID}}</dd></dl>
<form method="post" action="{{$.Link .Action}}">{{template "csrf" $}}
<input type="hidden" name="confirm" value="yes">
<button type="submit" class="danger" id="confirm-revoke" aria-describedby="confirm-intro">{{index $.T "revoke_confirm_button"}}</button>
</form></section>
<p><a href="{{$.Link .BackURL}}" id="keep">{{index $.T "revoke_keep"}}</a></p>{{end}}{{end}}`,
}
