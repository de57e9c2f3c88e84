package provider

// supplyTemplates are the supply pages' contents.
var supplyTemplates = map[string]string{
	"blocks": `{{define "content"}}{{with .Data}}{{if .InTheWayURL}}<p><a href="{{$.Link .InTheWayURL}}">{{printf (index $.T "open_booking") .InTheWayLab}}</a></p>{{end}}
<section class="card" aria-labelledby="list">
<h2 id="list">{{index $.T "blocks_list"}}</h2>
{{if .Blocks}}<table class="stack"><thead><tr><th scope="col">{{index $.T "col_when"}}</th><th scope="col">{{index $.T "col_repeat"}}</th><th scope="col">{{index $.T "col_note"}}</th><th scope="col">{{index $.T "col_action"}}</th></tr></thead>
<tbody>{{range .Blocks}}<tr><td data-label="{{index $.T "col_when"}}">{{.When}}</td><td data-label="{{index $.T "col_repeat"}}">{{.Repeat}}</td><td data-label="{{index $.T "col_note"}}">{{.Note}}{{if .FromFile}} <span class="muted">({{index $.T "from_file"}})</span>{{end}}</td>
<td><form method="post" action="{{.RemoveURL}}">{{template "csrf" $}}<button type="submit" class="secondary">{{index $.T "remove"}}<span class="vh"> {{.When}}</span></button></form></td></tr>
{{end}}</tbody></table>{{else}}<p>{{index $.T "no_blocks"}}</p>{{end}}</section>
<section class="card" aria-labelledby="add">
<h2 id="add">{{index $.T "block_add"}}</h2>
<form method="post" action="{{.Action}}">{{template "csrf" $}}
<fieldset><legend>{{index $.T "block_kind"}}</legend>
<p class="check"><input type="radio" id="kind-hours" name="kind" value="hours"{{if not .WholeDays}} checked{{end}}> <label for="kind-hours">{{index $.T "kind_hours"}}</label></p>
<p class="check"><input type="radio" id="kind-days" name="kind" value="days"{{if .WholeDays}} checked{{end}}> <label for="kind-days">{{index $.T "kind_days"}}</label></p>
</fieldset>
<div class="row"><div><label for="from">{{index $.T "block_from"}}</label><input type="date" id="from" name="from" required value="{{.From}}"></div>
<div><label for="to">{{index $.T "block_to"}}</label><input type="date" id="to" name="to" value="{{.To}}" aria-describedby="to-help"><p class="muted" id="to-help">{{index $.T "block_to_help"}}</p></div></div>
<div class="row"><div><label for="start">{{index $.T "block_start"}}</label><input type="time" id="start" name="start" value="{{.Start}}"></div>
<div><label for="end">{{index $.T "block_end"}}</label><input type="time" id="end" name="end" value="{{.End}}"></div></div>
<label for="weeks">{{index $.T "block_weeks"}}</label>
<input type="number" id="weeks" name="weeks" min="1" max="52" value="{{.Weeks}}" aria-describedby="weeks-help"><p class="muted" id="weeks-help">{{index $.T "block_weeks_help"}}</p>
<label for="block-note">{{index $.T "block_note"}}</label>
<input type="text" id="block-note" name="block_note" maxlength="200" value="{{.Note}}">
<button type="submit" id="block-submit">{{index $.T "block_button"}}</button>
</form></section>{{end}}{{end}}`,

	"hours": `{{define "content"}}{{with .Data}}<section class="card" aria-labelledby="weekly">
<h2 id="weekly">{{index $.T "weekly_heading"}}</h2>
<p class="muted" id="weekly-help">{{index $.T "weekly_help"}}</p>
<form method="post" action="{{.Action}}">{{template "csrf" $}}
{{range .Days}}<label for="{{.Name}}">{{.Label}}</label><input type="text" id="{{.Name}}" name="{{.Name}}" value="{{.Value}}" maxlength="100" aria-describedby="weekly-help">
{{end}}<div class="row"><div><label for="notice">{{index $.T "notice_label"}}</label><input type="number" id="notice" name="notice" min="0" max="10080" required value="{{.Notice}}"></div>
<div><label for="horizon">{{index $.T "horizon_label"}}</label><input type="number" id="horizon" name="horizon" min="1" max="365" required value="{{.Horizon}}"></div></div>
<button type="submit" id="hours-submit">{{index $.T "save"}}</button>
</form></section>
<section class="card" aria-labelledby="dates">
<h2 id="dates">{{index $.T "dates_heading"}}</h2>
{{if .Dates}}<ul>{{range .Dates}}<li>{{.Label}}: {{.Hours}}
<form method="post" action="{{.RemoveURL}}" class="inline">{{template "csrf" $}}<button type="submit" class="secondary">{{index $.T "remove"}}<span class="vh"> {{.Label}}</span></button></form></li>
{{end}}</ul>{{else}}<p>{{index $.T "no_dates"}}</p>{{end}}
<form method="post" action="{{.DaysAction}}">{{template "csrf" $}}
<label for="day-date">{{index $.T "day_date"}}</label><input type="date" id="day-date" name="day_date" required value="{{.DayDate}}">
<p class="check"><input type="checkbox" id="day-closed" name="day_closed" value="yes"{{if .DayClosed}} checked{{end}}> <label for="day-closed">{{index $.T "day_closed"}}</label></p>
<label for="day-ranges">{{index $.T "day_ranges"}}</label><input type="text" id="day-ranges" name="day_ranges" maxlength="100" value="{{.DayRanges}}" aria-describedby="weekly-help">
<button type="submit" id="day-submit">{{index $.T "day_button"}}</button>
</form></section>
<section class="card" aria-labelledby="pause">
<h2 id="pause">{{index $.T "pause_heading"}}</h2>
{{if .PausedUntil}}<p><strong>{{printf (index $.T "paused_until") .PausedUntil}}</strong></p>{{else}}<p>{{index $.T "pause_intro"}}</p>{{end}}
<form method="post" action="{{.PauseAction}}">{{template "csrf" $}}
<label for="until">{{index $.T "pause_until"}}</label><input type="date" id="until" name="until" value="{{.PauseValue}}">
<button type="submit" id="pause-submit">{{index $.T "pause_button"}}</button>
{{if .PausedUntil}}<button type="submit" class="secondary" name="resume" value="yes" id="resume-submit">{{index $.T "resume_button"}}</button>{{end}}
</form></section>{{end}}{{end}}`,

	"prices": `{{define "content"}}{{with .Data}}<p class="muted" id="prices-help">{{index $.T "prices_help"}}</p>
<form method="post" action="{{.Action}}">{{template "csrf" $}}
<table class="stack"><thead><tr><th scope="col">{{index $.T "col_service"}}</th><th scope="col">{{index $.T "col_price"}}</th><th scope="col">{{index $.T "col_minimum"}}</th><th scope="col">{{index $.T "col_labour"}}</th></tr></thead>
<tbody>{{range .Rows}}<tr><td><strong>{{.Label}}</strong></td>
<td data-label="{{index $.T "col_price"}}"><label for="price_{{.ID}}" class="vh">{{index $.T "col_price"}} {{.Label}}</label><input type="text" inputmode="numeric" id="price_{{.ID}}" name="price_{{.ID}}" value="{{.Price}}" maxlength="9" aria-describedby="prices-help">{{if .PerUnit}} <span class="muted">{{printf (index $.T "per_unit") .Unit}}</span>{{end}}</td>
<td{{if .PerUnit}} data-label="{{index $.T "col_minimum"}}"{{end}}>{{if .PerUnit}}<label for="min_{{.ID}}" class="vh">{{index $.T "col_minimum"}} {{.Label}}</label><input type="text" inputmode="numeric" id="min_{{.ID}}" name="min_{{.ID}}" value="{{.Minimum}}" maxlength="9">{{end}}</td>
<td data-label="{{index $.T "col_labour"}}"><label for="labour_{{.ID}}" class="vh">{{index $.T "col_labour"}} {{.Label}}</label><input type="number" inputmode="numeric" min="0" max="100" step="1" id="labour_{{.ID}}" name="labour_{{.ID}}" value="{{.Labour}}" aria-describedby="labour-help"></td></tr>
{{end}}</tbody></table>
<p class="muted" id="labour-help">{{index $.T "labour_help"}}</p>
<button type="submit" id="prices-submit">{{index $.T "save"}}</button>
</form>{{end}}{{end}}`,

	"postcodes": `{{define "content"}}{{with .Data}}<p>{{index $.T "postcodes_now"}} {{.Served}}</p>
<form method="post" action="{{.Action}}">{{template "csrf" $}}
<label for="postcodes">{{index $.T "postcodes_label"}}</label>
<textarea id="postcodes" name="postcodes" rows="8" maxlength="5000" required aria-describedby="postcodes-help">{{.Value}}</textarea>
<p class="muted" id="postcodes-help">{{index $.T "postcodes_help"}}</p>
<button type="submit" id="postcodes-submit">{{index $.T "save"}}</button>
</form>{{end}}{{end}}`,
}
