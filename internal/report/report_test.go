package report

import (
	"bytes"
	"fmt"
	"html"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/triage-dev/triage/config"
	"github.com/triage-dev/triage/model"
)

const (
	testSheet     = "1AbC-d_EfG"
	testGID       = 914062753
	envSecret     = "env-s3cret-VALUE-42"
	literalSecret = "literal-s3cret-xyz"
)

// hostile are cell texts that try to escape their place in a report.
var hostile = []string{
	`<script>alert(1)</script>`,
	`"><img src=x onerror=alert(2)>`,
	`[click me](javascript:alert(3))`,
	`a | b || c \| d`,
	"\x1b]8;;https://evil.example/\x1b\\link\x1b]8;;\x1b\\ and \x1b[2J",
	"admin\u202egnp.exe",
	"``` fenced ` and `` ticks",
	"# heading\n<https://evil.example/auto> www.evil.example ![img](https://evil.example/x.png)",
	`&lt;b&gt; &amp; entity`,
}

// fixedRun is a halted run of every kind of row: the goldens' input.
func fixedRun(t *testing.T) Run {
	t.Helper()
	cfg, probs := config.Parse([]byte(`
[sources.billing]
url_prefixes = ["https://billing.example.com/hooks/"]
rate_per_minute = 30
[sources.billing.headers]
Authorization = "env:BILLING_TOKEN"

[sources.crm]
preset = "apps-script"
url_prefixes = ["https://script.google.com/macros/s/"]
max_attempts = 2
timeout = "15s"
[sources.crm.headers]
X-Api-Key = "literal-s3cret-xyz"
`))
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	getenv := func(k string) string {
		if k == "BILLING_TOKEN" {
			return envSecret
		}
		return ""
	}
	start := time.Date(2026, 3, 2, 4, 0, 0, 0, time.UTC)
	return Run{
		Tab: "failed_calls", SheetGID: testGID, SpreadsheetID: testSheet,
		Selected: 9, UnknownIDs: []string{"nope-1"},
		Started: start, Ended: start.Add(4500 * time.Millisecond), ExitCode: 3,
		Summary: model.ReplaySummary{
			Rows: []model.RowResult{
				{ID: "k2", Row: 2, Source: "crm", URL: "https://script.google.com/macros/s/A/exec", Key: "k2", State: model.StateDelivered, Attempts: 1},
				{ID: "k3", Row: 3, Source: "crm", Key: "k3", State: model.StateDuplicate, Attempts: 1},
				{ID: "k4", Row: 4, Source: "crm", Key: "k4", State: model.StateRejected, Attempts: 1, Detail: `{"ok":false} from crm: rejected ` + hostile[0]},
				{ID: "k5", Row: 5, Source: "billing", Key: "k5", State: model.StateSystemic, Attempts: 1, Detail: "401 from billing: check the BILLING_TOKEN secret (sent " + envSecret + ")"},
				{ID: "k6", Row: 6, Source: "billing", Key: "k6", State: model.StateNotAttempted},
				{ID: hostile[1], Row: 7, Source: hostile[3], Key: "k7", State: model.StateRetryable, Attempts: 2, Detail: hostile[2] + " " + hostile[4]},
			},
			Halted:       &model.Halt{Cause: "systemic", Source: "billing", Detail: "401 from billing: check the BILLING_TOKEN secret"},
			NotAttempted: []string{"k6"},
			Refused: []model.Refusal{
				{ID: "k8", Row: 8, Reason: "row 8: url " + hostile[7] + " is not under any allowed prefix"},
				{ID: "k9", Row: 9, Reason: "row 9 is already delivered", Skipped: true},
			},
			WriteRequests: 3,
			WriteErrors:   []string{"row 7: " + hostile[5]},
		},
		Settings: Settings{All: true, Concurrency: 2, Sources: Sources(cfg)},
		Secrets:  Secrets(cfg, getenv),
	}
}

// Goldens in testdata/ (x/exp/golden); rewrite with: go test ./internal/report/ -run TestGolden -update
func TestGoldenHTML(t *testing.T) {
	golden.RequireEqual(t, render(t, HTML, fixedRun(t)))
}

func TestGoldenMarkdown(t *testing.T) {
	golden.RequireEqual(t, render(t, Markdown, fixedRun(t)))
}

