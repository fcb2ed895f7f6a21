// Drawing the replay: the halt banner, the progress view's head, the row list and the report.

package tui

import (
	"fmt"
	"github.com/charmbracelet/x/ansi"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/triage-dev/triage/internal/words"
	"github.com/triage-dev/triage/model"
)

// haltLine is the banner text of a halt.
func haltLine(h *model.Halt) string {
	s := "!! HALTED: " + strings.TrimSpace(h.Cause)
	switch {
	case strings.TrimSpace(h.Detail) != "":
		s += " — " + strings.TrimSpace(h.Detail)
	case h.Source != "":
		s += " — source " + h.Source
	}
	return s
}

// smallNotes is what a terminal too small for the layout still says of the replay: its
// progress and the halt (renderTooSmall).
func (s *replayState) smallNotes() []string {
	var notes []string
	if s.running() {
		notes = append(notes, fmt.Sprintf("replaying %d/%d", s.run.prog.Done, s.run.prog.Total))
	}
	if s.halt != nil {
		notes = append(notes, model.SanitizeLine(haltLine(s.halt)))
	}
	return notes
}

// bannerMaxLines is how many lines the halt banner may take; past them it is cut.
const bannerMaxLines = 3

// bannerShown reports whether the halt banner is up on the tab named active: it belongs to
// the run that halted, shown on that run's tab and over a progress view, until dismissed or
// another run starts.
func (s *replayState) bannerShown(active string) bool {
	return s.halt != nil && (s.haltTab == "" || strings.EqualFold(s.haltTab, active) || s.showRun)
}

// bannerLines is the halt banner: loud, above the body, until esc dismisses it. It wraps over
// as many lines as its text needs (up to bannerMaxLines), each one in the loud style, so the
// cause and the fix are never cut at 80 columns.
func (s *replayState) bannerLines(w int, active string) []string {
	if !s.bannerShown(active) {
		return nil
	}
	st := s.c.styles
	text := model.SanitizeLine(haltLine(s.halt))
	lines := wrapText(text, w-2)
	if k := firstKey(s.c.keys.Clear); k != "" {
		// The dismiss hint, if it fits without taking another line.
		if withHint := wrapText(text+"  ("+k+" dismisses)", w-2); len(withHint) <= max(1, len(lines)) && len(withHint) <= bannerMaxLines {
			lines = withHint
		}
	}
	if len(lines) > bannerMaxLines {
		lines = lines[:bannerMaxLines]
		lines[bannerMaxLines-1] = truncate(lines[bannerMaxLines-1]+" …", w-2)
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		l = fit(" "+l, w)
		if st.NoColor {
			out[i] = l
		} else {
			out[i] = st.HaltBanner.Render(l)
		}
	}
	return out
}

// headLines is the fixed top of the progress view: title, bar, counts, rate.
func (r *replayRun) headLines(c *common, spin busySpinner, w int) []string {
	st := c.styles
	now := c.now()
	end := now
	if r.finished && !r.ended.IsZero() {
		end = r.ended
	}
	elapsed := end.Sub(r.started)
	var title string
	by := ""
	if r.cancelledBy != "" {
		by = " by " + cellLine(r.cancelledBy)
	}
	switch {
	case r.finished && runOutcomeWord(r) == "cancelled":
		title = fmt.Sprintf("Replay cancelled%s · %d/%d %s", by, r.prog.Done, r.prog.Total, words.Plural(r.prog.Total, "call", "calls"))
	case r.finished:
		title = fmt.Sprintf("Replay %s · %d/%d %s", runOutcomeWord(r), r.prog.Done, r.prog.Total, words.Plural(r.prog.Total, "call", "calls"))
	case r.cancelling:
		title = fmt.Sprintf("Cancelling%s… %d/%d %s · calls in flight finish, nothing new starts", by, r.prog.Done, r.prog.Total, words.Plural(r.prog.Total, "call", "calls"))
	default:
		title = fmt.Sprintf("Replaying %d %s to %s", r.prog.Total, words.Plural(r.prog.Total, "call", "calls"), cellLine(strings.Join(r.sources, ", ")))
	}
	title = r.watchTitle() + title
	if !r.finished {
		title = " " + spin.view(c) + " " + title
	} else {
		title = " " + title
	}
	lines := []string{fitStyled(st.paint(st.Section, title), w)}

	pct := 0
	if r.prog.Total > 0 {
		pct = r.prog.Done * 100 / r.prog.Total
	}
	bar := " " + progressBar(r.prog.Done, r.prog.Total, max(10, min(50, w-20))) + " " + fmt.Sprintf("%d/%d %d%%", r.prog.Done, r.prog.Total, pct)
	lines = append(lines, fit(bar, w))

	lines = append(lines, fitStyled(" "+c.paintCounts(r.prog.Counts), w))

	// Before a second has passed there is no rate to speak of: say nothing rather than
	// draw placeholders ("– calls/s", which TERM=dumb turned into "- - rows/s").
	rate, eta := "", ""
	if secs := elapsed.Seconds(); secs >= 1 && r.prog.Done > 0 {
		rps := float64(r.prog.Done) / secs
		rate = fmt.Sprintf("%.1f calls/s", rps)
		if left := r.prog.Total - r.prog.Done; left > 0 {
			eta = "ETA " + time.Duration(float64(left)/rps*float64(time.Second)).Round(time.Second).String()
		}
	}
	if r.finished {
		eta = "ended"
	}
	stats := " elapsed " + elapsed.Round(time.Second).String()
	for _, s := range []string{rate, eta} {
		if s != "" {
			stats += " · " + s
		}
	}
	lines = append(lines, fit(stats, w))
	return lines
}

