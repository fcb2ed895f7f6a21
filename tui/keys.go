// Key and mouse routing: the root model hands a key to whatever has focus (a dialog, the help,
// the replay run, the filter prompt, the detail view, else the table).

package tui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// onWheel scrolls with the mouse wheel, when the terminal sends it. Nothing needs a mouse.
func (m *Model) onWheel(msg tea.MouseWheelMsg) tea.Cmd {
	if m.dialog != nil {
		d, act := m.dialog.Update(msg)
		m.dialog = d
		return m.onAction(act)
	}
	if m.help.open {
		return nil
	}
	if m.replay.showRun && m.replay.run != nil {
		var a action
		m.replay, a = m.replay.Update(msg)
		return m.onRunAction(a)
	}
	if m.watch.watching() {
		var a action
		m.watch, a = m.watch.Update(msg)
		return m.onWatchAction(a)
	}
	if m.detail != nil {
		var cmd tea.Cmd
		m.detail, cmd = m.detail.Update(msg)
		return cmd
	}
	ts := m.tabs.current()
	if ts == nil || ts.data == nil {
		return nil
	}
	switch msg.Button {
	case tea.MouseWheelDown:
		ts.move(3, m.geo.tableH)
	case tea.MouseWheelUp:
		ts.move(-3, m.geo.tableH)
	}
	return nil
}

// onKey routes a key to whatever has focus: a dialog, the help, the filter prompt, the
// detail view, else the table.
func (m *Model) onKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.c.keys
	if key.Matches(msg, k.Interrupt) {
		return m.onCtrlC()
	}
	if key.Matches(msg, k.Suspend) {
		if m.opts.Remote {
			return m.toasts.sayf(toastInfo, "suspend is not available over triage serve (the program runs on the shared host); %s quits", k.quitKey())
		}
		return tea.Suspend
	}
	if m.c.width < minWidth || m.c.height < minHeight || !m.load.hasData {
		switch {
		case key.Matches(msg, k.Quit):
			return m.requestQuit()
		case key.Matches(msg, k.Refresh) && !m.load.hasData && !m.load.loading:
			return m.startLoad()
		}
		return nil
	}
	if m.dialog != nil {
		d, act := m.dialog.Update(msg)
		m.dialog = d
		return m.onAction(act)
	}
	if m.help.open {
		var act action
		m.help, act = m.help.Update(msg)
		return m.onAction(act)
	}
	if m.replay.showRun && m.replay.run != nil {
		var a action
		m.replay, a = m.replay.Update(msg)
		return m.onRunAction(a)
	}
	if m.watch.watching() {
		var a action
		m.watch, a = m.watch.Update(msg)
		return m.onWatchAction(a)
	}
	if m.prompt.open {
		return m.updatePrompt(msg)
	}
	if m.groups != nil {
		return m.onGroupsKey(msg)
	}
	if m.detail != nil {
		return m.onDetailKey(msg)
	}
	return m.onTableKey(msg)
}

// onCtrlC: the first ctrl+c during a replay cancels the run (calls in flight finish and are
// written back), the second quits once that is done, the third quits at once. During a write
// it quits once the write's result is in; otherwise at once.
func (m *Model) onCtrlC() tea.Cmd {
	if m.replay.running() {
		m.dialog = nil
		if !m.replay.run.cancelling {
			m.replay.stopRun()
			return m.cancelNote("cancelling: calls in flight finish and are written back; ctrl+c again quits when they are")
		}
		return m.cancelAndQuit()
	}
	if m.writes.writing && !m.writes.quitAfterWrite {
		return m.requestQuit()
	}
	return m.quit()
}

// updatePrompt hands a key or a paste to the filter prompt and carries out its action: every
// keystroke re-filters the tab (narrowing from the previous result where that is safe), esc
// clears the filter, an arrow moves the table's cursor.
func (m *Model) updatePrompt(msg tea.Msg) tea.Cmd {
	var act action
	m.prompt, act = m.prompt.Update(msg)
	ts := m.tabs.current()
	if ts == nil {
		return nil
	}
	switch a := act.(type) {
	case filterQueryAction:
		if a.cleared {
			ts.applyFilter("")
		} else if a.query != ts.filter.query {
			ts.applyFilter(a.query)
			ts.scrollTo(m.geo.tableH)
		}
	case filterMoveAction:
		if ts.data != nil {
			ts.move(a.d, m.geo.tableH)
		}
	}
	return nil
}

