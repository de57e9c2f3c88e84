package apidoc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"html/template"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// The API reference at /docs: one self-contained HTML page rendered from
// the contract document. It loads nothing (no script, no font, no
// stylesheet, no CDN), so it works offline, and its Content-Security-Policy
// forbids any load but its own inline style.

// ReferenceCSP is the Content-Security-Policy to serve the reference page
// with: it allows the page's inline style and nothing else.
const ReferenceCSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

type docsPage struct {
	Title, Version, BaseURL string
	Summary                 string
	Description             template.HTML
	Groups                  []docsGroup
	Webhooks                []docsOperation
	Schemas                 []docsSchema
}

type docsGroup struct {
	ID, Name    string
	Description template.HTML
	Operations  []docsOperation
}

type docsOperation struct {
	ID, Method, Path, Summary string
	Description               template.HTML
	Deprecated                bool
	Scopes                    string
	Parameters                []docsParameter
	Body                      template.HTML
	Responses                 []docsResponse
}

type docsParameter struct {
	Name, In    string
	Required    bool
	Type        template.HTML
	Description template.HTML
}

type docsResponse struct {
	Status      string
	Description template.HTML
	Body        template.HTML
}

type docsSchema struct {
	Name        string
	Type        template.HTML
	Description template.HTML
	Properties  []docsProperty
}

type docsProperty struct {
	Name        string
	Required    bool
	Type        template.HTML
	Description template.HTML
}

// readReference reads what the reference page shows of the contract
// document doc: everything but the base URL.
func readReference(doc []byte) (docsPage, error) {
	var d map[string]any
	if err := json.Unmarshal(doc, &d); err != nil {
		return docsPage{}, fmt.Errorf("apidoc: reading the contract document: %w", err)
	}
	info := obj(d["info"])
	comps := obj(d["components"])
	page := docsPage{
		Title: str(info["title"]), Version: str(info["version"]),
		Summary: str(info["summary"]), Description: markdown(str(info["description"])),
	}

	groups := map[string]*docsGroup{}
	var order []string
	for _, t := range list(d["tags"]) {
		name := str(obj(t)["name"])
		groups[name] = &docsGroup{ID: "tag-" + anchor(name), Name: name, Description: markdown(str(obj(t)["description"]))}
		order = append(order, name)
	}
	paths := obj(d["paths"])
	for _, path := range slices.Sorted(maps.Keys(paths)) {
		for _, method := range []string{"get", "post", "put", "patch", "delete"} {
			op, ok := paths[path].(map[string]any)[method].(map[string]any)
			if !ok {
				continue
			}
			o := operation(op, method, path, comps)
			tag := "Other"
			if tags := list(op["tags"]); len(tags) > 0 {
				tag = str(tags[0])
			}
			g, ok := groups[tag]
			if !ok {
				g = &docsGroup{ID: "tag-" + anchor(tag), Name: tag}
				groups[tag] = g
				order = append(order, tag)
			}
			g.Operations = append(g.Operations, o)
		}
	}
	for _, name := range order {
		if g := groups[name]; len(g.Operations) > 0 {
			page.Groups = append(page.Groups, *g)
		}
	}
	hooks := obj(d["webhooks"])
	for _, name := range slices.Sorted(maps.Keys(hooks)) {
		if op, ok := obj(hooks[name])["post"].(map[string]any); ok {
			o := operation(op, "post", name, comps)
			o.ID = "webhook-" + anchor(name)
			page.Webhooks = append(page.Webhooks, o)
		}
	}
	schemas := obj(comps["schemas"])
	for _, name := range slices.Sorted(maps.Keys(schemas)) {
		s := obj(schemas[name])
		ds := docsSchema{Name: name, Type: typeOf(s), Description: markdown(str(s["description"]))}
		required := map[string]bool{}
		for _, r := range list(s["required"]) {
			required[str(r)] = true
		}
		props := obj(s["properties"])
		for _, p := range slices.Sorted(maps.Keys(props)) {
			ps := obj(props[p])
			ds.Properties = append(ds.Properties, docsProperty{Name: p, Required: required[p], Type: typeOf(ps),
				Description: markdown(str(ps["description"]))})
		}
		page.Schemas = append(page.Schemas, ds)
	}

	return page, nil
}