// hostileRun puts every hostile text in every place a report shows sheet text.
func hostileRun(t *testing.T) Run {
	r := fixedRun(t)
	r.Tab = "tab " + strings.Join(hostile, " ")
	r.UnknownIDs = hostile
	for i, h := range hostile {
		r.Summary.Rows = append(r.Summary.Rows, model.RowResult{ID: h, Row: 20 + i, Source: h, Key: h, State: model.StateRejected, Detail: h})
		r.Summary.Refused = append(r.Summary.Refused, model.Refusal{ID: h, Row: 40 + i, Reason: h, Skipped: i%2 == 0})
		r.Excluded = append(r.Excluded, model.Refusal{ID: h, Row: 60 + i, Reason: h})
	}
	r.Summary.Halted.Detail = strings.Join(hostile, " ")
	r.Summary.WriteErrors = hostile
	r.Settings.All, r.Settings.IDs, r.Settings.SourceFilter = false, hostile, hostile[1]
	return r
}

// rowsLinked are the row numbers a run's report must link: every row not done, refused,
// skipped or excluded, plus the tab itself (row 1).
func rowsLinked(r Run) map[int]int {
	want := map[int]int{1: 1}
	for _, x := range r.Summary.Rows {
		if !x.State.Success() {
			want[x.Row]++
		}
	}
	for _, x := range r.Summary.Refused {
		want[x.Row]++
	}
	for _, x := range r.Excluded {
		want[x.Row]++
	}
	return want
}

var linkRe = regexp.MustCompile(`^https://docs\.google\.com/spreadsheets/d/` + testSheet + `/edit#gid=` + strconv.Itoa(testGID) + `&range=A(\d+)$`)

// checkLinks asserts that hrefs are exactly the run's rows, each to its own row.
func checkLinks(t *testing.T, what string, hrefs []string, want map[int]int) {
	t.Helper()
	got := map[int]int{}
	for _, h := range hrefs {
		m := linkRe.FindStringSubmatch(h)
		if m == nil {
			t.Errorf("%s: a link that is not a row of the sheet: %q", what, h)
			continue
		}
		n, _ := strconv.Atoi(m[1])
		got[n]++
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: links by row %v, want %v", what, got, want)
	}
}

// TestHTMLEscapesHostileText: no tag, attribute, script or link comes out of cell text, and
// no terminal control or bidi override is left in it.
func TestHTMLEscapesHostileText(t *testing.T) {
	r := hostileRun(t)
	out := render(t, HTML, r)
	for _, bad := range []string{"<script", "<img", "\x1b", "\u202e", "<https://evil", "<b>"} {
		if strings.Contains(strings.ToLower(out), bad) {
			t.Errorf("the HTML holds %q", bad)
		}
	}
	// Text may read "javascript:" (escaped, as text); no tag or attribute may.
	for _, bad := range []string{"javascript", "evil", "onerror"} {
		if strings.Contains(strings.ToLower(stripText(out)), bad) {
			t.Errorf("a tag holds %q", bad)
		}
	}
	// Every tag is one of the template's own.
	allowed := map[string]bool{"html": true, "head": true, "meta": true, "title": true, "body": true, "table": true, "tr": true,
		"td": true, "th": true, "h1": true, "h2": true, "p": true, "a": true, "strong": true, "br": true, "div": true, "ul": true, "li": true, "code": true}
	for _, m := range regexp.MustCompile(`<(/?)([a-zA-Z!][a-zA-Z0-9]*)`).FindAllStringSubmatch(out, -1) {
		if !allowed[strings.ToLower(m[2])] && m[2] != "!DOCTYPE" {
			t.Errorf("a tag the template doesn't have: <%s%s", m[1], m[2])
		}
	}
	// Attributes are the template's own too: style, href, and the table ones.
	for _, m := range regexp.MustCompile(`\s([a-zA-Z-]+)=`).FindAllStringSubmatch(stripText(out), -1) {
		switch m[1] {
		case "style", "href", "lang", "initial-scale", "charset", "name", "content", "role", "width", "cellpadding", "cellspacing", "border":
		default:
			t.Errorf("an attribute the template doesn't have: %s", m[1])
		}
	}
	var hrefs []string
	for _, m := range regexp.MustCompile(`<a href="([^"]*)"`).FindAllStringSubmatch(out, -1) {
		hrefs = append(hrefs, html.UnescapeString(m[1]))
	}
	if n := strings.Count(out, "<a "); n != len(hrefs) {
		t.Errorf("%d <a> tags, %d with a plain href", n, len(hrefs))
	}
	checkLinks(t, "HTML", hrefs, rowsLinked(r))
	// The texts are there, escaped and made visible, not dropped.
	if !strings.Contains(out, "&lt;script&gt;alert(1)&lt;/script&gt;") || !strings.Contains(out, "admin␮gnp.exe") && !strings.Contains(out, "admin") {
		t.Error("the hostile text is not shown escaped")
	}
}

// stripText drops the text between tags, so only tags and their attributes remain.
func stripText(s string) string {
	return regexp.MustCompile(`>[^<]*<`).ReplaceAllString(s, "><")
}

