package tui

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/triage-dev/triage/internal/words"
	"github.com/triage-dev/triage/model"
)

// asciiChrome turns the UI's own glyphs into ASCII for TERM=dumb. Each replacement is one cell
// wide, like the glyph it replaces, so the layout doesn't move. It runs over the whole
// screen, so the same few glyphs inside sheet text become ASCII too; the rest of the sheet's
// text is shown as it is (sanitised like everywhere else).
var asciiChrome = strings.NewReplacer(
	"…", "~", "·", "-", "│", "|", "─", "-", "━", "-", "●", "*", "✗", "x",
	"→", ">", "←", "<", "↑", "^", "↓", "v", "▲", "^", "▼", "v", "█", "#", "░", ".", "—", "-", "–", "-", "×", "x",
)

// View draws the screen. It is the only place terminal modes are set (alt screen, window
// title, the cursor for the filter prompt, the mouse). The mouse stays off unless
// Options.Mouse: with it on, tmux and terminals stop letting the user select text, and most
// terminals turn the wheel into arrow keys in the alternate screen anyway. Under TERM=dumb
// there is no window title and the UI's own glyphs are ASCII.
func (m *Model) View() tea.View {
	content := m.render()
	if m.c.ascii {
		content = asciiChrome.Replace(content)
	}
	v := tea.NewView(content)
	v.AltScreen = true
	if !m.c.term.dumb() {
		v.WindowTitle = "triage"
		if m.book.title != "" {
			v.WindowTitle = "triage · " + truncate(cellLine(m.book.title), 60)
		}
	}
	if m.opts.Mouse {
		v.MouseMode = tea.MouseModeCellMotion
	}
	if m.cmd.open && m.usable() && !m.help.open && m.dialog == nil && !m.replay.showRun {
		_, x := m.cmd.input.View(max(1, m.c.width-filterPromptWidth-1))
		v.Cursor = tea.NewCursor(filterPromptWidth+x, m.c.height-1)
		v.Cursor.Shape = tea.CursorBar
		v.Cursor.Blink = false
	} else if m.prompt.open && m.usable() && !m.help.open && m.dialog == nil && !m.replay.showRun {
		_, x := m.prompt.input.View(m.prompt.inputWidth())
		v.Cursor = tea.NewCursor(filterPromptWidth+x, m.c.height-1)
		v.Cursor.Shape = tea.CursorBar
		v.Cursor.Blink = false
	}
	return v
}

// usable reports whether the normal layout is drawn (data loaded, terminal big enough).
func (m *Model) usable() bool {
	return m.load.hasData && m.c.width >= minWidth && m.c.height >= minHeight
}

// render draws the frame: the too-small or start screen, the help, else the header (title line,
// tab bar, halt banner), the body of whatever is open (a run, the group view, the detail view,
// the table) with a dialog over it, and the footer. Each part is drawn by its component.
func (m *Model) render() string {
	w, h := m.c.width, m.c.height
	if w < minWidth || h < minHeight {
		notes := m.replay.smallNotes()
		if open := m.hiddenOpen(); open != "" {
			notes = append([]string{open + " is open · " + firstKey(m.c.keys.Back) + " closes it"}, notes...)
		}
		return renderTooSmall(m.c, notes, w, h)
	}
	if !m.load.hasData {
		return m.load.renderStart(m.c, m.spinner, m.opts.SpreadsheetID, w, h)
	}
	if m.help.open {
		groups, title := m.tabs.help(m.c, m.detail)
		lines, _ := m.help.fullHelp(groups, title, w, h-1)
		lines = append(lines, m.help.shortLine(m.ShortHelp(), w))
		return strings.Join(lines, "\n")
	}
	lines := make([]string, 0, h)
	right := connState(m.c, m.spinner, cmp.Or(m.replay.activity(m.c, m.spinner), m.writes.activity(m.c, m.spinner)), m.load.loading,
		m.load.err != nil || m.writes.lastErr != nil, m.load.at)
	lines = append(lines, m.book.headerLines(m.c, &m.tabs, m.opts.SpreadsheetID, right, w)...)
	if m.detail == nil && !m.replay.showRun && m.groups == nil {
		lines = append(lines, m.tabs.viewBarLines(m.c, w)...)
	}
	lines = append(lines, m.replay.bannerLines(w, m.tabs.activeName())...)
	var body []string
	switch {
	case m.compose != nil:
		body = padLines(strings.Split(m.compose.View(w), "\n"), w, m.geo.bodyH)
	case m.replay.showRun && m.replay.run != nil:
		body = m.replay.run.lines(m.c, m.spinner, w, m.geo.bodyH)
	case m.watch.watching():
		body = m.watch.run.lines(m.c, m.spinner, w, m.geo.bodyH)
	case m.groups != nil:
		body = m.groups.lines(w, m.geo.bodyH)
	case m.detail != nil:
		body = padLines(strings.Split(m.detail.View(), "\n"), w, m.geo.bodyH)
	default:
		body = m.tabs.bodyLines(m.c, &m.preview, m.geo, m.load.dataGen, w, m.geo.bodyH)
	}
	if m.dialog != nil {
		reset := ansi.ResetStyle
		if m.c.styles.NoColor {
			reset = ""
		}
		body = overlay(body, m.dialog.View(), w, reset)
	}
	lines = append(lines, body...)
	lines = append(lines, m.footerLines(w)...)
	return strings.Join(lines, "\n")
}

