package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/lipgloss/v2"
	"github.com/triage-dev/triage/model"
)

// ShortHelp is the footer's key hints for where the user is: it changes with the mode (table,
// filter, detail) and the tab (clear-error only where sticky errors exist).
func (m *Model) ShortHelp() []key.Binding {
	k := m.c.keys
	back := hintKeys(k.backKeys()...)
	scroll := bindingHelp(k.scrollHint(), "scroll")
	switch {
	case m.showHelp:
		return []key.Binding{bindingHelp(hintKeys(append(append([]string{"esc"}, k.Clear.Keys()...), k.Help.Keys()...)...), "close help"), scroll}
	case m.filtering:
		return []key.Binding{bindingHelp("enter", "keep filter"), bindingHelp("esc", "clear"), bindingHelp("↑/↓", "move"),
			bindingHelp(m.filterPlaceholder(), "syntax")}
	case m.replay.showRun && m.replay.run != nil && !m.replay.run.finished:
		return []key.Binding{withDesc(k.Cancel, "cancel (in-flight calls finish)"), bindingHelp(back, "back (the run goes on)"), scroll}
	case m.replay.showRun && m.replay.run != nil:
		return []key.Binding{bindingHelp(hintKeys(append([]string{"enter"}, k.backKeys()...)...), "back to the table"), scroll}
	case m.detail != nil:
		hs := []key.Binding{bindingHelp(back, "back"), withDesc(k.Down, "next field"), withDesc(k.Up, "prev field"),
			withDesc(k.Copy, "copy field"), withDesc(k.CopyLink, "copy link"), k.PageDown, k.SetStatus}
		if ts := m.tabNamed(m.detail.tab); ts != nil && ts.cfg.Role != model.RoleInbox {
			hs = append(hs, withDesc(k.ClearError, "clear error"))
		}
		if ts := m.tabNamed(m.detail.tab); ts != nil && ts.cfg.Role == model.RoleDeadLetter {
			hs = append(hs, withDesc(k.Replay, "replay"), withDesc(k.Discard, "discard"))
		}
		return append(hs, k.Help)
	}
	// The tab's own actions first: at 80 columns the tail is cut, and j/k need no hint.
	hs := []key.Binding{k.Help}
	if m.running() {
		// Back at the table while a replay runs: how to look at it and how to stop it.
		hs = append(hs, withDesc(k.Progress, "replay progress"), withDesc(k.Cancel, "cancel replay"))
	}
	if m.replay.halt != nil {
		hs = append(hs, withDesc(k.Clear, "dismiss halt"))
	}
	hs = append(hs, k.Detail, k.Filter, k.Mark)
	role := model.Role("")
	if ts := m.activeTab(); ts != nil && ts.data != nil {
		role = ts.cfg.Role
	}
	switch role {
	case model.RoleDeadLetter:
		hs = append(hs, withDesc(k.Replay, "replay"), withDesc(k.ReplayAll, "replay all"), withDesc(k.ClearError, "clear error"),
			withDesc(k.Discard, "discard"), k.SetStatus)
	case model.RoleQueue:
		hs = append(hs, withDesc(k.ClearError, "clear error"), withDesc(k.Requeue, "requeue"), k.SetStatus)
	default:
		hs = append(hs, k.SetStatus)
	}
	hs = append(hs, k.Undo, withDesc(k.Copy, "copy ID"), k.Preview, k.NextTab, k.Refresh, k.Quit)
	return hs
}

// FullHelp is every binding, grouped by area (the `?` overlay).
func (m *Model) FullHelp() [][]key.Binding {
	groups := m.c.keys.fullHelp()
	out := make([][]key.Binding, len(groups))
	for i, g := range groups {
		out[i] = g.bindings
	}
	return out
}

// bindingHelp is a hint that isn't one binding ("esc/q back"); without keys (everything it
// names was unbound) it is disabled, so the footer leaves it out.
func bindingHelp(keys, desc string) key.Binding {
	if keys == "" {
		return key.NewBinding(key.WithDisabled())
	}
	return key.NewBinding(key.WithKeys(keys), key.WithHelp(keys, desc))
}

func withDesc(b key.Binding, desc string) key.Binding {
	b.SetHelp(b.Help().Key, desc)
	return b
}

// helpStyles adapts the bubbles help styles to ours (plain with NO_COLOR).
func helpStyles(st *Styles) help.Styles {
	if st.NoColor {
		n := lipgloss.NewStyle()
		return help.Styles{Ellipsis: n, ShortKey: n, ShortDesc: n, ShortSeparator: n, FullKey: n, FullDesc: n, FullSeparator: n}
	}
	return help.Styles{
		Ellipsis: st.FooterText, ShortKey: st.FooterKey, ShortDesc: st.FooterText, ShortSeparator: st.FooterText,
		FullKey: st.HelpKey, FullDesc: st.HelpDesc, FullSeparator: st.FooterText,
	}
}

