package tui

import (
	"fmt"
	"net/url"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/triage-dev/triage/model"
)

// Copying works through OSC 52, the one clipboard that reaches the user's machine over SSH
// from a jump host. How the sequence must be sent depends on what sits between us and the
// terminal (tea.EnvMsg tells us):
//
//   - plain terminals (xterm, kitty, iTerm2, Windows Terminal...): OSC 52 as is;
//   - tmux: OSC 52 as is (tmux takes it with `set-clipboard on`) and once more wrapped in
//     tmux's passthrough (for `allow-passthrough on`); setting the clipboard twice to the same
//     text is harmless, and either setting makes it work;
//   - GNU screen: wrapped in screen's DCS passthrough, in chunks screen accepts;
//   - TERM=dumb: as is; a terminal that doesn't know it ignores it.

// screenChunk is the longest DCS string GNU screen passes through in one piece.
const screenChunk = 768

// clipboardCmd returns the Cmd that sets the system clipboard to s for this terminal. What
// is copied has been through the sanitiser (invariant 9): the OSC 52 sequence itself is
// base64 and safe, but the text lands wherever the user pastes it, and a cell holding
// `ESC[201~` would end a bracketed paste there and run the rest as typed. Newlines and tabs
// are kept, so a copied payload or message keeps its shape.
func (m *Model) clipboardCmd(s string) tea.Cmd {
	s = model.SanitizeText(s)
	seq := ansi.SetSystemClipboard(s)
	switch {
	case m.c.term.screen():
		return tea.Raw(ansi.ScreenPassthrough(seq, screenChunk))
	case m.c.term.tmux:
		return tea.Batch(tea.SetClipboard(s), tea.Raw(ansi.TmuxPassthrough(seq)))
	}
	return tea.SetClipboard(s)
}

// copyText copies s and says what was copied.
func (m *Model) copyText(what, s string) tea.Cmd {
	return tea.Batch(m.clipboardCmd(s), m.toast(toastInfo, "copied %s: %s", what, truncate(cellLine(s), 40)))
}

// copyID copies the cursor row's ID (`y` in the table).
func (m *Model) copyID() tea.Cmd {
	ts := m.activeTab()
	if ts == nil || ts.data == nil {
		return nil
	}
	r, _ := ts.current()
	if r == nil {
		return nil
	}
	if r.ID == "" {
		return m.toast(toastInfo, "this row has no ID to copy")
	}
	return tea.Batch(m.clipboardCmd(r.ID), m.toast(toastInfo, "copied ID %s", shortID(r.ID)))
}

// sheetLink is the Google Sheets address of a row: the spreadsheet, the tab (gid) and the
// row's range as loaded (a row number is fine for a link; writes go by ID).
func sheetLink(spreadsheetID string, t *model.Table, r *model.Record) string {
	return fmt.Sprintf("https://docs.google.com/spreadsheets/d/%s/edit#gid=%d&range=A%d", url.PathEscape(spreadsheetID), t.SheetID, r.Row)
}

// copyLink copies the row's sheet link (`o`).
func (m *Model) copyLink(ts *tabState, r *model.Record) tea.Cmd {
	if ts == nil || ts.data == nil || r == nil {
		return nil
	}
	if m.spreadsheetID == "" {
		return m.toast(toastInfo, "no spreadsheet ID to link to")
	}
	link := sheetLink(m.spreadsheetID, ts.data.table, r)
	return tea.Batch(m.clipboardCmd(link), m.toast(toastInfo, "copied the sheet link to %s row %d (gid=%d&range=A%d)", cellLine(ts.name()), r.Row, ts.data.table.SheetID, r.Row))
}