// Reference renders the reference page for a server at baseURL.
func (s *Set) Reference(baseURL string) ([]byte, error) {
	page := s.reference
	page.BaseURL = baseURL
	var buf bytes.Buffer
	if err := docsTemplate.Execute(&buf, page); err != nil {
		return nil, fmt.Errorf("apidoc: the reference page: %w", err)
	}
	return buf.Bytes(), nil
}

// operation gathers what the page shows of one operation, following the
// document's references to shared parameters and responses.
func operation(op map[string]any, method, path string, comps map[string]any) docsOperation {
	o := docsOperation{
		ID:     str(op["operationId"]),
		Method: strings.ToUpper(method), Path: path, Summary: str(op["summary"]),
		Description: markdown(str(op["description"])), Deprecated: op["deprecated"] == true,
	}
	if o.ID == "" {
		o.ID = anchor(method + path)
	}
	var scopes []string
	for _, req := range list(op["security"]) {
		for _, s := range obj(req) {
			for _, scope := range list(s) {
				if !slices.Contains(scopes, str(scope)) {
					scopes = append(scopes, str(scope))
				}
			}
		}
	}
	o.Scopes = strings.Join(scopes, ", ")
	for _, p := range list(op["parameters"]) {
		p := resolve(obj(p), comps)
		o.Parameters = append(o.Parameters, docsParameter{Name: str(p["name"]), In: str(p["in"]), Required: p["required"] == true,
			Type: typeOf(obj(p["schema"])), Description: markdown(str(p["description"]))})
	}
	if rb := resolve(obj(op["requestBody"]), comps); rb != nil {
		o.Body = contentTypes(obj(rb["content"]))
	}
	responses := obj(op["responses"])
	codes := slices.Collect(maps.Keys(responses))
	sort.Strings(codes) // "default" sorts after the numbers
	for _, code := range codes {
		r := resolve(obj(responses[code]), comps)
		o.Responses = append(o.Responses, docsResponse{Status: code, Description: markdown(str(r["description"])),
			Body: contentTypes(obj(r["content"]))})
	}
	return o
}

// contentTypes names the schema of each media type of a body.
func contentTypes(content map[string]any) template.HTML {
	var parts []string
	for _, mt := range slices.Sorted(maps.Keys(content)) {
		parts = append(parts, "<code>"+html.EscapeString(mt)+"</code> "+string(typeOf(obj(obj(content[mt])["schema"]))))
	}
	return template.HTML(strings.Join(parts, "<br>"))
}

// resolve follows a local $ref ("#/components/<kind>/<name>").
func resolve(m map[string]any, comps map[string]any) map[string]any {
	for range 8 {
		ref, ok := m["$ref"].(string)
		if !ok {
			return m
		}
		parts := strings.Split(strings.TrimPrefix(ref, "#/components/"), "/")
		if len(parts) != 2 {
			return m
		}
		m = obj(obj(comps[parts[0]])[parts[1]])
	}
	return m
}