// onDetailKey handles the detail view: back, copy the focused field, the next or previous
// row, the actions on this record; the pager's keys (detail.go) scroll and move the focus.
func (m *Model) onDetailKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.c.keys
	switch {
	case key.Matches(msg, k.Back, k.Clear, k.Quit):
		m.detail = nil
		return nil
	case key.Matches(msg, k.Help):
		m.help.open = true
		return nil
	case key.Matches(msg, k.Copy):
		f, ok := m.detail.focused()
		if !ok {
			return nil
		}
		v := f.copyValue()
		if v == "" {
			return m.toasts.sayf(toastInfo, "%s is empty: nothing copied", f.label)
		}
		return m.copyText(f.label, v)
	case key.Matches(msg, k.CopyLink):
		return m.copyLink(m.tabs.named(m.detail.tab), &m.detail.rec)
	case key.Matches(msg, k.NextRow):
		return m.stepDetail(1)
	case key.Matches(msg, k.PrevRow):
		return m.stepDetail(-1)
	case key.Matches(msg, k.Reply):
		return m.startReply(true)
	case key.Matches(msg, k.SetStatus):
		return m.startSetStatus(true)
	case key.Matches(msg, k.ClearError):
		return m.startClearError(true)
	case key.Matches(msg, k.Discard):
		return m.startDiscard(true)
	case key.Matches(msg, k.Replay):
		return m.startReplay(false, true)
	case key.Matches(msg, k.EditPayload):
		return m.startEditPayload(true)
	case key.Matches(msg, k.Cancel):
		return m.cancelRunKey()
	case key.Matches(msg, k.Progress):
		return m.showProgress()
	case key.Matches(msg, k.Undo):
		return m.startUndo()
	case key.Matches(msg, k.Refresh):
		return m.refresh()
	}
	var cmd tea.Cmd
	m.detail, cmd = m.detail.Update(msg)
	return cmd
}

// onTableKey handles the table: views and tabs (these work on a broken tab too), then
// navigation, marks and actions on the rows.
func (m *Model) onTableKey(msg tea.KeyPressMsg) tea.Cmd {
	if cmd, ok := m.onViewKey(msg); ok {
		return cmd
	}
	ts := m.tabs.current()
	if ts == nil || ts.data == nil {
		return nil // a broken tab: nothing below applies
	}
	if m.onNavKey(ts, msg) {
		return nil
	}
	return m.onRowKey(ts, msg)
}

// onViewKey handles the keys that don't act on rows: quit, help, tabs, refresh, the replay
// run, the preview and esc. ok is false for any other key.
func (m *Model) onViewKey(msg tea.KeyPressMsg) (cmd tea.Cmd, ok bool) {
	k := m.c.keys
	switch {
	case key.Matches(msg, k.Quit):
		return m.requestQuit(), true
	case key.Matches(msg, k.Help):
		m.help.open = true
	case key.Matches(msg, k.NextTab):
		m.switchTab(m.tabs.active + 1)
	case key.Matches(msg, k.PrevTab):
		m.switchTab(m.tabs.active - 1 + len(m.tabs.list))
	case key.Matches(msg, k.Tab1):
		m.selectTab(0)
	case key.Matches(msg, k.Tab2):
		m.selectTab(1)
	case key.Matches(msg, k.Tab3):
		m.selectTab(2)
	case key.Matches(msg, k.Refresh):
		return m.refresh(), true
	case key.Matches(msg, k.Cancel):
		return m.cancelRunKey(), true
	case key.Matches(msg, k.Progress):
		return m.showProgress(), true
	case key.Matches(msg, k.Preview):
		m.preview.show = !m.preview.show
	case key.Matches(msg, k.Clear):
		m.onClearKey()
	default:
		return nil, false
	}
	return nil, true
}

