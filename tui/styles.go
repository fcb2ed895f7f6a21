package tui

import (
	"image/color"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/triage-dev/triage/model"
)

// palette is the handful of colors every style is built from. Light and dark variants are
// picked once, from the terminal's background (tea.BackgroundColorMsg).
type palette struct {
	accent, muted, subtle, err, warn, ok, cursorBg, cursorFg, barBg, text color.Color
}

func newPalette(dark bool) palette {
	ld := lipgloss.LightDark(dark)
	c := lipgloss.Color
	return palette{
		accent:   ld(c("#5A4FCF"), c("#8C83FF")),
		muted:    ld(c("#767676"), c("#8A8A8A")),
		subtle:   ld(c("#A8A8A8"), c("#5C5C5C")),
		err:      ld(c("#C01C28"), c("#FF6B6B")),
		warn:     ld(c("#9A6700"), c("#E5C07B")),
		ok:       ld(c("#1A7F37"), c("#7EC699")),
		cursorBg: ld(c("#DCD8FF"), c("#3B3763")),
		cursorFg: ld(c("#1C1C1C"), c("#F5F5F5")),
		barBg:    ld(c("#ECECEC"), c("#262626")),
		text:     ld(c("#1C1C1C"), c("#DADADA")),
	}
}

// Styles is the one style tree of the UI. With NoColor every style is plain (no SGR at all),
// and the layout carries the meaning through markers: `>` cursor, `*` mark, `!` problem,
// brackets around the active tab.
type Styles struct {
	// NoColor is set when NO_COLOR is: renderers add markers instead of relying on color.
	NoColor bool

	// Header: app and sheet title, the optional banner, generic muted/bold text.
	Title, Banner, Muted, Bold lipgloss.Style
	// Tab bar: the selected tab, the others, a tab that failed to load.
	TabActive, TabInactive lipgloss.Style
	TabBroken              lipgloss.Style
	// Mode and connection indicators.
	ReadWrite, ReadOnly       lipgloss.Style
	ConnOK, ConnErr, ConnBusy lipgloss.Style

	// Table: column titles, the cursor row, the mark and problem glyphs, stale claims.
	TableHeader lipgloss.Style
	CursorRow   lipgloss.Style
	MarkGlyph   lipgloss.Style
	ProblemMark lipgloss.Style
	Stale       lipgloss.Style

	// Status classes: waiting for someone, in progress, finished, quarantined, dismissed.
	StatusWaiting, StatusActive, StatusDone, StatusSticky, StatusDismissed lipgloss.Style

	// Footer: key hints, hints about the sheet, toasts, the filter prompt.
	FooterKey, FooterText, Hint lipgloss.Style
	ToastInfo, ToastError       lipgloss.Style
	FilterPrompt                lipgloss.Style

	// Dialogs (picker, confirm).
	DialogBox, DialogTitle, DialogItem, DialogSelected, DialogDanger lipgloss.Style

	// Detail view: field labels (hidden columns dimmer), the focused field, problems.
	Label, HiddenLabel, Focus, Problem, Section lipgloss.Style

	// Help screen and the preview pane's border.
	HelpKey, HelpDesc, HelpGroup lipgloss.Style
	PaneBorder                   lipgloss.Style

	// Replay: the halt banner (loud, stays until dismissed), row states in the progress view.
	HaltBanner                        lipgloss.Style
	RunOK, RunBad, RunWarn, RunActive lipgloss.Style

	// rows holds the styles of the table's per-row path as precomputed escape sequences:
	// lipgloss.Style.Render costs microseconds per call, and a frame styles ~40 cells.
	rows rowSpans
}

// span is a style as the escape sequences around a single-line text.
type span struct{ open, close string }

func (sp span) wrap(s string) string {
	if sp.open == "" || s == "" {
		return s
	}
	return sp.open + s + sp.close
}

// spanOf captures what a style puts around one line of text (no padding, borders or
// width: the styles given here have none).
func spanOf(st lipgloss.Style) span {
	const marker = "X" // cannot appear in an SGR sequence
	out := st.Render(marker)
	i := strings.Index(out, marker)
	if i < 0 {
		return span{}
	}
	return span{open: out[:i], close: out[i+len(marker):]}
}

type rowSpans struct {
	cursor, mark, problem, stale                      span
	waiting, active, done, sticky, dismissed, neutral span
}

func (s *Styles) buildSpans() {
	if s.NoColor {
		s.rows = rowSpans{}
		return
	}
	s.rows = rowSpans{
		cursor: spanOf(s.CursorRow), mark: spanOf(s.MarkGlyph), problem: spanOf(s.ProblemMark), stale: spanOf(s.Stale),
		waiting: spanOf(s.StatusWaiting), active: spanOf(s.StatusActive), done: spanOf(s.StatusDone),
		sticky: spanOf(s.StatusSticky), dismissed: spanOf(s.StatusDismissed),
	}
}