// typeOf describes a schema in a few words, linking named schemas.
func typeOf(s map[string]any) template.HTML {
	if s == nil {
		return ""
	}
	if ref, ok := s["$ref"].(string); ok {
		name := ref[strings.LastIndex(ref, "/")+1:]
		return template.HTML(`<a href="#schema-` + anchor(name) + `">` + html.EscapeString(name) + `</a>`)
	}
	for _, k := range []string{"oneOf", "anyOf", "allOf"} {
		if alts := list(s[k]); len(alts) > 0 {
			var parts []string
			for _, a := range alts {
				parts = append(parts, string(typeOf(obj(a))))
			}
			sep := map[string]string{"oneOf": " | ", "anyOf": " | ", "allOf": " &amp; "}[k]
			return template.HTML(strings.Join(parts, sep))
		}
	}
	var t string
	switch v := s["type"].(type) {
	case string:
		t = html.EscapeString(v)
	case []any:
		var ts []string
		for _, x := range v {
			ts = append(ts, html.EscapeString(str(x)))
		}
		t = strings.Join(ts, " | ")
	}
	if t == "array" || strings.HasPrefix(t, "array") {
		if items := obj(s["items"]); items != nil {
			t += " of " + string(typeOf(items))
		}
	}
	var notes []string
	if c, ok := s["const"]; ok {
		b, _ := json.Marshal(c)
		notes = append(notes, "= <code>"+html.EscapeString(string(b))+"</code>")
	}
	if e := list(s["enum"]); len(e) > 0 {
		var vs []string
		for _, x := range e {
			b, _ := json.Marshal(x)
			vs = append(vs, "<code>"+html.EscapeString(string(b))+"</code>")
		}
		notes = append(notes, "one of "+strings.Join(vs, ", "))
	}
	if f := str(s["format"]); f != "" {
		notes = append(notes, html.EscapeString(f))
	}
	if p := str(s["pattern"]); p != "" {
		notes = append(notes, "pattern <code>"+html.EscapeString(p)+"</code>")
	}
	for _, k := range []string{"minLength", "maxLength", "minimum", "maximum", "minItems", "maxItems"} {
		if v, ok := s[k]; ok {
			notes = append(notes, fmt.Sprintf("%s %v", k, v))
		}
	}
	if len(notes) > 0 {
		t += " (" + strings.Join(notes, "; ") + ")"
	}
	if t == "" {
		t = "any"
	}
	return template.HTML(t)
}

var (
	codeSpan = regexp.MustCompile("`([^`]+)`")
	mdLink   = regexp.MustCompile(`\[([^\]]+)\]\((https?://[^)\s]+)\)`)
)

// markdown renders the subset of Markdown the document's descriptions use:
// paragraphs, "##"/"###" headings, "-" and "1." list items, `code` and
// [links](https://...). Everything else is shown as text.
func markdown(s string) template.HTML {
	var b strings.Builder
	for _, block := range strings.Split(strings.TrimSpace(s), "\n\n") {
		block = strings.TrimSpace(block)
		if block == "" {
			continue
		}
		switch {
		case strings.HasPrefix(block, "### "):
			b.WriteString("<h5>" + inline(strings.TrimPrefix(block, "### ")) + "</h5>")
		case strings.HasPrefix(block, "## "):
			b.WriteString("<h4>" + inline(strings.TrimPrefix(block, "## ")) + "</h4>")
		case strings.HasPrefix(block, "- ") || strings.HasPrefix(block, "1. "):
			tag := "ul"
			if strings.HasPrefix(block, "1. ") {
				tag = "ol"
			}
			b.WriteString("<" + tag + ">")
			for _, item := range splitItems(block) {
				b.WriteString("<li>" + inline(item) + "</li>")
			}
			b.WriteString("</" + tag + ">")
		default:
			b.WriteString("<p>" + inline(block) + "</p>")
		}
	}
	return template.HTML(b.String())
}

var listItem = regexp.MustCompile(`(?m)^(?:- |\d+\. )`)

func splitItems(block string) []string {
	var items []string
	for _, it := range listItem.Split(block, -1) {
		if it = strings.TrimSpace(it); it != "" {
			items = append(items, it)
		}
	}
	return items
}

func inline(s string) string {
	s = html.EscapeString(strings.Join(strings.Fields(s), " "))
	s = codeSpan.ReplaceAllString(s, "<code>$1</code>")
	return mdLink.ReplaceAllString(s, `<a href="$2" rel="noreferrer">$1</a>`)
}

var nonAnchor = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

func anchor(s string) string { return strings.Trim(nonAnchor.ReplaceAllString(s, "-"), "-") }

func obj(v any) map[string]any { m, _ := v.(map[string]any); return m }
func list(v any) []any         { l, _ := v.([]any); return l }
func str(v any) string         { s, _ := v.(string); return s }