// TestMarkdownEscapesHostileText: outside code spans, the Markdown holds only the report's
// own words and its row links; every table row has its header's number of cells.
func TestMarkdownEscapesHostileText(t *testing.T) {
	r := hostileRun(t)
	out := render(t, Markdown, r)
	if strings.Contains(out, "\x1b") || strings.Contains(out, "\u202e") {
		t.Error("a terminal control or bidi override is left")
	}
	var hrefs []string
	cells := 0
	for i, line := range strings.Split(out, "\n") {
		bare, ok := outsideCode(line)
		if !ok {
			t.Errorf("line %d: an unclosed code span: %s", i+1, line)
			continue
		}
		for _, m := range regexp.MustCompile(`\]\(([^)]*)\)`).FindAllStringSubmatch(bare, -1) {
			hrefs = append(hrefs, m[1])
		}
		rest := regexp.MustCompile(`\[(row \d+|open the tab)\]\([^)]*\)`).ReplaceAllString(bare, "")
		for _, bad := range []string{"javascript", "evil", "<script", "<img", "onerror", "[", "]", "![", "&lt;", "&amp;", "#heading", "www."} {
			if strings.Contains(rest, bad) {
				t.Errorf("line %d: %q outside a code span: %s", i+1, bad, bare)
			}
		}
		if strings.HasPrefix(line, "#") && !strings.HasPrefix(line, "# triage replay of ") && !strings.HasPrefix(line, "## ") {
			t.Errorf("line %d: a heading that is not the report's: %s", i+1, line)
		}
		if strings.HasPrefix(line, "|") {
			// Renderers split a row on pipes inside code spans too: count them all.
			n := strings.Count(line, "|")
			if strings.HasPrefix(line, "| Row") || strings.HasPrefix(line, "| delivered") || strings.HasPrefix(line, "| Source") {
				cells = n
			} else if n != cells {
				t.Errorf("line %d: %d pipes, the header has %d: %s", i+1, n, cells, line)
			}
		}
	}
	checkLinks(t, "Markdown", hrefs, rowsLinked(r))
}

// outsideCode removes the code spans of a line (CommonMark: a run of n backticks up to the
// next run of exactly n), keeping the rest; ok is false when a span doesn't close.
func outsideCode(line string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(line); {
		if line[i] != '`' {
			b.WriteByte(line[i])
			i++
			continue
		}
		n := 0
		for i+n < len(line) && line[i+n] == '`' {
			n++
		}
		j := i + n
		closed := false
		for j < len(line) {
			if line[j] != '`' {
				j++
				continue
			}
			m := 0
			for j+m < len(line) && line[j+m] == '`' {
				m++
			}
			if m == n {
				closed = true
				j += m
				break
			}
			j += m
		}
		if !closed {
			return b.String(), false
		}
		b.WriteString("CODE")
		i = j
	}
	return b.String(), true
}

// TestSecretsNeverAppear: neither a literal header value nor an environment one shows in a
// report or an alert, even where a destination's answer quotes it; their names do.
func TestSecretsNeverAppear(t *testing.T) {
	r := fixedRun(t)
	r.Summary.Halted.Detail += " token " + literalSecret
	var h, m bytes.Buffer
	if err := HTML(&h, r); err != nil {
		t.Fatal(err)
	}
	if err := Markdown(&m, r); err != nil {
		t.Fatal(err)
	}
	a, ok := NewAlert(r, "/tmp/r.html")
	if !ok {
		t.Fatal("a halted run has no alert")
	}
	for name, out := range map[string]string{"html": h.String(), "md": m.String(), "alert": fmt.Sprintf("%+v", a)} {
		for _, s := range []string{envSecret, literalSecret} {
			if strings.Contains(out, s) {
				t.Errorf("%s holds the secret %q", name, s)
			}
		}
		if name != "alert" && (!strings.Contains(out, "env:BILLING_TOKEN") || !strings.Contains(out, "X-Api-Key: ")) {
			t.Errorf("%s doesn't show the headers by name", name)
		}
	}
	if !strings.Contains(h.String(), "X-Api-Key: &lt;redacted&gt;") || !strings.Contains(m.String(), "X-Api-Key: <redacted>") {
		t.Error("a literal header value is not shown as <redacted>")
	}
	// The redaction holds by itself, without the scrubbing behind it.
	var hdrs []string
	for _, s := range r.Settings.Sources {
		hdrs = append(hdrs, s.Headers...)
	}
	if fmt.Sprint(hdrs) != "[Authorization: env:BILLING_TOKEN X-Api-Key: <redacted>]" {
		t.Errorf("headers %q", hdrs)
	}
}