// onClearKey (esc) dismisses one thing: error toasts, else the halt banner, else the filter.
func (m *Model) onClearKey() {
	ts := m.tabs.current()
	switch {
	case m.toasts.dismissErrors():
	case m.replay.halt != nil:
		m.replay.halt = nil
	case ts != nil && ts.filter.query != "":
		ts.applyFilter("")
		m.prompt.input.SetValue("")
	}
}

// onNavKey moves the cursor of tab ts; false for a key that isn't a move.
func (m *Model) onNavKey(ts *tabState, msg tea.KeyPressMsg) bool {
	k := m.c.keys
	h := m.geo.tableH
	switch {
	case key.Matches(msg, k.Down):
		ts.move(1, h)
	case key.Matches(msg, k.Up):
		ts.move(-1, h)
	case key.Matches(msg, k.Top):
		ts.setCursor(0, h)
	case key.Matches(msg, k.Bottom):
		ts.setCursor(len(ts.visible)-1, h)
	case key.Matches(msg, k.HalfDown):
		ts.move(max(1, h/2), h)
	case key.Matches(msg, k.HalfUp):
		ts.move(-max(1, h/2), h)
	case key.Matches(msg, k.PageDown):
		ts.move(max(1, h), h)
	case key.Matches(msg, k.PageUp):
		ts.move(-max(1, h), h)
	default:
		return false
	}
	return true
}

// onRowKey handles the filter prompt, the detail view, marks and the actions on rows.
func (m *Model) onRowKey(ts *tabState, msg tea.KeyPressMsg) tea.Cmd {
	k := m.c.keys
	switch {
	case key.Matches(msg, k.Filter):
		m.prompt.open = true
		m.prompt.input.SetValue(ts.filter.query)
	case key.Matches(msg, k.Detail):
		if r, _ := ts.current(); r != nil {
			return m.openDetail(ts, r)
		}
	case key.Matches(msg, k.Mark):
		ts.toggleMark()
		ts.move(1, m.geo.tableH)
	case key.Matches(msg, k.MarkAll):
		ts.markVisible()
		// The toast tells of the marks as they are: it goes when they change (V, space, a
		// write) or the tab does.
		n := ts.nMarked
		return m.toasts.pushWhile(toastInfo, itoa(n)+" marked", func() bool { return m.tabs.current() == ts && ts.nMarked == n })
	case key.Matches(msg, k.UnmarkAll):
		ts.unmarkAll()
	case key.Matches(msg, k.Sort):
		return m.startSort(ts)
	default:
		return m.onActionKey(ts, msg)
	}
	return nil
}

// onActionKey starts a write or a replay on the marked rows (else the cursor row), or copies.
func (m *Model) onActionKey(ts *tabState, msg tea.KeyPressMsg) tea.Cmd {
	k := m.c.keys
	switch {
	case key.Matches(msg, k.SetStatus):
		return m.startSetStatus(false)
	case key.Matches(msg, k.ClearError):
		return m.startClearError(false)
	case key.Matches(msg, k.Undo):
		return m.startUndo()
	case key.Matches(msg, k.Discard):
		return m.startDiscard(false)
	case key.Matches(msg, k.Requeue):
		return m.startRequeue()
	case key.Matches(msg, k.Copy):
		return m.copyID()
	case key.Matches(msg, k.CopyLink):
		r, _ := ts.current()
		return m.copyLink(ts, r)
	case key.Matches(msg, k.Reply):
		return m.startReply(false)
	case key.Matches(msg, k.Replay):
		return m.startReplay(false, false)
	case key.Matches(msg, k.ReplayAll):
		return m.startReplay(true, false)
	case key.Matches(msg, k.Groups):
		return m.openGroups()
	case key.Matches(msg, k.EditPayload):
		return m.startEditPayload(false)
	}
	return nil
}

func (m *Model) switchTab(i int) {
	if len(m.tabs.list) == 0 {
		return
	}
	m.selectTab(i % len(m.tabs.list))
}

// selectTab makes tab i the active one. The info toasts go: they told of the tab that was on
// screen ("2 set to done · u undoes"); errors stay.
func (m *Model) selectTab(i int) {
	if i < 0 || i >= len(m.tabs.list) {
		return
	}
	if i != m.tabs.active {
		m.toasts.dismissInfo()
	}
	m.tabs.active = i
}
