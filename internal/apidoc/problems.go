package apidoc

import (
	"html/template"
	"io"
	"slices"
	"strings"

	"bokat"
)

// Problem is what the contract says about one error code: its HTTP status,
// a short title and what a client should do about it. Its page is served at
// {base_url}/problems/<code>, the type of every Problem with that code.
type Problem struct {
	Code   bokat.Code
	Status int
	Title  string
	Advice string
}

// WriteProblemPage writes the page of the problem type p for a server at
// baseURL.
func WriteProblemPage(w io.Writer, p Problem, baseURL string) error {
	return problemPage.Execute(w, map[string]any{"Code": p.Code, "Title": p.Title, "Status": p.Status, "Advice": p.Advice,
		"Base": baseURL})
}

// WriteProblemIndex writes the page listing the problem types ps, by code,
// for a server at baseURL.
func WriteProblemIndex(w io.Writer, ps []Problem, baseURL string) error {
	type row struct {
		Code   bokat.Code
		Status int
		Title  string
		Href   string
	}
	rows := make([]row, 0, len(ps))
	for _, p := range ps {
		rows = append(rows, row{p.Code, p.Status, p.Title, baseURL + "/problems/" + string(p.Code)})
	}
	slices.SortFunc(rows, func(a, b row) int { return strings.Compare(string(a.Code), string(b.Code)) })
	return problemIndex.Execute(w, rows)
}

var problemPage = template.Must(template.New("problem").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Code}} — Bokat API problem</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font-family:system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;line-height:1.5}code{background:#f2f2f2;padding:0 .2em}</style>
</head><body>
<h1>{{.Title}}</h1>
<p>Code <code>{{.Code}}</code>, HTTP status <code>{{.Status}}</code>.</p>
<p>{{.Advice}}</p>
<p>Every error body carries <code>api_request_id</code> and <code>trace_id</code>; quote them when you ask for help.
All codes: <a href="{{.Base}}/problems">{{.Base}}/problems</a>.</p>
</body></html>
`))

var problemIndex = template.Must(template.New("index").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Bokat API problem types</title>
<style>body{font-family:system-ui,sans-serif;max-width:48rem;margin:2rem auto;padding:0 1rem}td{padding:.2em .6em;vertical-align:top}</style>
</head><body><h1>Bokat API problem types</h1><table>
<tr><th>code</th><th>status</th><th>meaning</th></tr>
{{range .}}<tr><td><a href="{{.Href}}"><code>{{.Code}}</code></a></td><td>{{.Status}}</td><td>{{.Title}}</td></tr>
{{end}}</table></body></html>
`))
