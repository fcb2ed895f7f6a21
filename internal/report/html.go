package report

import (
	"bytes"
	"fmt"
	"html/template"
	"io"

	"github.com/triage-dev/triage/internal/words"
)

// HTML writes the run's report as one HTML page meant to be mailed: table layout and inline
// styles only (mail clients drop <style> blocks and ignore flex and grid), system fonts, no
// script, no image, nothing fetched. html/template escapes every text for where it lands;
// the only links are rows of the spreadsheet (Run.RowLink).
func HTML(w io.Writer, r Run) error {
	var b bytes.Buffer
	if err := htmlTmpl.ExecuteTemplate(&b, "report", r.view()); err != nil {
		return fmt.Errorf("render the HTML report: %w", err)
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("write the HTML report: %w", err)
	}
	return nil
}

var htmlTmpl = template.Must(template.Must(template.New("report").Funcs(template.FuncMap{"refusals": newRefusalSection, "rows": func(n int) string { return words.Count(n, "row", "rows") }, "count": words.Count, "keyStyle": keyStyle}).
	Parse(htmlSource)).New("refusals").Parse(htmlRefusals))

// keyCellStyle is the style of a key's cell. A key is an exact string a receiver matches, so it
// is never broken inside: the column grows to the longest key (white-space:nowrap; no
// word-break), which a mail client honours as an inline style.
const keyCellStyle = "border-bottom:1px solid #eaeef2;font-family:Menlo,Consolas,monospace;white-space:nowrap"

// keyStyle is keyCellStyle for the template: a constant of ours, so safe as a CSS value.
func keyStyle() template.CSS { return template.CSS(keyCellStyle) }

// refusalSection is one list of rows that were not sent, with its heading.
type refusalSection struct {
	Title string
	Items []refusalView
}

func newRefusalSection(title string, items []refusalView) refusalSection {
	return refusalSection{Title: title, Items: items}
}