var docsTemplate = template.Must(template.New("docs").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} {{.Version}}: API reference</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;margin:0;color:#1b1b1b;background:#fff}
nav{position:fixed;top:0;bottom:0;left:0;width:19rem;overflow:auto;padding:1rem;background:#f4f5f7;border-right:1px solid #ddd;font-size:13px}
nav a{display:block;color:#1b1b1b;text-decoration:none;padding:1px 0}
nav a:hover{text-decoration:underline}
main{margin-left:21rem;max-width:60rem;padding:1rem 2rem 4rem}
code{font:13px/1.4 ui-monospace,monospace;background:#f0f1f3;padding:0 .2em;border-radius:3px}
section.op{border:1px solid #ddd;border-radius:6px;padding:.5rem 1rem;margin:1rem 0}
.m{display:inline-block;min-width:3.6em;font:bold 12px ui-monospace,monospace;color:#fff;background:#555;border-radius:3px;padding:2px 6px;text-align:center}
.m-GET{background:#1f6feb}.m-POST{background:#1a7f37}.m-DELETE{background:#cf222e}
.dep{color:#9a6700;font-weight:bold}
table{border-collapse:collapse;width:100%;margin:.5rem 0;font-size:14px}
th,td{border-top:1px solid #e5e5e5;padding:4px 8px;text-align:left;vertical-align:top}
td p{margin:0 0 .3em}
@media (max-width:800px){nav{display:none}main{margin-left:0}}
</style>
</head>
<body>
<nav aria-label="Contents">
<strong>{{.Title}}</strong>
<a href="#overview">Overview</a>
{{range .Groups}}<strong>{{.Name}}</strong>
{{range .Operations}}<a href="#{{.ID}}"><span class="m m-{{.Method}}">{{.Method}}</span> {{.Path}}</a>
{{end}}{{end}}{{if .Webhooks}}<strong>Webhook events</strong>
{{range .Webhooks}}<a href="#{{.ID}}">{{.Path}}</a>
{{end}}{{end}}<a href="#schemas"><strong>Schemas</strong></a>
</nav>
<main>
<h1>{{.Title}} <small>{{.Version}}</small></h1>
<p>{{.Summary}}</p>
<p>Base URL: <code>{{.BaseURL}}</code>. This page is rendered from <a href="{{.BaseURL}}/v1/openapi.json">the OpenAPI document</a> this server serves; for models, see <a href="{{.BaseURL}}/llms.txt">llms.txt</a>.</p>
<section id="overview"><h2>Overview</h2>{{.Description}}</section>
{{range .Groups}}<h2 id="{{.ID}}">{{.Name}}</h2>{{.Description}}
{{range .Operations}}{{template "op" .}}{{end}}{{end}}
{{if .Webhooks}}<h2 id="webhooks">Webhook events</h2>
{{range .Webhooks}}{{template "op" .}}{{end}}{{end}}
<h2 id="schemas">Schemas</h2>
{{range .Schemas}}<section class="op" id="schema-{{.Name}}"><h3>{{.Name}}</h3>
<p>{{.Type}}</p>{{.Description}}
{{if .Properties}}<table><tr><th>Property</th><th>Type</th><th>Description</th></tr>
{{range .Properties}}<tr><td><code>{{.Name}}</code>{{if .Required}} <em>required</em>{{end}}</td><td>{{.Type}}</td><td>{{.Description}}</td></tr>
{{end}}</table>{{end}}</section>
{{end}}
</main>
</body>
</html>
{{define "op"}}<section class="op" id="{{.ID}}">
<h3><span class="m m-{{.Method}}">{{.Method}}</span> <code>{{.Path}}</code> {{.Summary}}{{if .Deprecated}} <span class="dep">deprecated</span>{{end}}</h3>
{{if .Scopes}}<p>Scope: <code>{{.Scopes}}</code></p>{{end}}
{{.Description}}
{{if .Parameters}}<table><tr><th>Parameter</th><th>In</th><th>Type</th><th>Description</th></tr>
{{range .Parameters}}<tr><td><code>{{.Name}}</code>{{if .Required}} <em>required</em>{{end}}</td><td>{{.In}}</td><td>{{.Type}}</td><td>{{.Description}}</td></tr>
{{end}}</table>{{end}}
{{if .Body}}<p>Request body: {{.Body}}</p>{{end}}
<table><tr><th>Status</th><th>Description</th><th>Body</th></tr>
{{range .Responses}}<tr><td>{{.Status}}</td><td>{{.Description}}</td><td>{{.Body}}</td></tr>
{{end}}</table>
</section>
{{end}}`))