// newStylesFor builds the style tree for a background (dark or light), or with no color at
// all, with ASCII borders when ascii is set (TERM=dumb).
func newStylesFor(dark, noColor, ascii bool) *Styles {
	st := newStyles(dark, noColor, ascii)
	st.buildSpans()
	return st
}

func newStyles(dark, noColor, ascii bool) *Styles {
	n := lipgloss.NewStyle()
	border := lipgloss.RoundedBorder()
	if ascii {
		border = lipgloss.ASCIIBorder()
	}
	box := n.Border(border).Padding(0, 1)
	if noColor {
		return &Styles{
			NoColor: true,
			Title:   n, Banner: n, Muted: n, Bold: n,
			TabActive: n, TabInactive: n, TabBroken: n,
			ReadWrite: n, ReadOnly: n, ConnOK: n, ConnErr: n, ConnBusy: n,
			TableHeader: n, CursorRow: n, MarkGlyph: n, ProblemMark: n, Stale: n,
			StatusWaiting: n, StatusActive: n, StatusDone: n, StatusSticky: n, StatusDismissed: n,
			FooterKey: n, FooterText: n, Hint: n, ToastInfo: n, ToastError: n, FilterPrompt: n,
			DialogBox: box, DialogTitle: n, DialogItem: n, DialogSelected: n, DialogDanger: n,
			Label: n, HiddenLabel: n, Focus: n, Problem: n, Section: n,
			HelpKey: n, HelpDesc: n, HelpGroup: n, PaneBorder: n,
			HaltBanner: n, RunOK: n, RunBad: n, RunWarn: n, RunActive: n,
		}
	}
	p := newPalette(dark)
	fg := func(c color.Color) lipgloss.Style { return n.Foreground(c) }
	return &Styles{
		Title:       fg(p.accent).Bold(true),
		Banner:      n.Foreground(p.cursorFg).Background(p.warn).Bold(true).Padding(0, 1),
		Muted:       fg(p.muted),
		Bold:        n.Bold(true),
		TabActive:   n.Foreground(p.cursorFg).Background(p.cursorBg).Bold(true),
		TabInactive: fg(p.muted),
		TabBroken:   fg(p.err),
		ReadWrite:   fg(p.ok).Bold(true),
		ReadOnly:    fg(p.warn).Bold(true),
		ConnOK:      fg(p.ok),
		ConnErr:     fg(p.err).Bold(true),
		ConnBusy:    fg(p.accent),

		TableHeader: fg(p.muted).Bold(true),
		CursorRow:   n.Foreground(p.cursorFg).Background(p.cursorBg),
		MarkGlyph:   fg(p.accent).Bold(true),
		ProblemMark: fg(p.err).Bold(true),
		Stale:       fg(p.warn).Bold(true),

		StatusWaiting:   fg(p.accent).Bold(true),
		StatusActive:    fg(p.warn),
		StatusDone:      fg(p.ok),
		StatusSticky:    fg(p.err).Bold(true),
		StatusDismissed: fg(p.subtle),

		FooterKey:    fg(p.accent),
		FooterText:   fg(p.muted),
		Hint:         fg(p.warn),
		ToastInfo:    fg(p.ok),
		ToastError:   n.Foreground(lipgloss.Color("#FFFFFF")).Background(p.err).Bold(true),
		FilterPrompt: fg(p.accent).Bold(true),

		DialogBox:      box.BorderForeground(p.accent),
		DialogTitle:    fg(p.accent).Bold(true),
		DialogItem:     fg(p.text),
		DialogSelected: n.Foreground(p.cursorFg).Background(p.cursorBg).Bold(true),
		DialogDanger:   fg(p.err).Bold(true),

		Label:       fg(p.muted).Bold(true),
		HiddenLabel: fg(p.subtle),
		Focus:       n.Foreground(p.cursorFg).Background(p.cursorBg).Bold(true),
		Problem:     fg(p.err),
		Section:     fg(p.accent).Bold(true),

		HelpKey:    fg(p.accent),
		HelpDesc:   fg(p.muted),
		HelpGroup:  fg(p.text).Bold(true).Underline(true),
		PaneBorder: fg(p.subtle),

		HaltBanner: n.Foreground(lipgloss.Color("#FFFFFF")).Background(p.err).Bold(true),
		RunOK:      fg(p.ok),
		RunBad:     fg(p.err).Bold(true),
		RunWarn:    fg(p.warn),
		RunActive:  fg(p.accent).Bold(true),
	}
}

// statusSpan picks the style of a status cell by what the status means for the role.
func (s *Styles) statusSpan(role model.Role, status string) span {
	switch status {
	case model.StatusNew, model.StatusDead, model.StatusPending:
		return s.rows.waiting
	case model.StatusClaimed:
		return s.rows.active
	case model.StatusDone, model.StatusDelivered, "replied":
		return s.rows.done
	case model.StatusRejected, model.StatusError:
		if role != model.RoleInbox {
			return s.rows.sticky
		}
	case "spam", model.StatusDiscarded:
		return s.rows.dismissed
	}
	return s.rows.neutral
}