// renderTooSmall is the whole screen when the terminal is below minWidth x minHeight: what is
// needed, what there is, and the way out, centered, then the notes (replayState.smallNotes);
// never a broken layout.
func renderTooSmall(c *common, notes []string, w, h int) string {
	st := c.styles
	w, h = max(1, w), max(1, h)
	var lines []string
	way := "enlarge the window"
	if q := firstKey(c.keys.Quit); q != "" {
		way += " · " + q + " quits"
	}
	for _, s := range []string{"terminal too small", fmt.Sprintf("need %dx%d, have %dx%d", minWidth, minHeight, w, h), way} {
		lines = append(lines, wrapText(s, w)...)
	}
	for _, n := range notes {
		lines = append(lines, wrapText(n, w)...)
	}
	if len(lines) > h {
		lines = lines[:h]
	}
	top := (h - len(lines)) / 2
	out := make([]string, 0, h)
	for i := 0; i < top; i++ {
		out = append(out, "")
	}
	for i, l := range lines {
		pad := max(0, (w-textWidth(l))/2)
		l = strings.Repeat(" ", pad) + l
		if i == 0 {
			l = strings.Repeat(" ", pad) + st.paint(st.ConnErr, strings.TrimLeft(l, " "))
		}
		out = append(out, l)
	}
	return strings.Join(padLines(out, w, h), "\n")
}

// renderStart is the screen before the first successful load: loading, or the error with
// what to do about it.
func (ld loadState) renderStart(c *common, spin busySpinner, id string, w, h int) string {
	st := c.styles
	name := id
	if name == "" {
		name = "the spreadsheet"
	}
	lines := []string{fitStyled(st.paint(st.Title, " triage")+st.paint(st.Muted, " · "+truncate(cellLine(name), w-12)), w), ""}
	if ld.loading || ld.err == nil {
		lines = append(lines, "  "+spin.view(c)+" loading "+truncate(cellLine(name), w-14)+"…")
		lines = append(lines, ld.startLines(w)...)
	} else {
		lines = append(lines, "  "+st.paint(st.ConnErr, "Couldn't load the spreadsheet:"), "")
		for _, l := range wrapText(model.Sanitize(ld.err.Error()), w-4) {
			lines = append(lines, "  "+l)
		}
		var ks []string
		if r := firstKey(c.keys.Refresh); r != "" {
			ks = append(ks, st.paint(st.Bold, r)+" retry")
		}
		ks = append(ks, st.paint(st.Bold, c.keys.quitKey())+" quit")
		lines = append(lines, "", "  "+strings.Join(ks, " · "))
	}
	if len(lines) > h {
		lines = lines[:h]
	}
	return strings.Join(lines, "\n")
}

// busySpinner is the spinner of a load, a write or a run in progress.
type busySpinner struct{ spinner.Model }

// view draws the spinner's frame. The spinner's View styles its frame with its own style;
// draw the bare frame in ours.
func (s busySpinner) view(c *common) string {
	return c.styles.paint(c.styles.ConnBusy, ansi.Strip(s.View()))
}

