package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/triage-dev/triage/internal/words"
)

// Markdown writes the run's report as GitHub-flavoured Markdown (readable as plain text in a
// mail too). Every text that came from the sheet, a destination or the config is a code span
// (md): inside one, a renderer makes no link, autolink, emphasis, heading or HTML out of it,
// whatever it holds. The only links are rows of the spreadsheet (Run.RowLink).
func Markdown(w io.Writer, r Run) error {
	v := r.view()
	b := bufio.NewWriter(w)
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }

	p("# triage replay of %s: %s\n\n", md(v.Tab), v.Outcome)
	p("%s to %s · %s · %s · exit code %d · %d selected, %d not done", v.Started, v.Ended, v.Duration, v.Rate, v.ExitCode, v.Selected, v.NotDoneCount)
	if v.TabLink != "" {
		p(" · [open the tab](%s)", v.TabLink)
	}
	p("\n\n")
	switch {
	case v.Halted:
		p("> **HALTED** (%s, source %s): %s\n>\n", md(v.Halt.Cause), md(v.Halt.Source), md(v.Halt.Detail))
		p("> Nothing new was sent after the halt; %s not attempted. Fix the cause, then run the same command again: every row keeps its key, so nothing is applied twice.\n\n", words.Count(v.NotAttempted, "row", "rows"))
	case v.Cancelled:
		p("> **Interrupted:** requests in flight finished and were written back; %s not attempted. Run the same command again to continue.\n\n", words.Count(v.NotAttempted, "row", "rows"))
	case v.NotDoneCount > 0:
		p("> **%s not done.** Each is listed below with a link to its row.\n\n", words.Count(v.NotDoneCount, "row", "rows"))
	case v.ExitCode != 0:
		p("> **No row is left not done, but %s: the sheet does not show every outcome.** See Write-back below; replaying those rows again is harmless.\n\n", words.Count(len(v.WriteBack), "write-back problem", "write-back problems"))
	default:
		p("> **Every selected row is done.**\n\n")
	}

	// The first row of cards (outcome, duration, ...) is in the lines above; the counts make
	// one table.
	var labels, seps, nums []string
	for _, row := range v.Cards[1:] {
		for _, c := range row {
			labels = append(labels, c.Label)
			seps = append(seps, "---:")
			n := c.Value
			if c.Bad {
				n = "**" + n + "**"
			}
			nums = append(nums, n)
		}
	}
	p("| %s |\n| %s |\n| %s |\n\n", strings.Join(labels, " | "), strings.Join(seps, " | "), strings.Join(nums, " | "))

	p("## Rows not done (%d)\n\n", len(v.NotDone))
	if len(v.NotDone) == 0 {
		p("None.\n\n")
	} else {
		p("| Row | Key | Source | Status | Error or reason | Attempts |\n|---|---|---|---|---|---:|\n")
		for _, row := range v.NotDone {
			p("| %s | %s | %s | %s | %s | %d |\n", mdRow(row.Row, row.Link), mdCell(row.ID), mdCell(row.Source), row.State, mdCell(row.Error), row.Attempts)
		}
		p("\n")
	}
	refusals := func(title string, items []refusalView) {
		if len(items) == 0 {
			return
		}
		p("## %s (%d)\n\n| Row | Key | Reason |\n|---|---|---|\n", title, len(items))
		for _, x := range items {
			p("| %s | %s | %s |\n", mdRow(x.Row, x.Link), mdCell(x.ID), mdCell(x.Reason))
		}
		p("\n")
	}
	refusals("Skipped by rule (nothing wrong)", v.Skipped)
	store := v.Store
	if store != "the sheet" {
		store = md(store)
	}
	p("## Write-back\n\n%s to %s; %s.\n\n", words.Count(v.WriteRequests, "request", "requests"), store, words.Count(len(v.WriteBack), "problem", "problems"))
	for _, x := range v.WriteBack {
		p("- %s\n", md(x))
	}
	if len(v.WriteBack) > 0 {
		p("\n")
	}

	s := v.Settings
	p("## Configuration\n\n")
	if v.Store == "the sheet" {
		p("- Spreadsheet: %s\n", md(v.Spreadsheet))
	} else {
		p("- Database: %s\n", md(v.Store))
	}
	p("- Tab: %s\n- Selection: %s\n", md(v.Tab), md(s.Selection))
	if s.SourceFilter != "" {
		p("- Source filter: %s\n", md(s.SourceFilter))
	} else {
		p("- Source filter: every source\n")
	}
	force := "no"
	if s.Force {
		force = "yes"
	}
	p("- Concurrency: %s\n- Force (past key_ttl): %s\n\n", s.Concurrency, force)
	if len(s.Sources) == 0 {
		p("No sources are configured.\n\n")
	} else {
		p("| Source | Preset | url_prefixes | Headers (secrets redacted) | Limits |\n|---|---|---|---|---|\n")
		for _, src := range s.Sources {
			var pre []string
			for _, x := range src.URLPrefixes {
				pre = append(pre, mdCell(x))
			}
			if len(pre) == 0 {
				pre = append(pre, "none: its rows are refused")
			}
			for _, x := range src.RedirectPrefixes {
				pre = append(pre, "redirect: "+mdCell(x))
			}
			hdr := []string{"none"}
			if len(src.Headers) > 0 {
				hdr = hdr[:0]
				for _, h := range src.Headers {
					hdr = append(hdr, mdCell(h))
				}
			}
			p("| %s | %s | %s | %s | rate %s, attempts %s, timeout %s |\n", mdCell(src.Name), mdCell(src.Preset),
				strings.Join(pre, "<br>"), strings.Join(hdr, "<br>"), src.Rate, src.Attempts, mdCell(src.Timeout))
		}
		p("\n")
	}
	p("---\nExit codes: 0 every selected row done; 1 some rows not done; 3 the run halted. Written by triage replay; cell text is shown as code, never as a link.\n")
	if err := b.Flush(); err != nil {
		return fmt.Errorf("write the Markdown report: %w", err)
	}
	return nil
}

// md renders text as an inline code span, whose content a Markdown renderer shows as it is:
// the fence is one backtick longer than the longest run inside, and a space pads content that
// starts or ends with a backtick (CommonMark strips one such space each side). Empty text is
// an en dash. The text is one line already (Run.text).
func md(s string) string {
	if s == "" {
		return "–"
	}
	longest, run := 0, 0
	for _, c := range s {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || strings.HasPrefix(s, " ") && strings.HasSuffix(s, " ") {
		s = " " + s + " "
	}
	return fence + s + fence
}

// mdCell is md for a table cell. A table row is split on its pipes before inlines (code
// spans included) are parsed, and renderers disagree on which backslashes escape a pipe
// ("\\|"), so a cell that could end early would let the rest of its text out of the code span
// as Markdown. Each | becomes ¦ instead: no renderer splits on that.
func mdCell(s string) string {
	return md(strings.ReplaceAll(s, "|", "¦"))
}

// mdRow is a row number, linked to the row when there is a link.
func mdRow(row int, link string) string {
	if link == "" {
		if row <= 0 {
			return "–"
		}
		return fmt.Sprintf("row %d", row)
	}
	return fmt.Sprintf("[row %d](%s)", row, link)
}
