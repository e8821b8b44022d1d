package eval

import (
	"cmp"
	"fmt"
	"html/template"
	"io"
	"slices"
)

// Page is what the HTML report shows.
type Page struct {
	Title     string
	Questions []Question
	// Graphs are the graphs run, each with its modes.
	Graphs []PageGraph
}

// PageGraph is one graph's modes.
type PageGraph struct {
	Source string
	Modes  []ModeReport
}

// bar is one bar of the chart.
type bar struct {
	Label        string
	Recall       float64
	Y, W, TextX  int
	Value, Title string
}

// row is one question of one mode, for the worst-first table.
type row struct {
	Mode     string
	Question Question
	Result   Result
}

// WriteHTML writes a self-contained report page: a bar chart of context
// recall per mode (SVG, no script), then every question of every mode,
// worst first, with the evidence missed, the context and the answer.
func WriteHTML(w io.Writer, p Page) error {
	const width, left, height = 640, 220, 26
	var bars []bar
	for _, g := range p.Graphs {
		for _, m := range g.Modes {
			label := m.Mode
			if len(p.Graphs) > 1 {
				label = m.Mode + " · " + g.Source
			}
			wd := int(m.Summary.Recall * float64(width-left-60))
			bars = append(bars, bar{Label: label, Recall: m.Summary.Recall, Y: len(bars) * height, W: max(wd, 1), TextX: left + max(wd, 1) + 6,
				Value: fmt.Sprintf("%.2f", m.Summary.Recall), Title: fmt.Sprintf("%s: context recall %.2f over %d questions", label, m.Summary.Recall, m.Summary.Questions)})
		}
	}
	byID := map[string]Question{}
	for _, q := range p.Questions {
		byID[q.ID] = q
	}
	var rows []row
	for _, g := range p.Graphs {
		for _, m := range g.Modes {
			mode := m.Mode
			if len(p.Graphs) > 1 {
				mode += " · " + g.Source
			}
			for _, r := range m.Results {
				rows = append(rows, row{Mode: mode, Question: byID[r.ID], Result: r})
			}
		}
	}
	slices.SortStableFunc(rows, func(a, b row) int {
		return cmp.Compare(a.Result.Recall.Share(), b.Result.Recall.Share())
	})
	return pageTmpl.Execute(w, map[string]any{
		"Title": p.Title, "Bars": bars, "Rows": rows,
		"Width": width, "Left": left, "ChartHeight": len(bars)*height + 4,
	})
}

var pageTmpl = template.Must(template.New("eval").Funcs(template.FuncMap{
	"pct": func(f float64) string { return fmt.Sprintf("%.0f%%", f*100) },
}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>{{.Title}}</title>
<style>
body{font:15px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:64rem;padding:0 1rem;color:#222}
h1{font-size:1.4rem}h2{font-size:1.1rem;margin-top:2rem}
svg text{font:13px system-ui,sans-serif}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:.35rem .5rem;text-align:left;vertical-align:top}
.missing{color:#a33}.ok{color:#2a6}pre{white-space:pre-wrap;max-height:24rem;overflow:auto;background:#f6f6f6;padding:.5rem}
details{margin:.2rem 0}
</style></head><body>
<h1>{{.Title}}</h1>
<h2>Context recall per mode</h2>
<svg id="chart" role="img" aria-label="context recall per mode" width="{{.Width}}" height="{{.ChartHeight}}">
{{range .Bars}}<g><title>{{.Title}}</title>
<text x="0" y="{{.Y}}" dy="17">{{.Label}}</text>
<rect class="bar" x="{{$.Left}}" y="{{.Y}}" width="{{.W}}" height="22" fill="#4a7bb7"></rect>
<text x="{{.TextX}}" y="{{.Y}}" dy="17">{{.Value}}</text></g>
{{end}}</svg>
<h2>Questions, worst first</h2>
<table id="questions"><thead><tr><th>recall</th><th>mode</th><th>question</th></tr></thead><tbody>
{{range .Rows}}<tr><td>{{pct .Result.Recall.Share}} ({{.Result.Recall.Found}}/{{.Result.Recall.Total}})</td><td>{{.Mode}}</td><td>
<b>{{.Question.ID}}</b> {{if .Question.Kind}}[{{.Question.Kind}}]{{end}} {{.Question.Question}}
{{if .Result.Err}}<div class="missing">error: {{.Result.Err}}</div>{{end}}
{{range .Result.Recall.Missing}}<div class="missing">missing {{.}}</div>{{end}}
{{if .Question.Answer}}<div>reference: {{.Question.Answer}}</div>{{end}}
{{if .Result.Answer}}<div>answer: {{.Result.Answer}}{{with .Result.Verdict}} <span class="ok">(judge {{.Score}}/5: {{.Reason}})</span>{{end}}</div>{{end}}
{{if .Result.Context}}<details><summary>context ({{.Result.Tokens}} tokens)</summary><pre>{{.Result.Context}}</pre></details>{{end}}
</td></tr>
{{end}}</tbody></table>
</body></html>
`))