// headerLines: title, banner, who you are, then right (mode, what is going on, when the sheet
// was read: connState); then the tab bar. Before the workbook's title is known, id stands in.
func (b bookInfo) headerLines(c *common, tabs *tabSet, id, right string, w int) []string {
	st := c.styles
	title := b.title
	if title == "" {
		title = id
	}
	r := right
	// The banner (the demo's "nothing leaves this machine") before the title: the title gives
	// way down to 8 cells, the banner to its head.
	// Who you are (`triage serve`) before RW/RO: it gives way before the title does.
	if id := c.identityText(w - ansi.StringWidth(" triage · ") - 8 - ansi.StringWidth(r) - 2); id != "" {
		r = st.paint(st.Bold, id) + st.paint(st.Muted, " · ") + r
	}
	rw := ansi.StringWidth(r)
	titleW := max(8, min(ansi.StringWidth(cellLine(title)), w/2-10))
	bn := c.bannerText(w - ansi.StringWidth(" triage · ") - titleW - rw - 2)
	if bn != "" {
		titleW = max(8, min(titleW, w-ansi.StringWidth(" triage · ")-ansi.StringWidth(bn)-rw-2))
	}
	left := st.paint(st.Title, " triage") + st.paint(st.Muted, " · ") + st.paint(st.Bold, truncate(cellLine(title), titleW))
	if bn != "" {
		left += " " + st.paint(st.Banner, bn)
	}
	return []string{spread(left, r, w), tabs.tabBar(c, w)}
}

// bannerText is the header's banner in at most room cells: whole when it fits, else only its
// head (the part before ": ", "demo"), never cut mid-word; bracketed when there is no colour to
// set it apart.
func (c *common) bannerText(room int) string {
	full := cellLine(c.banner)
	if full == "" {
		return ""
	}
	wrap := func(s string) string {
		if c.styles.NoColor {
			return "[" + s + "]"
		}
		return s
	}
	if b := wrap(full); ansi.StringWidth(b) <= room {
		return b
	}
	head, _, _ := strings.Cut(full, ": ")
	if b := wrap(head); ansi.StringWidth(b) <= max(room, 6) {
		return b
	}
	return wrap(truncate(head, max(4, room-2)))
}

// identityText is Options.Identity in at most room cells (its " · " separator included):
// whole ("alice · operator"), else its head (the name), else nothing.
func (c *common) identityText(room int) string {
	full := cellLine(c.identity)
	if full == "" {
		return ""
	}
	const sep = 3 // " · " between it and RW/RO
	if ansi.StringWidth(full)+sep <= room {
		return full
	}
	head, _, _ := strings.Cut(full, " · ")
	if ansi.StringWidth(head)+sep <= room {
		return head
	}
	return ""
}

// connState is the right side of the header: RW/RO, what is going on (busy: a replay or a
// save, from replayState.activity or writeQueue.activity), else a refresh, else the
// connection's state (failed: the last load or write didn't reach the sheet), and when the
// sheet was last read.
func connState(c *common, spin busySpinner, busy string, loading, failed bool, at time.Time) string {
	st := c.styles
	var right []string
	if c.readOnly {
		right = append(right, st.paint(st.ReadOnly, "RO"))
	} else {
		right = append(right, st.paint(st.ReadWrite, "RW"))
	}
	switch {
	case busy != "":
		// A run or a write is the news: the age of the rows comes back once it is done, and
		// the title keeps the room (a run's header at 80 columns cut it to "… de…").
		right = append(right, busy)
		return strings.Join(right, st.paint(st.Muted, " · ")) + " "
	case loading:
		right = append(right, spin.view(c)+" refreshing")
	case failed:
		right = append(right, st.paint(st.ConnErr, "✗ error"))
	default:
		right = append(right, st.paint(st.ConnOK, "● ok"))
	}
	right = append(right, st.paint(st.Muted, "refreshed "+ago(c.now(), at)))
	return strings.Join(right, st.paint(st.Muted, " · ")) + " "
}

// activity is the header's word on a run in progress ("⠋ replaying 3/10"), "" without one.
func (s *replayState) activity(c *common, spin busySpinner) string {
	if !s.running() {
		return ""
	}
	return spin.view(c) + " replaying " + itoa(s.run.prog.Done) + "/" + itoa(s.run.prog.Total)
}

// activity is the header's word on the write in flight ("⠋ saving 2 rows, then quitting"),
// "" without one.
func (q *writeQueue) activity(c *common, spin busySpinner) string {
	if !q.writing {
		return ""
	}
	n := 0
	if q.inflight != nil {
		n = len(q.inflight.edits)
	}
	saving := spin.view(c) + " saving " + itoa(n) + " " + words.Plural(n, "row", "rows")
	if q.quitAfterWrite {
		saving += ", then quitting"
	}
	return saving
}

// spread puts left and right on one line of w cells, cutting left (keeping a space between)
// if they collide.
func spread(left, right string, w int) string {
	rw := ansi.StringWidth(right)
	if rw >= w-1 {
		return fitStyled(right, w)
	}
	if ansi.StringWidth(left) >= w-rw {
		return fitStyled(left, w-rw-1) + " " + right
	}
	return fitStyled(left, w-rw) + right
}

