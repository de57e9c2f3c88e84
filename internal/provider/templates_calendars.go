package provider

// calendarTemplates are the calendars page's contents.
var calendarTemplates = map[string]string{
	"calendars": `{{define "content"}}{{with .Data}}<p>{{index $.T "calendars_intro"}}</p>
{{if .Conflicts}}<section class="card" aria-labelledby="conflicts">
<h2 id="conflicts">{{index $.T "conflicts_heading"}}</h2>
<p>{{index $.T "conflicts_intro"}}</p>
<ul>{{range .Conflicts}}<li><a href="{{$.Link .URL}}">{{printf (index $.T "conflict_link") .BookingID .When}}</a>{{if .Calendar}} – {{printf (index $.T "conflict_calendar") .Calendar}}{{end}}</li>
{{end}}</ul></section>{{end}}
<section class="card" aria-labelledby="list">
<h2 id="list">{{index $.T "calendars_list"}}</h2>
{{if .Calendars}}{{range .Calendars}}<div class="feed" id="feed-{{.ID}}">
<h3>{{.Label}}</h3>
{{if .Stale}}<p class="error">{{.Stale}}</p>{{end}}
<dl class="facts">
<dt>{{index $.T "f_rule"}}</dt><dd>{{.Rule}}<br><span class="muted">{{.RuleHelp}}</span></dd>
<dt>{{index $.T "f_synced"}}</dt><dd>{{.Synced}}</dd>
<dt>{{index $.T "f_busy"}}</dt><dd>{{.Busy}}</dd>
{{if .Error}}<dt>{{index $.T "f_error"}}</dt><dd>{{.Error}}</dd>{{end}}
</dl>
<form method="post" action="{{.RuleAction}}">{{template "csrf" $}}
<label for="rule-{{.ID}}">{{index $.T "rule_label"}}<span class="vh"> {{.Label}}</span></label>
<select id="rule-{{.ID}}" name="rule">{{range .Rules}}<option value="{{.Value}}"{{if .Selected}} selected{{end}}>{{.Label}}</option>{{end}}</select>
<button type="submit" class="secondary" id="rule-submit-{{.ID}}">{{index $.T "rule_button"}}<span class="vh"> {{.Label}}</span></button>
</form>
<form method="post" action="{{.RemoveAction}}">{{template "csrf" $}}<button type="submit" class="danger" id="remove-{{.ID}}">{{index $.T "calendar_remove"}}<span class="vh"> {{.Label}}</span></button></form>
</div>
{{end}}{{else}}<p>{{index $.T "no_calendars"}}</p>{{end}}</section>
<section class="card" aria-labelledby="add">
<h2 id="add">{{index $.T "calendar_add"}}</h2>
{{if .Full}}<p>{{printf (index $.T "calendars_full") .Max}}</p>{{else}}<form method="post" action="{{.Action}}">{{template "csrf" $}}
<label for="url">{{index $.T "url_label"}}</label>
<input type="text" inputmode="url" id="url" name="url" autocomplete="off" spellcheck="false" required maxlength="2048" aria-describedby="url-help">
<p class="muted" id="url-help">{{index $.T "url_help"}}</p>
<fieldset><legend>{{index $.T "rule_legend"}}</legend>
{{range .Rules}}<p class="check"><input type="radio" id="add-rule-{{.Value}}" name="rule" value="{{.Value}}"{{if .Selected}} checked{{end}} aria-describedby="add-rule-{{.Value}}-help"> <label for="add-rule-{{.Value}}">{{.Label}}</label></p>
<p class="muted" id="add-rule-{{.Value}}-help">{{.Help}}</p>
{{end}}</fieldset>
<button type="submit" id="calendar-submit">{{index $.T "calendar_add_button"}}</button>
</form>{{end}}</section>
{{if .ExportURL}}<section class="card" aria-labelledby="export">
<h2 id="export">{{index $.T "export_heading"}}</h2>
<p id="export-help">{{index $.T "export_intro"}}</p>
<label for="export-url">{{index $.T "export_label"}}</label>
<input type="text" id="export-url" readonly value="{{.ExportURL}}" aria-describedby="export-help">
</section>{{end}}{{end}}{{end}}`,
}