func TestCleanRunReport(t *testing.T) {
	start := time.Date(2026, 3, 2, 4, 0, 0, 0, time.UTC)
	r := Run{Tab: "failed_calls", SheetGID: 7, SpreadsheetID: testSheet, Selected: 2, Started: start, Ended: start.Add(2 * time.Second),
		Summary: model.ReplaySummary{Rows: []model.RowResult{{ID: "a", Row: 2, State: model.StateDelivered, Attempts: 1}, {ID: "b", Row: 3, State: model.StateDuplicate, Attempts: 1}}}}
	var b bytes.Buffer
	if err := Markdown(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"every selected row done", "1.0 rows/s", "## Rows not done (0)", "Every selected row is done."} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, b.String())
		}
	}
	if _, ok := NewAlert(r, ""); ok {
		t.Error("a clean run has an alert")
	}
}

// A "Bearer <token>" secret: a destination that quotes only the token (without its scheme)
// must not put the token in the report either.
func TestBearerTokenQuotedAloneIsScrubbed(t *testing.T) {
	const token = "sk_live_51Habc"
	r := fixedRun(t)
	r.Secrets = append(r.Secrets, Secrets(&config.Config{Sources: map[string]config.SourceSection{
		"pay": {Headers: map[string]string{"Authorization": "Bearer " + token}}}}, nil)...)
	r.Summary.Rows[2].Detail = `422 from pay: {"error":"key ` + token + ` is revoked"}`
	var h, m bytes.Buffer
	if err := HTML(&h, r); err != nil {
		t.Fatal(err)
	}
	if err := Markdown(&m, r); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"html": h.String(), "md": m.String()} {
		if strings.Contains(out, token) {
			t.Errorf("%s holds the token quoted alone", name)
		}
		if !strings.Contains(out, "is revoked") {
			t.Errorf("%s lost the rest of the error", name)
		}
	}
}

// A row skipped by rule that was named on the command line (Run.Stuck: rejected, asked for
// by ID) is not done: the count, the banner and the alert say so, as the exit code 1 does.
func TestNamedStuckRowIsNotDone(t *testing.T) {
	r := fixedRun(t)
	before := r.NotDone()
	r.Stuck = []string{"k9"}
	if got := r.NotDone(); got != before+1 {
		t.Errorf("NotDone %d, want %d (k9 named and skipped)", got, before+1)
	}
	r.Summary.Halted = nil
	r.Summary.Rows, r.Summary.Refused, r.UnknownIDs, r.Summary.NotAttempted = nil, r.Summary.Refused[1:], nil, nil
	r.ExitCode = 1
	a, ok := NewAlert(r, "")
	if !ok || !strings.Contains(a.Text, "1 not done") {
		t.Errorf("alert %v %+v", ok, a)
	}
}

// render is r written by HTML or Markdown, failing the test if it can't be.
func render(t *testing.T, write func(io.Writer, Run) error, r Run) string {
	t.Helper()
	var b bytes.Buffer
	if err := write(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// A run on the database names the database (its password redacted as the CLI passes it), not
// "the sheet" or a spreadsheet it never touched.
func TestReportNamesTheDatabase(t *testing.T) {
	start := time.Date(2026, 3, 2, 4, 0, 0, 0, time.UTC)
	r := Run{Tab: "failed_calls", Store: "postgres://triage:xxxxx@db/triage", Selected: 1, Started: start, Ended: start.Add(time.Second),
		Summary: model.ReplaySummary{WriteRequests: 3, Rows: []model.RowResult{{ID: "a", Row: 2, State: model.StateDelivered, Attempts: 1}}}}
	var md, html bytes.Buffer
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if err := HTML(&html, r); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{md.String(), html.String()} {
		if strings.Contains(out, "to the sheet") || strings.Contains(out, "Spreadsheet") || !strings.Contains(out, "postgres://triage:xxxxx@db/triage") {
			t.Errorf("the report doesn't name the database:\n%s", out)
		}
	}
	if !strings.Contains(md.String(), "3 requests to `postgres://triage:xxxxx@db/triage`") || !strings.Contains(md.String(), "- Database: ") {
		t.Errorf("markdown:\n%s", md.String())
	}
	// The alert of a run that left a row not done names the database, not a spreadsheet.
	r.ExitCode = 1
	r.Summary.Rows[0].State = model.StateRetryable
	a, ok := NewAlert(r, "")
	if !ok || a.Store != "postgres://triage:xxxxx@db/triage" || a.Spreadsheet != "" ||
		!strings.HasPrefix(a.Text, "triage replay on failed_calls at postgres://triage:xxxxx@db/triage: 1 row not done") {
		t.Errorf("alert %+v", a)
	}
}
