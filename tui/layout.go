// Layout: the body geometry, computed at the end of every Update so View only draws.

package tui

// geometry is the body's layout: the parent (relayout) sets it, and the table, the preview and
// the page moves read it. View only draws with it.
type geometry struct {
	bodyH, tableW, tableH, previewW, previewH int
	previewRight                              bool
	// headerH is how many lines the header takes: the body (a table's column titles first)
	// starts on that line of the screen, which a mouse click is told by.
	headerH int
}

// relayout computes the body geometry from the terminal size and what is on screen, so View
// only draws and Update's page moves use the real page height.
func (m *Model) relayout() {
	w, h := m.c.width, m.c.height
	// The header is the title line and the tab bar, plus the halt banner while it is up; the
	// footer the toasts, the status bar, the filter's note and the help (or prompt) line.
	header := 2 + len(m.replay.bannerLines(w, m.tabs.activeName()))
	if m.detail == nil && !m.replay.showRun && m.groups == nil {
		header += len(m.tabs.viewBarLines(m.c, w))
	}
	footer := len(m.toasts.lines(m.c, w, h)) + 2 + len(m.tabs.filterNoteLines(m.c, w, m.help.open || m.detail != nil || m.replay.showRun))
	m.geo.bodyH = max(1, h-header-footer)
	m.geo.headerH = header
	m.c.bodyH = m.geo.bodyH
	m.geo.tableW, m.geo.tableH = w, m.geo.bodyH-1 // minus the column header
	m.geo.previewW, m.geo.previewH, m.geo.previewRight = 0, 0, false
	if m.preview.show && m.detail == nil {
		if w >= previewWideAt {
			m.geo.previewRight = true
			m.geo.previewW = max(40, w*2/5)
			m.geo.previewH = m.geo.bodyH
			m.geo.tableW = w - m.geo.previewW - 1
		} else {
			m.geo.previewW = w
			m.geo.previewH = max(6, m.geo.bodyH/2)
			m.geo.tableH = max(1, m.geo.bodyH-m.geo.previewH-1-1)
		}
	}
	m.tabs.tableH = m.geo.tableH
	if ts := m.tabs.current(); ts != nil && ts.data != nil {
		ts.relayout(m.c, m.geo.tableW)
		ts.scrollTo(m.geo.tableH)
	}
	if m.detail != nil {
		m.detail.setSize(w, m.geo.bodyH)
	}
	if m.compose != nil {
		m.compose.setSize(w, m.geo.bodyH)
	}
	if m.groups != nil {
		m.groups.listH = groupsListHeight(m.geo.bodyH)
	}
	if m.help.open {
		m.help.mode = ""
		if m.detail == nil {
			m.help.mode = m.load.auto.mode() // how the auto refresh reads (idle.go)
		}
		// Clamp the help scroll here so View only reads it.
		groups, title := m.tabs.help(m.c, m.detail)
		_, rows := m.help.fullHelp(groups, title, w, h-1)
		m.help.offset = max(0, min(m.help.offset, rows-(h-2)))
	} else {
		m.help.offset = 0
	}
}