// The styles repeat on each element on purpose: a mail client keeps inline styles only.
const htmlSource = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
</head>
<body style="margin:0;padding:16px;background:#f4f5f7;font-family:Arial,Helvetica,sans-serif;font-size:14px;line-height:1.4;color:#1f2328">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" style="max-width:960px;margin:0 auto;background:#ffffff;border:1px solid #d0d7de;border-collapse:collapse">
<tr><td style="padding:16px 20px">
<h1 style="font-size:20px;margin:0 0 4px 0">triage replay of {{.Tab}}: {{.Outcome}}</h1>
<p style="margin:0;color:#57606a">{{.Started}} to {{.Ended}} &middot; {{.Duration}} &middot; {{.Rate}} &middot; exit code {{.ExitCode}} &middot; {{.Selected}} selected, {{.NotDoneCount}} not done{{if .TabLink}} &middot; <a href="{{.TabLink}}" style="color:#0969da">open the tab</a>{{end}}</p>
</td></tr>
{{- if .Halted}}
<tr><td style="padding:12px 20px;background:#ffebe9;border-top:3px solid #cf222e;border-bottom:1px solid #d0d7de;color:#82071e">
<strong>HALTED ({{.Halt.Cause}}, source {{.Halt.Source}}):</strong> {{.Halt.Detail}}<br>
Nothing new was sent after the halt; {{rows .NotAttempted}} not attempted. Fix the cause, then run the same command again: every row keeps its key, so nothing is applied twice.
</td></tr>
{{- else if .Cancelled}}
<tr><td style="padding:12px 20px;background:#fff8c5;border-top:3px solid #bf8700;border-bottom:1px solid #d0d7de;color:#633c01">
<strong>Interrupted:</strong> requests in flight finished and were written back; {{rows .NotAttempted}} not attempted. Run the same command again to continue.
</td></tr>
{{- else if .NotDoneCount}}
<tr><td style="padding:12px 20px;background:#fff8c5;border-top:3px solid #bf8700;border-bottom:1px solid #d0d7de;color:#633c01">
<strong>{{rows .NotDoneCount}} not done.</strong> Each is listed below with a link to its row.
</td></tr>
{{- else if ne .ExitCode 0}}
<tr><td style="padding:12px 20px;background:#fff8c5;border-top:3px solid #bf8700;border-bottom:1px solid #d0d7de;color:#633c01">
<strong>No row is left not done, but {{count (len .WriteBack) "write-back problem" "write-back problems"}}: the sheet does not show every outcome.</strong> See Write-back below; replaying those rows again is harmless.
</td></tr>
{{- else}}
<tr><td style="padding:12px 20px;background:#dafbe1;border-top:3px solid #1a7f37;border-bottom:1px solid #d0d7de;color:#116329">
<strong>Every selected row is done.</strong>
</td></tr>
{{- end}}
<tr><td style="padding:16px 20px">
<table role="presentation" width="100%" cellpadding="0" cellspacing="6" border="0">
{{- range .Cards}}
<tr>
{{- range .}}
<td width="20%" style="padding:8px 10px;border:1px solid #d0d7de;{{if .Bad}}background:#ffebe9;{{else}}background:#f6f8fa;{{end}}">
<div style="font-size:22px;font-weight:bold;{{if .Bad}}color:#cf222e{{else}}color:#1f2328{{end}}">{{.Value}}</div>
<div style="font-size:12px;color:#57606a">{{.Label}}</div>
</td>
{{- end}}
</tr>
{{- end}}
</table>
</td></tr>
<tr><td style="padding:0 20px 16px 20px">
<h2 style="font-size:16px;margin:8px 0">Rows not done ({{.NotDoneCount}})</h2>
{{- if .NotDone}}
<table width="100%" cellpadding="6" cellspacing="0" border="0" style="border-collapse:collapse;border:1px solid #d0d7de;font-size:13px">
<tr style="background:#f6f8fa;text-align:left"><th style="border-bottom:1px solid #d0d7de">Row</th><th style="border-bottom:1px solid #d0d7de">Key</th><th style="border-bottom:1px solid #d0d7de">Source</th><th style="border-bottom:1px solid #d0d7de">Status</th><th style="border-bottom:1px solid #d0d7de">Error or reason</th><th style="border-bottom:1px solid #d0d7de">Attempts</th></tr>
{{- range .NotDone}}
<tr style="vertical-align:top"><td style="border-bottom:1px solid #eaeef2;white-space:nowrap">{{if .Link}}<a href="{{.Link}}" style="color:#0969da">row {{.Row}}</a>{{else if gt .Row 0}}row {{.Row}}{{else}}&ndash;{{end}}</td><td style="{{keyStyle}}">{{.ID}}</td><td style="border-bottom:1px solid #eaeef2">{{if .Source}}{{.Source}}{{else}}&ndash;{{end}}</td><td style="border-bottom:1px solid #eaeef2;white-space:nowrap">{{.State}}</td><td style="border-bottom:1px solid #eaeef2;word-break:break-word">{{.Error}}</td><td style="border-bottom:1px solid #eaeef2;text-align:right">{{.Attempts}}</td></tr>
{{- end}}
</table>
{{- else}}
<p style="margin:0;color:#57606a">None.</p>
{{- end}}
{{- template "refusals" (refusals "Skipped by rule (nothing wrong)" .Skipped)}}
<h2 style="font-size:16px;margin:16px 0 8px 0">Write-back</h2>
<p style="margin:0">{{count .WriteRequests "request" "requests"}} to {{.Store}}; {{count (len .WriteBack) "problem" "problems"}}.</p>
{{- if .WriteBack}}
<ul style="margin:4px 0;padding-left:20px">
{{- range .WriteBack}}
<li>{{.}}</li>
{{- end}}
</ul>
{{- end}}
</td></tr>
<tr><td style="padding:0 20px 16px 20px">
<h2 style="font-size:16px;margin:8px 0">Configuration</h2>
<table cellpadding="4" cellspacing="0" border="0" style="font-size:13px">
{{if eq .Store "the sheet"}}<tr><td style="color:#57606a">Spreadsheet</td><td><code>{{.Spreadsheet}}</code></td></tr>{{else}}<tr><td style="color:#57606a">Database</td><td><code>{{.Store}}</code></td></tr>{{end}}
<tr><td style="color:#57606a">Tab</td><td>{{.Tab}}</td></tr>
<tr><td style="color:#57606a">Selection</td><td>{{.Settings.Selection}}</td></tr>
<tr><td style="color:#57606a">Source filter</td><td>{{if .Settings.SourceFilter}}{{.Settings.SourceFilter}}{{else}}every source{{end}}</td></tr>
<tr><td style="color:#57606a">Concurrency</td><td>{{.Settings.Concurrency}}</td></tr>
<tr><td style="color:#57606a">Force (past key_ttl)</td><td>{{if .Settings.Force}}yes{{else}}no{{end}}</td></tr>
</table>
{{- if .Settings.Sources}}
<table width="100%" cellpadding="6" cellspacing="0" border="0" style="border-collapse:collapse;border:1px solid #d0d7de;font-size:13px;margin-top:8px">
<tr style="background:#f6f8fa;text-align:left"><th style="border-bottom:1px solid #d0d7de">Source</th><th style="border-bottom:1px solid #d0d7de">Preset</th><th style="border-bottom:1px solid #d0d7de">url_prefixes</th><th style="border-bottom:1px solid #d0d7de">Headers (secrets redacted)</th><th style="border-bottom:1px solid #d0d7de">Limits</th></tr>
{{- range .Settings.Sources}}
<tr style="vertical-align:top"><td style="border-bottom:1px solid #eaeef2">{{.Name}}</td><td style="border-bottom:1px solid #eaeef2">{{.Preset}}</td><td style="border-bottom:1px solid #eaeef2;font-family:Menlo,Consolas,monospace;word-break:break-all">{{range .URLPrefixes}}{{.}}<br>{{else}}none: its rows are refused{{end}}{{range .RedirectPrefixes}}redirect: {{.}}<br>{{end}}</td><td style="border-bottom:1px solid #eaeef2;font-family:Menlo,Consolas,monospace">{{range .Headers}}{{.}}<br>{{else}}none{{end}}</td><td style="border-bottom:1px solid #eaeef2">rate {{.Rate}}, attempts {{.Attempts}}, timeout {{.Timeout}}</td></tr>
{{- end}}
</table>
{{- else}}
<p style="margin:4px 0 0 0;color:#57606a">No sources are configured.</p>
{{- end}}
</td></tr>
<tr><td style="padding:8px 20px;border-top:1px solid #d0d7de;font-size:12px;color:#57606a">Exit codes: 0 every selected row done; 1 some rows not done; 3 the run halted. Written by triage replay; cell text is shown as text, never as a link.</td></tr>
</table>
</body>
</html>
`

// htmlRefusals is the "refusals" template: a refusalSection as a table, nothing when empty.
const htmlRefusals = `
{{- if .Items}}
<h2 style="font-size:16px;margin:16px 0 8px 0">{{.Title}} ({{len .Items}})</h2>
<table width="100%" cellpadding="6" cellspacing="0" border="0" style="border-collapse:collapse;border:1px solid #d0d7de;font-size:13px">
<tr style="background:#f6f8fa;text-align:left"><th style="border-bottom:1px solid #d0d7de">Row</th><th style="border-bottom:1px solid #d0d7de">Key</th><th style="border-bottom:1px solid #d0d7de">Reason</th></tr>
{{- range .Items}}
<tr style="vertical-align:top"><td style="border-bottom:1px solid #eaeef2;white-space:nowrap">{{if .Link}}<a href="{{.Link}}" style="color:#0969da">row {{.Row}}</a>{{else}}&ndash;{{end}}</td><td style="{{keyStyle}}">{{.ID}}</td><td style="border-bottom:1px solid #eaeef2;word-break:break-word">{{.Reason}}</td></tr>
{{- end}}
</table>
{{- end}}
`