// tabBar lists the tabs with their counts, most detailed first, less detail until it fits
// (80 columns show the active tab's counts and the first count of the others).
func (t *tabSet) tabBar(c *common, w int) string {
	return t.bar.get(fmt.Sprint(w, t.active, t.gen), func() string { return t.renderTabBar(c, w) })
}

func (t *tabSet) renderTabBar(c *common, w int) string {
	st := c.styles
	type level struct{ active, others int } // counts shown: -1 none, 0 all, n first n
	levels := []level{{0, 0}, {0, 1}, {2, 1}, {1, 1}, {1, -1}, {-1, -1}}
	var out string
	for _, lv := range levels {
		var parts []string
		for i, ts := range t.list {
			limit := lv.others
			if i == t.active {
				limit = lv.active
			}
			label := itoa(i+1) + " " + cellLine(ts.name())
			if ts.data == nil {
				label += " !"
			} else if d := ts.loadedData(); limit >= 0 {
				if c := statusCountsLine(d.table, d.counts, limit, ts.stale); c != "" {
					label += " " + c
				} else {
					label += " empty"
				}
			}
			switch {
			case i == t.active && st.NoColor:
				label = "[" + label + "]"
			case i == t.active:
				label = st.TabActive.Render(" " + label + " ")
			case ts.data == nil:
				label = " " + st.TabBroken.Render(label) + " "
			case st.NoColor:
				label = " " + label + " "
			default:
				label = " " + st.TabInactive.Render(label) + " "
			}
			parts = append(parts, label)
		}
		out = " " + strings.Join(parts, st.paint(st.Muted, "│"))
		if ansi.StringWidth(out) <= w {
			break
		}
	}
	return fitStyled(out, w)
}

// bodyLines is the table's part of the body: a broken tab's error, or the active tab's table
// with the preview pane when it is shown (geo is the parent's layout of the two).
func (t *tabSet) bodyLines(c *common, preview *previewPane, geo geometry, gen, w, h int) []string {
	st := c.styles
	ts := t.current()
	if ts == nil {
		return padLines([]string{"", st.paint(st.Muted, "  No tabs: the spreadsheet has none of the configured tabs. Run `triage init` to create them.")}, w, h)
	}
	if ts.data == nil {
		lines := []string{"", "  " + st.paint(st.ConnErr, "This tab can't be used:"), ""}
		for _, l := range wrapText(model.Sanitize(ts.err.Error()), w-4) {
			lines = append(lines, "  "+l)
		}
		return padLines(lines, w, h)
	}
	if !preview.show {
		return ts.tableLines(c, w, h)
	}
	table := ts.tableLines(c, geo.tableW, geo.tableH+1)
	if geo.previewRight {
		prev := preview.lines(c, ts, geo.previewW-2, geo.previewH-1, gen)
		sep := st.paint(st.PaneBorder, "│")
		head := st.paint(st.PaneBorder, fit(" preview", geo.previewW))
		out := make([]string, h)
		for i := 0; i < h; i++ {
			right := head
			if i > 0 {
				right = " " + prev[i-1] + " "
			}
			left := strings.Repeat(" ", geo.tableW)
			if i < len(table) {
				left = table[i]
			}
			out[i] = left + sep + right
		}
		return out
	}
	out := append([]string(nil), table...)
	out = append(out, st.paint(st.PaneBorder, "── preview "+strings.Repeat("─", max(0, w-11))))
	for _, l := range preview.lines(c, ts, geo.previewW-2, geo.previewH, gen) {
		out = append(out, " "+l+" ")
	}
	return padLines(out, w, h)
}

// filterPromptWidth is the width of the "/ " before the filter text.
const filterPromptWidth = 3

// inputWidth is the room for the filter text after the prompt.
func (p filterPrompt) inputWidth() int { return max(1, p.c.width-filterPromptWidth-1) }