// paintCounts renders the live per-state counts, each colored by meaning.
func (c *common) paintCounts(states map[model.RowState]int) string {
	st := c.styles
	var parts []string
	for _, s := range stateOrder {
		if states[s] > 0 {
			parts = append(parts, st.paint(c.stateStyle(s), fmt.Sprintf("%d %s", states[s], s)))
		}
	}
	if len(parts) == 0 {
		return "nothing to send"
	}
	return strings.Join(parts, st.paint(st.Muted, " · "))
}

func (c *common) stateStyle(s model.RowState) lipgloss.Style {
	st := c.styles
	switch s {
	case model.StateDelivered, model.StateDuplicate:
		return st.RunOK
	case model.StateRejected, model.StateSystemic:
		return st.RunBad
	case model.StateRetryable, model.StateDeferred, model.StateRefused, model.StateNotAttempted:
		return st.RunWarn
	case model.StateSending:
		return st.RunActive
	}
	return st.Muted
}

// reportLines is the end-of-run report: what wasn't done and why.
func (r *replayRun) reportLines(c *common, w int) []string {
	st := c.styles
	rep := r.report
	var lines []string
	add := func(style lipgloss.Style, s string) {
		for _, l := range wrapText(model.SanitizeLine(s), w-2) {
			lines = append(lines, " "+st.paint(style, l))
		}
	}
	if r.prog.Halt != nil {
		add(st.RunBad, "Halted (see the banner): nothing new was sent after it; fix the cause, then replay again, which is harmless for rows already delivered.")
	}
	if rep.Cancelled && r.cancelledBy != "" {
		add(st.RunWarn, "Cancelled by "+r.cancelledBy+": rows not sent stay as they were.")
	} else if rep.Cancelled {
		add(st.RunWarn, "Cancelled: rows not sent stay as they were.")
	}
	if n := len(rep.NotAttempted); n > 0 {
		add(st.RunWarn, fmt.Sprintf("Not attempted (%d): %s", n, listSome(shortIDs(rep.NotAttempted), 5)))
	}
	for _, g := range rep.Held {
		add(st.RunWarn, model.SanitizeLine(g.String())+": another run is sending them.")
	}
	var refused []string
	for _, x := range rep.Refused {
		if !x.Skipped {
			refused = append(refused, x.Reason)
		}
	}
	if n := len(refused); n > 0 {
		add(st.RunWarn, fmt.Sprintf("Refused (%d): %s", n, listSome(refused, 3)))
	}
	if n := len(rep.WriteErrors); n > 0 {
		add(st.RunBad, fmt.Sprintf("Write-back errors (%d; replaying again is harmless): %s", n, listSome(rep.WriteErrors, 2)))
	}
	if n := len(rep.WriteConflicts); n > 0 {
		conflicts := make([]string, n)
		for i, c := range rep.WriteConflicts {
			conflicts[i] = c.String()
		}
		add(st.RunBad, fmt.Sprintf("Write-back conflicts (%d; the sheet changed meanwhile): %s", n, listSome(conflicts, 2)))
	}
	if len(lines) == 0 {
		add(st.RunOK, "Every planned row got an answer and it was written back.")
	}
	return lines
}

func shortIDs(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = shortID(id)
	}
	return out
}

// lines renders run r's progress view (one's own, or a watched one: watch.go) as exactly h
// lines of w cells, and keeps the height of its row list (listH) for the scroll keys.
func (r *replayRun) lines(c *common, spin busySpinner, w, h int) []string {
	st := c.styles
	lines := r.headLines(c, spin, w)
	if r.finished {
		lines = append(lines, "")
		lines = append(lines, r.reportLines(c, w)...)
	}
	lines = append(lines, "")
	idW := 16
	srcW := 10
	head := fmt.Sprintf("   %-13s %5s %-*s %-*s %5s  %s", "STATE", "ROW", idW, "ID", srcW, "SOURCE", "TRIES", "DETAIL")
	lines = append(lines, st.paint(st.TableHeader, fit(head, w)))
	lh := max(1, h-len(lines))
	r.listH = lh
	if r.follow {
		first := len(r.prog.Rows)
		for i, row := range r.prog.Rows {
			if !row.State.Final() {
				first = i
				break
			}
		}
		r.offset = max(0, min(first-1, len(r.prog.Rows)-lh))
	}
	r.offset = max(0, min(r.offset, len(r.prog.Rows)-lh))
	for i := r.offset; i < len(r.prog.Rows) && i < r.offset+lh; i++ {
		row := r.prog.Rows[i]
		state := fit(cellLine(string(row.State)), 13)
		if !st.NoColor {
			state = c.stateStyle(row.State).Render(state)
		}
		tries := ""
		if row.Attempts > 0 {
			tries = itoa(row.Attempts)
		}
		detail := row.Detail
		if detail == "" && row.State == model.StateQueued {
			detail = row.URL
		}
		sheetRow := ""
		if row.Row > 0 {
			sheetRow = itoa(row.Row)
		}
		lead := "   "
		if r.moved && i == r.cursor && st.NoColor {
			lead = " > "
		}
		line := lead + state + " " + fitRight(sheetRow, 5) + " " + fit(cellLine(row.ID), idW) + " " + fit(cellLine(row.Source), srcW) + " " + fitRight(tries, 5) + "  " + cellLine(detail)
		if r.moved && i == r.cursor && !st.NoColor {
			line = st.CursorRow.Render(fit(ansi.Strip(line), w))
		}
		lines = append(lines, fitStyled(line, w))
	}
	return padLines(lines, w, h)
}
