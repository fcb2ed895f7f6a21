package report

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/triage-dev/triage/model"
)

// notDoneCases are runs whose counts used to disagree between the parts of a report (issue
// 16), each with how many rows are not done.
func notDoneCases(t *testing.T) map[string]struct {
	run  Run
	want int
} {
	fixed := fixedRun(t)

	// A row refused while sending is both in Summary.Rows (state refused) and in
	// Summary.Refused: the card said 8, the section "Rows not done (7)".
	sendRefused := fixedRun(t)
	sendRefused.Selected++
	sendRefused.Summary.Rows = append(sendRefused.Summary.Rows, model.RowResult{ID: "k10", Row: 10, Source: "crm", Key: "k10",
		State: model.StateRefused, Detail: "the CRM_TOKEN secret holds a control character"})
	sendRefused.Summary.Refused = append(sendRefused.Summary.Refused, model.Refusal{ID: "k10", Row: 10,
		Reason: "row 10: the CRM_TOKEN secret holds a control character"})

	// `replay --source crm k2 b7`: b7's row is billing's, so it is excluded; k2 is delivered.
	// The Markdown said "1 row not done", then "Rows not done (0)" and "None.".
	excluded := Run{Tab: "failed_calls", SheetGID: testGID, SpreadsheetID: testSheet, Selected: 2, ExitCode: 1,
		Summary:  model.ReplaySummary{Rows: []model.RowResult{{ID: "k2", Row: 2, Source: "crm", State: model.StateDelivered, Attempts: 1}}},
		Excluded: []model.Refusal{{ID: "b7", Row: 7, Reason: "row 7 is of source billing, not crm"}},
		Settings: Settings{IDs: []string{"k2", "b7"}, SourceFilter: "crm"}}

	// A rejected row named by ID: skipped by rule, yet not done.
	stuck := fixedRun(t)
	stuck.Stuck = []string{"k9"}

	// Only an unknown ID, and a row a cancelled run left queued.
	unknown := Run{Tab: "failed_calls", Selected: 2, ExitCode: 1, UnknownIDs: []string{"nope"},
		Summary: model.ReplaySummary{Cancelled: true, Rows: []model.RowResult{{ID: "q1", Row: 3, State: model.StateQueued}}}}

	return map[string]struct {
		run  Run
		want int
	}{
		"fixed":         {fixed, 6},
		"send-refused":  {sendRefused, 7},
		"excluded":      {excluded, 1},
		"stuck":         {stuck, 7},
		"unknown+queue": {unknown, 2},
		// Delivered, but its outcome was not written back: not done, as the exit code says.
		"unwritten": {Run{Tab: "failed_calls", Selected: 2, ExitCode: 1, Summary: model.ReplaySummary{Rows: []model.RowResult{
			{ID: "w1", Row: 4, State: model.StateDelivered, Attempts: 1, WriteBack: "the write-back failed: 503"},
			{ID: "w2", Row: 5, State: model.StateDelivered, Attempts: 1}}}}, 1},
		// `replay --all --limit 1`: one row delivered, two left for the next run (exit 1).
		"left-out": {Run{Tab: "failed_calls", Selected: 3, ExitCode: 1, Summary: model.ReplaySummary{
			Rows: []model.RowResult{{ID: "l1", Row: 2, Source: "crm", State: model.StateDelivered, Attempts: 1}},
			LeftOut: []model.Refusal{{ID: "l2", Row: 3, Reason: "row 3: left out by the limit of 1 row"},
				{ID: "l3", Row: 4, Reason: "row 4: left out by the limit of 1 row"}}}}, 2},
		// k4-k7 and k8, then per hostile text: an unknown ID, a rejected row, an excluded
		// one, and every other one refused (the rest skipped).
		"hostile": {hostileRun(t), 5 + 3*len(hostile) + len(hostile)/2},
	}
}

