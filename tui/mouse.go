// The mouse, when it is on (mouse = true in the config; off by default so the terminal's own
// selection and copy keep working, lazygit's lesson): the wheel scrolls whatever is open
// (keys.go), and on the table a click acts on what it lands on: a tab in the tab bar shows
// that tab, a column title sorts by that column (again: the other way round), a row puts the
// cursor on it, and a click on the cursor row opens it, as enter does. Over a dialog, the
// help, a prompt or a view over the table a click does nothing: the keys do.

package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// onClick carries out a left click on the table's screen.
func (m *Model) onClick(msg tea.MouseClickMsg) tea.Cmd {
	mouse := msg.Mouse()
	if mouse.Button != tea.MouseLeft || !m.usable() || m.dialog != nil || m.help.open || m.prompt.open || m.cmd.open ||
		m.detail != nil || m.groups != nil || m.replay.showRun || m.watch.watching() {
		return nil
	}
	x, y := mouse.X, mouse.Y
	ts := m.tabs.current()
	switch {
	case y == 1:
		if i, ok := m.tabs.tabAt(m.c, x, m.c.width); ok {
			m.switchTab(i)
		}
	case ts == nil || ts.data == nil || x >= m.geo.tableW:
	case y == m.geo.headerH:
		if ci, ok := ts.columnAt(x); ok {
			m.tabs.applySort(sortAction{tab: ts.name(), by: ts.data.cols[ci].title})
		}
	case y > m.geo.headerH && y <= m.geo.headerH+m.geo.tableH:
		i := ts.offset + y - m.geo.headerH - 1
		if i >= len(ts.visible) {
			return nil
		}
		if i == ts.cursor {
			return m.onAction(keyAction{v: vDetail})
		}
		ts.setCursor(i, m.geo.tableH)
	}
	return nil
}

// tabAt is the tab whose label the tab bar, as drawn w cells wide, has at column x.
func (t *tabSet) tabAt(c *common, x, w int) (int, bool) {
	bar := ansi.Strip(t.tabBar(c, w))
	if x < 1 || x >= ansi.StringWidth(strings.TrimRight(bar, " ")) {
		return 0, false
	}
	i := strings.Count(ansi.Cut(bar, 0, x), "│")
	return i, i < len(t.list)
}

// columnAt is the column whose cells are at column x of the table, as last laid out.
func (ts *tabState) columnAt(x int) (int, bool) {
	at := gutterWidth
	first := true
	for i, cw := range ts.widths {
		if cw == 0 {
			continue
		}
		if !first {
			at++ // the space between two columns
		}
		first = false
		if x >= at && x < at+cw {
			return i, true
		}
		at += cw
	}
	return 0, false
}