// footerLines: toasts, the status bar (position, filter, marks, hints), the filter's note,
// then the filter prompt while typing, else the key hints. relayout sizes the body by it.
func (m *Model) footerLines(w int) []string {
	lines := m.toasts.lines(m.c, w, m.c.height)
	left := ""
	if m.groups != nil {
		// The group view's own place: the table's row counter would say nothing here.
		left = m.groups.position()
	} else {
		left = m.tabs.position(m.c, m.prompt.open)
	}
	hint := ""
	if m.replay.running() && !m.replay.showRun {
		// The replay goes on behind the table: its progress, and how to see or stop it.
		hint = m.replay.statusLine()
	} else if !m.replay.running() && !m.watch.watching() {
		hint = m.watch.statusLine(firstKey(m.c.keys.Progress)) // another person's run (watch.go)
	}
	if hint == "" {
		hint = m.load.progressLine() // a refresh reading a long tab (loadprogress.go)
	}
	lines = append(lines, m.tabs.statusBar(m.c, left, hint, w))
	lines = append(lines, m.tabs.filterNoteLines(m.c, w, m.help.open || m.detail != nil || m.replay.showRun)...)
	if m.cmd.open {
		return append(lines, m.cmd.line(w))
	}
	if m.prompt.open {
		return append(lines, m.prompt.line(m.tabs.filterPlaceholder(), w))
	}
	return append(lines, m.help.shortLine(m.ShortHelp(), w))
}

// line is the prompt's line in the footer: the text typed, else the placeholder.
func (p filterPrompt) line(placeholder string, w int) string {
	st := p.c.styles
	text, _ := p.input.View(p.inputWidth())
	if text == "" {
		text = st.paint(st.Muted, placeholder)
	}
	return fitStyled(" "+st.paint(st.FilterPrompt, "/")+" "+text, w)
}

// position is the status bar's left side on the table: where the cursor is, the filter (when
// the prompt isn't showing it), the marks; a broken tab says so.
func (t *tabSet) position(c *common, promptOpen bool) string {
	st := c.styles
	ts := t.current()
	if ts == nil {
		return ""
	}
	if ts.data == nil {
		return st.paint(st.TabBroken, "tab can't be used: see above")
	}
	total := len(ts.data.table.Records)
	pos := "0/0"
	if len(ts.visible) > 0 {
		pos = itoa(ts.cursor+1) + "/" + itoa(len(ts.visible))
	}
	if len(ts.visible) != total {
		pos += " of " + itoa(total)
	}
	left := []string{pos}
	if q := strings.TrimSpace(ts.filter.query); q != "" && !promptOpen {
		left = append(left, "filter "+st.paint(st.FilterPrompt, truncate(cellLine(q), 30)))
	}
	if ts.waiting() {
		left = append(left, st.paint(st.Muted, "filtering…")) // the filter text is on its way
	}
	if ts.wide {
		left = append(left, st.paint(st.FilterPrompt, "wide")+st.paint(st.Muted, " "+pairKeys(c.keys.ScrollLeft, c.keys.ScrollRight)))
	}
	if note := ts.historyNote(); note != "" {
		left = append(left, st.paint(st.FilterPrompt, note)) // rows from the store's history (history.go)
	}
	if ts.nMarked > 0 {
		mk := itoa(ts.nMarked) + " marked"
		if hidden := ts.hiddenMarks(); hidden > 0 {
			mk += " (" + itoa(hidden) + " hidden by filter)"
		}
		left = append(left, st.paint(st.MarkGlyph, mk))
	}
	return strings.Join(left, st.paint(st.Muted, " · "))
}

// statusBar is the line above the help: left (where the cursor is, the filter, the marks),
// and on the right hint (a run going on, one's own or another person's), else a hint about
// the sheet (missing tabs).
func (t *tabSet) statusBar(c *common, left, hint string, w int) string {
	st := c.styles
	l := " " + left
	room := w - ansi.StringWidth(l) - 2
	if hint == "" {
		hint = t.missingHint(room)
	}
	if hint == "" || room < 12 {
		return fitStyled(l, w)
	}
	return spread(l, st.paint(st.Hint, truncate(hint, room))+" ", w)
}

// missingHint says which configured tabs the sheet lacks and how to add them, in at most room
// cells: the whole sentence, else a short form, else only the command.
func (t *tabSet) missingHint(room int) string {
	if len(t.missing) == 0 {
		return ""
	}
	names := make([]string, len(t.missing))
	for i, t := range t.missing {
		names[i] = "`" + cellLine(t.Name) + "`"
	}
	list := strings.Join(names, ", ")
	forms := []string{
		"tabs " + list + " not found: run `triage init` to create them",
		"no " + list + ": `triage init` adds " + words.Plural(len(names), "it", "them"),
		"missing tabs: `triage init`",
		"`triage init`",
	}
	if len(t.missing) == 1 {
		forms[0] = list + " tab not found: run `triage init` to create it"
	}
	for _, f := range forms {
		if ansi.StringWidth(f) <= room {
			return f
		}
	}
	return ""
}