var (
	htmlNotDoneCard  = regexp.MustCompile(`<div style="font-size:22px;[^"]*">(\d+)</div>\s*<div style="font-size:12px;color:#57606a">not done</div>`)
	htmlNotDoneTitle = regexp.MustCompile(`Rows not done \((\d+)\)`)
	htmlSummaryLine  = regexp.MustCompile(`(\d+) selected, (\d+) not done`)
	htmlBanner       = regexp.MustCompile(`<strong>(\d+) rows? not done\.</strong>`)
	mdBanner         = regexp.MustCompile(`> \*\*(\d+) rows? not done\.\*\*`)
	alertNotDone     = regexp.MustCompile(`(\d+) delivered, (\d+) not done(?: \(([^)]*)\))?`)
)

// TestNotDoneAgreesEverywhere: the stat card, the summary line, the banner, the section's
// title, the section's rows, the Markdown and the alert all count the same rows not done, and
// the alert's breakdown (the red cards) adds up to it.
func TestNotDoneAgreesEverywhere(t *testing.T) {
	for name, c := range notDoneCases(t) {
		t.Run(name, func(t *testing.T) {
			r := c.run
			if got := r.NotDone(); got != c.want {
				t.Errorf("NotDone() = %d, want %d", got, c.want)
			}
			want := strconv.Itoa(c.want)

			out := render(t, HTML, r)
			if m := htmlNotDoneCard.FindStringSubmatch(out); m == nil || m[1] != want {
				t.Errorf("HTML card %v, want %s", m, want)
			}
			if m := htmlSummaryLine.FindStringSubmatch(out); m == nil || m[2] != want {
				t.Errorf("HTML summary line %v, want %s not done", m, want)
			}
			if m := htmlNotDoneTitle.FindStringSubmatch(out); m == nil || m[1] != want {
				t.Errorf("HTML section title %v, want %s", m, want)
			}
			if got := htmlSectionRows(out); got != c.want {
				t.Errorf("HTML section lists %d rows, want %d", got, c.want)
			}
			if m := htmlBanner.FindStringSubmatch(out); m != nil && m[1] != want {
				t.Errorf("HTML banner %q, want %s", m[0], want)
			}

			mout := render(t, Markdown, r)
			if m := htmlSummaryLine.FindStringSubmatch(mout); m == nil || m[2] != want {
				t.Errorf("Markdown summary line %v, want %s not done", m, want)
			}
			if !strings.Contains(mout, "## Rows not done ("+want+")\n") {
				t.Errorf("Markdown lacks \"## Rows not done (%s)\"", want)
			}
			if got := mdSectionRows(mout); got != c.want {
				t.Errorf("Markdown section lists %d rows, want %d:\n%s", got, c.want, mout)
			}
			if m := mdBanner.FindStringSubmatch(mout); m != nil && m[1] != want {
				t.Errorf("Markdown banner %q, want %s", m[0], want)
			}
			if c.want > 0 && strings.Contains(mout, "None.") {
				t.Errorf("Markdown says None. with %d rows not done", c.want)
			}
			if got := mdCountsNotDone(t, mout); got != c.want {
				t.Errorf("Markdown's red counts add up to %d, want %d", got, c.want)
			}

			a, ok := NewAlert(r, "")
			if !ok {
				t.Fatal("no alert")
			}
			m := alertNotDone.FindStringSubmatch(a.Text)
			if a.NotDone != c.want || m == nil || m[2] != want {
				t.Fatalf("alert not_done %d, text %q, want %s", a.NotDone, a.Text, want)
			}
			sum := 0
			for _, part := range strings.Split(m[3], ", ") {
				if n, _, ok := strings.Cut(part, " "); ok {
					k, _ := strconv.Atoi(n)
					sum += k
				}
			}
			if sum != c.want {
				t.Errorf("the alert's breakdown %q adds up to %d, want %d", m[3], sum, c.want)
			}
		})
	}
}

// htmlSectionRows counts the rows of the "Rows not done" table.
func htmlSectionRows(out string) int {
	i := strings.Index(out, "Rows not done (")
	if i < 0 {
		return -1
	}
	sec := out[i:]
	if j := strings.Index(sec, "<h2"); j >= 0 {
		sec = sec[:j]
	}
	return strings.Count(sec, `<tr style="vertical-align:top">`)
}

