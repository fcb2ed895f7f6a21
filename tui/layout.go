// Layout: the body geometry, computed at the end of every Update so View only draws.

package tui

// relayout computes the body geometry from the terminal size and what is on screen, so View
// only draws and Update's page moves use the real page height.
func (m *Model) relayout() {
	w, h := m.c.width, m.c.height
	m.bodyH = max(1, h-m.headerHeight()-m.footerHeight())
	m.c.bodyH = m.bodyH
	m.tableW, m.tableH = w, m.bodyH-1 // minus the column header
	m.previewW, m.previewH, m.previewRight = 0, 0, false
	if m.showPreview && m.detail == nil {
		if w >= previewWideAt {
			m.previewRight = true
			m.previewW = max(40, w*2/5)
			m.previewH = m.bodyH
			m.tableW = w - m.previewW - 1
		} else {
			m.previewW = w
			m.previewH = max(6, m.bodyH/2)
			m.tableH = max(1, m.bodyH-m.previewH-1-1)
		}
	}
	if ts := m.activeTab(); ts != nil && ts.data != nil {
		ts.relayout(m.c, m.tableW)
		ts.scrollTo(m.tableH)
	}
	if m.detail != nil {
		m.detail.setSize(w, m.bodyH)
	}
	if m.showHelp {
		// Clamp the help scroll here so View only reads it.
		_, rows := m.fullHelp(w, h-1)
		m.helpOffset = max(0, min(m.helpOffset, rows-(h-2)))
	} else {
		m.helpOffset = 0
	}
}