// shortHelpLine renders the footer hints, cut with … to the width. It is memoised: the
// hints change with the mode and the tab, not with every cursor move.
func (m *Model) shortHelpLine(w int) string {
	role := model.Role("")
	if ts := m.activeTab(); ts != nil && ts.data != nil {
		role = ts.cfg.Role
	}
	run := 0
	switch {
	case m.replay.showRun && m.replay.run != nil && m.replay.run.finished:
		run = 2
	case m.replay.showRun && m.replay.run != nil:
		run = 1
	case m.running():
		run = 3 // back at the table while a replay runs
	}
	key := fmt.Sprint(w, m.showHelp, m.filtering, m.detail != nil, role, run, m.replay.halt != nil)
	return m.helpLine.get(key, func() string { return m.renderShortHelp(w) })
}

func (m *Model) renderShortHelp(w int) string {
	h := help.New()
	h.Styles = helpStyles(m.c.styles)
	h.ShortSeparator = " · "
	h.SetWidth(w - 1)
	return fitStyled(" "+h.ShortHelpView(m.ShortHelp()), w)
}

// fullHelpLines renders the `?` screen: every group with its title, flowed into as many
// columns as fit at full width (balanced), as exactly h lines of w cells. When even that is
// taller than the screen (60x15), it scrolls with the navigation keys.
func (m *Model) fullHelpLines(w, h int) []string {
	lines, _ := m.fullHelp(w, h)
	return lines
}

// fullHelp renders the help screen and says how many rows its content has.
func (m *Model) fullHelp(w, h int) ([]string, int) {
	st := m.c.styles
	groups := m.c.keys.fullHelp()
	keyW, descW := 0, 0
	for _, g := range groups {
		for _, e := range g.entries {
			keyW = max(keyW, textWidth(e.key))
			descW = max(descW, textWidth(e.desc))
		}
	}
	keyW = min(keyW, 13)
	colW := min(keyW+2+descW, w-3)
	ncols := max(1, (w-1)/(colW+2))
	if ncols == 1 && (w-1)/2-2 >= keyW+2+12 {
		// Two slightly truncated columns beat one long scroll (60 columns).
		ncols, colW = 2, (w-1)/2-2
	}
	avail := max(1, h-1)
	total := 0
	for _, g := range groups {
		total += len(g.entries) + 2
	}
	cols := flowGroups(groups, avail)
	if len(cols) > ncols {
		// Taller than the screen even in every column that fits: use those, and scroll.
		for lim := avail + 1; ; lim++ {
			if c := flowGroups(groups, lim); len(c) <= ncols {
				cols = c
				break
			}
		}
	} else {
		// Fits: balance the columns (the shortest height that needs no more of them).
		for lim := max(1, total/len(cols)); lim < avail; lim++ {
			if c := flowGroups(groups, lim); len(c) <= len(cols) {
				cols = c
				break
			}
		}
	}
	var rendered [][]string
	rows := 0
	for _, c := range cols {
		var lines []string
		for i, gi := range c {
			if i > 0 {
				lines = append(lines, "")
			}
			lines = append(lines, st.paint(st.HelpGroup, groups[gi].title))
			for _, e := range groups[gi].entries {
				lines = append(lines, st.paint(st.HelpKey, fit(e.key, keyW))+"  "+st.paint(st.HelpDesc, truncate(e.desc, colW-keyW-2)))
			}
		}
		rendered = append(rendered, lines)
		rows = max(rows, len(lines))
	}
	off := max(0, min(m.helpOffset, rows-avail))
	title := st.paint(st.Section, " Keys") + st.paint(st.Muted, " (any of them can be rebound in the config)")
	lines := []string{title}
	for row := off; row < off+avail; row++ {
		var b strings.Builder
		b.WriteString(" ")
		for _, c := range rendered {
			cell := ""
			if row < len(c) {
				cell = c[row]
			}
			b.WriteString(fitStyled(cell, colW))
			b.WriteString("  ")
		}
		lines = append(lines, b.String())
	}
	return padLines(lines, w, h), rows
}

// flowGroups splits groups into columns of at most limit lines (a group never splits).
func flowGroups(groups []helpGroup, limit int) [][]int {
	var cols [][]int
	used := 0
	for gi, g := range groups {
		n := len(g.entries) + 1
		if len(cols) == 0 || used+1+n > limit {
			cols = append(cols, nil)
			used = -1
		}
		cols[len(cols)-1] = append(cols[len(cols)-1], gi)
		used += 1 + n
	}
	return cols
}