// mdSectionRows counts the rows of the Markdown "Rows not done" table.
func mdSectionRows(out string) int {
	i := strings.Index(out, "## Rows not done (")
	if i < 0 {
		return -1
	}
	sec := out[i+3:]
	if j := strings.Index(sec, "\n## "); j >= 0 {
		sec = sec[:j]
	}
	n := 0
	for _, line := range strings.Split(sec, "\n") {
		if strings.HasPrefix(line, "| ") && !strings.HasPrefix(line, "| Row ") {
			n++
		}
	}
	return n
}

// mdCountsNotDone adds the bold (not done) numbers of the Markdown's counts table.
func mdCountsNotDone(t *testing.T, out string) int {
	t.Helper()
	lines := strings.Split(out, "\n")
	for i, line := range lines {
		if strings.HasPrefix(line, "| delivered |") && i+2 < len(lines) {
			sum := 0
			for _, cell := range strings.Split(strings.Trim(lines[i+2], "| "), " | ") {
				if n, ok := strings.CutPrefix(cell, "**"); ok {
					k, err := strconv.Atoi(strings.TrimSuffix(n, "**"))
					if err != nil {
						t.Fatalf("a count %q", cell)
					}
					sum += k
				}
			}
			return sum
		}
	}
	t.Fatal("no counts table")
	return 0
}

// TestKeyCellsNeverBreakAKey: every cell that shows a key keeps it on one line (the column
// grows instead), in the not-done table and the skipped one; nothing lets a browser break it
// between any two characters.
func TestKeyCellsNeverBreakAKey(t *testing.T) {
	r := fixedRun(t)
	long := "crm-evt-2041-" + strings.Repeat("abcdefgh", 6)
	r.Summary.Rows[3].ID = long
	r.Summary.Refused[1].ID = long + "-skipped"
	out := render(t, HTML, r)
	cell := regexp.MustCompile(`<td style="([^"]*)">` + regexp.QuoteMeta(long) + `(-skipped)?</td>`)
	ms := cell.FindAllStringSubmatch(out, -1)
	if len(ms) != 2 {
		t.Fatalf("%d key cells hold the long key, want 2", len(ms))
	}
	for _, m := range ms {
		style := m[1]
		if !strings.Contains(style, "white-space:nowrap") {
			t.Errorf("a key cell can wrap: style %q", style)
		}
		for _, bad := range []string{"break-all", "break-word", "anywhere"} {
			if strings.Contains(style, bad) {
				t.Errorf("a key cell breaks words (%s): style %q", bad, style)
			}
		}
	}
	// In Markdown a key is one code span.
	md := render(t, Markdown, r)
	if !strings.Contains(md, fmt.Sprintf("| `%s` |", long)) {
		t.Error("the Markdown doesn't show the key as one code span")
	}
}

// A run whose only problem is its write-back (exit 1, every row done) says so, and not
// "0 rows not done".
func TestWriteBackOnlyBanner(t *testing.T) {
	r := Run{Tab: "failed_calls", Selected: 1, ExitCode: 1,
		Summary: model.ReplaySummary{Rows: []model.RowResult{{ID: "a", Row: 2, State: model.StateDelivered, Attempts: 1}},
			WriteErrors: []string{"row 2: the row is gone"}}}
	var h, md bytes.Buffer
	if err := HTML(&h, r); err != nil {
		t.Fatal(err)
	}
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	a, _ := NewAlert(r, "")
	for name, out := range map[string]string{"html": h.String(), "md": md.String(), "alert": a.Text} {
		if strings.Contains(out, "0 rows not done") {
			t.Errorf("%s says 0 rows not done", name)
		}
		if !strings.Contains(out, "1 write-back problem") {
			t.Errorf("%s doesn't name the write-back problem:\n%s", name, out)
		}
	}
}
