package provider

// pageTemplates are the provider pages' contents; the layout (package web)
// wraps each.
var pageTemplates = map[string]string{
	"bookings": `{{define "content"}}{{if .Data.Rows}}<table class="bookings stack">
<thead><tr><th scope="col">{{index .T "col_when"}}</th><th scope="col">{{index .T "col_service"}}</th><th scope="col">{{index .T "col_postcode"}}</th><th scope="col">{{index .T "col_status"}}</th></tr></thead>
<tbody>{{range .Data.Rows}}<tr>
<td data-label="{{index $.T "col_when"}}"><a href="{{$.Link .URL}}">{{.When}}</a></td>
<td data-label="{{index $.T "col_service"}}">{{.Service}}</td>
<td data-label="{{index $.T "col_postcode"}}">{{.Postcode}}</td>
<td data-label="{{index $.T "col_status"}}"><span class="status {{.StatusClass}}">{{.Status}}</span></td>
</tr>{{end}}</tbody></table>{{with .Data.MoreURL}}<p class="more"><a href="{{$.Link .}}">{{index $.T $.Data.MoreKey}}</a></p>{{end}}{{else}}<p>{{index .T "no_bookings"}}</p>{{end}}{{end}}`,

	"booking": `{{define "content"}}{{with .Data}}<section class="card" aria-labelledby="facts">
<h2 id="facts">{{index $.T "facts_heading"}}</h2>
<dl class="facts">
<dt>{{index $.T "f_when"}}</dt><dd>{{.Row.When}}</dd>
<dt>{{index $.T "f_service"}}</dt><dd>{{.Row.Service}}</dd>
<dt>{{index $.T "f_price"}}</dt><dd>{{.Price}}</dd>
<dt>{{index $.T "f_postcode"}}</dt><dd>{{.Row.Postcode}}</dd>
<dt>{{index $.T "f_status"}}</dt><dd><span class="status {{.Row.StatusClass}}">{{.Row.Status}}</span></dd>
{{if .Cancelled}}<dt>{{index $.T "f_cancelled"}}</dt><dd>{{.Cancelled}}</dd>{{end}}
{{if .Acked}}<dt>{{index $.T "f_acked"}}</dt><dd>{{.Acked}}</dd>{{end}}
<dt>{{index $.T "f_booking"}}</dt><dd>{{.Row.ID}}</dd>
</dl></section>
<section class="card" aria-labelledby="customer">
<h2 id="customer">{{index $.T "customer_heading"}}</h2>
{{if not .ContactShown}}<p>{{index $.T "contact_hidden"}}</p>
{{else if .Erased}}<p>{{index $.T "contact_erased"}}</p>
{{else}}<dl class="facts">
<dt>{{index $.T "f_name"}}</dt><dd>{{if .Contact.Name}}{{.Contact.Name}}{{else}}{{.Contact.FirstName}} {{.Contact.LastName}}{{end}}</dd>
{{if .Contact.Phone}}<dt>{{index $.T "f_phone"}}</dt><dd><a href="tel:{{.Contact.Phone}}">{{.Contact.Phone}}</a></dd>{{end}}
{{if .Contact.Email}}<dt>{{index $.T "f_email"}}</dt><dd><a href="mailto:{{.Contact.Email}}">{{.Contact.Email}}</a></dd>{{end}}
{{if .Contact.ServiceAddress}}<dt>{{index $.T "f_address"}}</dt><dd>{{.Contact.ServiceAddress}}</dd>{{end}}
{{if .Contact.DestinationAddress}}<dt>{{index $.T "f_destination"}}</dt><dd>{{.Contact.DestinationAddress}}</dd>{{end}}
</dl>
<p class="muted">{{index $.T "contact_note"}}</p>{{end}}
</section>
{{if .CanAck}}<section class="card" aria-labelledby="ack">
<h2 id="ack">{{index $.T "ack_heading"}}</h2>
<p>{{index $.T "ack_intro"}}</p>
<form method="post" action="{{.AckAction}}">{{template "csrf" $}}<button type="submit" id="acknowledge">{{index $.T "ack_button"}}</button></form>
</section>{{end}}
{{if .FlagAction}}<section class="card" aria-labelledby="flag">
<h2 id="flag">{{index $.T "flag_heading"}}</h2>
<p id="flag-intro">{{index $.T "flag_intro"}}</p>
<form method="post" action="{{.FlagAction}}">{{template "csrf" $}}
<label for="note">{{index $.T "note_label"}}</label>
<textarea id="note" name="note" rows="4" maxlength="1000" required aria-describedby="flag-intro">{{.Note}}</textarea>
<button type="submit" class="secondary" id="flag-submit">{{index $.T "flag_button"}}</button>
</form></section>{{end}}
{{if .CancelAction}}<section class="card" aria-labelledby="cancel">
<h2 id="cancel">{{index $.T "cancel_heading"}}</h2>
<p id="cancel-intro">{{index $.T "cancel_intro"}}</p>
<form method="post" action="{{.CancelAction}}">{{template "csrf" $}}
<label for="reason">{{index $.T "cancel_reason_label"}}</label>
<select id="reason" name="reason" required aria-describedby="cancel-intro">{{range .CancelReasons}}<option value="{{.}}">{{index $.T (printf "reason_%s" .)}}</option>{{end}}</select>
<label for="cancel-notes">{{index $.T "cancel_notes_label"}}</label>
<textarea id="cancel-notes" name="cancel_notes" rows="3" maxlength="500"></textarea>
<p class="check"><input type="checkbox" id="cancel-confirm" name="confirm" value="yes" required> <label for="cancel-confirm">{{index $.T "cancel_confirm"}}</label></p>
<button type="submit" class="danger" id="cancel-submit">{{index $.T "cancel_button"}}</button>
</form></section>{{end}}
<p><a href="{{$.Link "/provider/bookings"}}">{{index $.T "back_to_list"}}</a></p>{{end}}{{end}}`,

	"team": `{{define "content"}}{{with .Data}}<section class="card" aria-labelledby="members">
<h2 id="members">{{index $.T "team_members"}}</h2>
<table class="stack"><thead><tr><th scope="col">{{index $.T "col_email"}}</th><th scope="col">{{index $.T "col_role"}}</th>{{if .Owner}}<th scope="col">{{index $.T "col_action"}}</th>{{end}}</tr></thead>
<tbody>{{range .Users}}<tr><td data-label="{{index $.T "col_email"}}">{{.Email}}{{if .You}} {{index $.T "you"}}{{end}}</td><td data-label="{{index $.T "col_role"}}">{{.Role}}</td>{{if $.Data.Owner}}<td>{{if .RemoveURL}}<form method="post" action="{{.RemoveURL}}">{{template "csrf" $}}<button type="submit" class="secondary">{{index $.T "remove"}}<span class="vh"> {{.Email}}</span></button></form>{{end}}</td>{{end}}</tr>
{{end}}</tbody></table></section>
{{if .Invitations}}<section class="card" aria-labelledby="invitations">
<h2 id="invitations">{{index $.T "team_invitations"}}</h2>
<ul>{{range .Invitations}}<li>{{.Email}} – {{.Role}}, {{.Expires}}{{if .WithdrawURL}}
<form method="post" action="{{.WithdrawURL}}">{{template "csrf" $}}<button type="submit" class="secondary">{{index $.T "withdraw"}}<span class="vh"> {{.Email}}</span></button></form>{{end}}</li>
{{end}}</ul></section>{{end}}
{{if .Owner}}<section class="card" aria-labelledby="invite">
<h2 id="invite">{{index $.T "invite_heading"}}</h2>
<p>{{index $.T "invite_intro"}}</p>
<form method="post" action="{{.InviteURL}}">{{template "csrf" $}}
<label for="email">{{index $.T "email_label"}}</label>
<input type="email" id="email" name="email" autocomplete="off" required maxlength="254" value="{{.Email}}">
<button type="submit">{{index $.T "invite_button"}}</button>
</form></section>{{else}}<p class="muted">{{index $.T "owner_only"}}</p>{{end}}{{end}}{{end}}`,
}
