// Key and mouse routing: the root model hands a key to whatever has focus (a dialog, the help,
// the replay run, the filter prompt, the detail view, else the table).

package tui

import (
	"strings"

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
		return m.onAction(a)
	}
	if m.watch.watching() {
		var a action
		m.watch, a = m.watch.Update(msg)
		return m.onAction(a)
	}
	var a action
	if m.detail != nil {
		m.detail, a = m.detail.Update(msg)
	} else {
		m.tabs, a = m.tabs.Update(msg)
	}
	return m.onAction(a)
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
		// Keys act only on what this screen shows (it names what is open, and back closes
		// it) or are dropped: a key never reaches a dialog the user can't see.
		switch {
		case key.Matches(msg, k.Quit):
			return m.requestQuit()
		case key.Matches(msg, k.Back) && m.load.hasData:
			return m.closeHidden()
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
	if m.compose != nil {
		var act action
		m.compose, act = m.compose.Update(msg)
		return m.onAction(act)
	}
	if m.help.open {
		var act action
		m.help, act = m.help.Update(msg)
		return m.onAction(act)
	}
	var a action
	switch {
	case m.replay.showRun && m.replay.run != nil:
		m.replay, a = m.replay.Update(msg)
	case m.watch.watching():
		m.watch, a = m.watch.Update(msg)
	case m.cmd.open:
		m.cmd, a = m.cmd.Update(msg)
		if run, ok := a.(runCommandAction); ok {
			return m.runCommand(run.text)
		}
		return nil
	case m.prompt.open:
		m.prompt, a = m.prompt.Update(msg)
		m.tabs.onPrompt(a)
		return nil
	case m.groups != nil:
		m.groups, a = m.groups.Update(msg)
	case m.detail != nil:
		m.detail, a = m.detail.Update(msg)
	default:
		m.tabs, a = m.tabs.Update(msg)
	}
	return m.onAction(a)
}

// hiddenOpen names what is open over the table while the too-small screen hides it ("" when
// nothing is): the screen says so, and that back closes it.
func (m *Model) hiddenOpen() string {
	switch {
	case m.dialog != nil:
		return "a dialog"
	case m.compose != nil:
		return "the reply you are writing"
	case m.help.open:
		return "the help"
	case m.prompt.open:
		return "the filter prompt"
	case m.cmd.open:
		return "the command line"
	}
	return ""
}

// closeHidden closes what the too-small screen hides, the way back would (a dialog is
// dismissed: nothing it offered happens); the filter prompt keeps its filter.
func (m *Model) closeHidden() tea.Cmd {
	switch {
	case m.dialog != nil:
		return m.onAction(closeAction{})
	case m.compose != nil:
		return m.onAction(composeLeaveAction{m.compose.reply})
	case m.help.open:
		m.help.open = false
	case m.prompt.open:
		m.prompt.open = false
	case m.cmd.open:
		m.cmd.open = false
	}
	return nil
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

// onPrompt carries out an action of the filter prompt on the active tab: every keystroke
// re-filters it (narrowing from the previous result where that is safe), esc clears the
// filter, an arrow moves the cursor.
func (t *tabSet) onPrompt(act action) {
	ts := t.current()
	if ts == nil {
		return
	}
	switch a := act.(type) {
	case filterQueryAction:
		// A space typed at the end starts the next term: the filter is the same.
		q := strings.TrimRight(a.query, " ")
		if a.cleared {
			ts.applyFilter("")
		} else if q != ts.filter.query {
			ts.applyFilter(q)
			ts.scrollTo(t.tableH)
		}
	case filterMoveAction:
		if ts.data != nil {
			ts.move(a.d, t.tableH)
		}
	}
}

// onClearKey (esc) dismisses one thing: error toasts, else the halt banner, else the filter.
func (m *Model) onClearKey() {
	ts := m.tabs.current()
	switch {
	case m.toasts.dismissErrors():
	case m.replay.bannerShown(m.tabs.activeName()):
		m.replay.halt = nil
	case ts != nil && ts.filter.query != "":
		ts.applyFilter("")
		m.prompt.input.SetValue("")
	}
}

// verb is what a key means, when the component that got it hands it up (keyAction): the root
// carries it out, or hands it to the component it belongs to (verbs).
type verb int

const (
	vQuit verb = iota
	vHelp
	vRefresh
	vCancelRun
	vProgress
	vPreview
	vClear
	vFilter
	vDetail
	vSort
	vSetStatus
	vClearError
	vUndo
	vDiscard
	vRequeue
	vCopy
	vCopyLink
	vReply
	vReplay
	vReplayAll
	vGroups
	vEditPayload
	vNextRow
	vPrevRow
	vCloseDetail
	vCloseGroups
	vNextView
	vPrevView
	vCommand
	vWide
	vScrollLeft
	vScrollRight
)

// keyAction: carry out v; inDetail: the key was pressed in the detail view (the action applies
// to its record, not the table's targets).
type keyAction struct {
	v        verb
	inDetail bool
}

func (keyAction) isAction() {}

// keyVerb is a binding of the KeyMap and what it means in a view.
type keyVerb struct {
	b func(*KeyMap) key.Binding
	v verb
}

// matchVerb is the verb of the first of vs whose binding msg matches.
func matchVerb(msg tea.KeyPressMsg, k *KeyMap, vs []keyVerb) (verb, bool) {
	for _, kv := range vs {
		if key.Matches(msg, kv.b(k)) {
			return kv.v, true
		}
	}
	return 0, false
}

// verbs is how the root carries out each verb: the starts of the actions (actions.go,
// replay.go, edit.go...), opening and closing views, copying. (Set in init: copying goes
// through onAction, which reads it.)
var verbs map[verb]func(m *Model, inDetail bool) tea.Cmd

func init() { verbs = rootVerbs() }

func rootVerbs() map[verb]func(m *Model, inDetail bool) tea.Cmd {
	return map[verb]func(m *Model, inDetail bool) tea.Cmd{
		vQuit:      func(m *Model, _ bool) tea.Cmd { return m.requestQuit() },
		vHelp:      func(m *Model, _ bool) tea.Cmd { m.help.open = true; return nil },
		vRefresh:   func(m *Model, _ bool) tea.Cmd { return m.refresh() },
		vCancelRun: func(m *Model, _ bool) tea.Cmd { return m.onAction(m.replay.cancelKey()) },
		vProgress: func(m *Model, _ bool) tea.Cmd {
			if !m.replay.running() {
				var a action
				var ok bool
				if m.watch, a, ok = m.watch.showOthers(m.replay.run); ok {
					return m.onAction(a) // another person's run (watch.go)
				}
			}
			return m.onAction(m.replay.show())
		},
		vPreview: func(m *Model, _ bool) tea.Cmd { m.preview.show = !m.preview.show; return nil },
		vClear:   func(m *Model, _ bool) tea.Cmd { m.onClearKey(); return nil },
		vFilter: func(m *Model, _ bool) tea.Cmd {
			// The prompt reopens on the filter shown, a space after it, so what is typed is
			// one more term (narrowing), never glued to the last one.
			m.prompt.open = true
			q := m.tabs.current().filter.query
			if q != "" && !strings.HasSuffix(q, " ") {
				q += " "
			}
			m.prompt.input.SetValue(q)
			return nil
		},
		vDetail: func(m *Model, _ bool) tea.Cmd {
			ts := m.tabs.current()
			if r, _ := ts.current(); r != nil {
				return m.openDetail(ts, r)
			}
			return nil
		},
		vSort:       func(m *Model, _ bool) tea.Cmd { return m.onAction(m.tabs.current().sortPicker(m.c)) },
		vSetStatus:  func(m *Model, inDetail bool) tea.Cmd { return m.onAction(m.changes.setStatusPicker(m.scope(inDetail))) },
		vClearError: func(m *Model, inDetail bool) tea.Cmd { return m.onAction(m.changes.clearError(m.scope(inDetail))) },
		vUndo:       func(m *Model, inDetail bool) tea.Cmd { return m.onAction(m.changes.undo(m.scope(inDetail), &m.writes)) },
		vDiscard:    func(m *Model, inDetail bool) tea.Cmd { return m.onAction(m.changes.discard(m.scope(inDetail))) },
		vRequeue:    func(m *Model, _ bool) tea.Cmd { return m.onAction(m.changes.requeue(m.scope(false))) },
		vCopy:       func(m *Model, _ bool) tea.Cmd { return m.onAction(m.clip.copyID(m.tabs.current())) },
		vCopyLink: func(m *Model, inDetail bool) tea.Cmd {
			if inDetail {
				return m.onAction(m.clip.copyLink(m.tabs.named(m.detail.tab), &m.detail.rec, m.book.id))
			}
			ts := m.tabs.current()
			r, _ := ts.current()
			return m.onAction(m.clip.copyLink(ts, r, m.book.id))
		},
		vReply: func(m *Model, inDetail bool) tea.Cmd {
			if m.replyOffered() {
				return m.mailReply(inDetail)
			}
			return m.onAction(m.changes.reply(m.scope(inDetail), &m.clip))
		},
		vReplay:      func(m *Model, inDetail bool) tea.Cmd { return m.startReplay(false, inDetail) },
		vReplayAll:   func(m *Model, _ bool) tea.Cmd { return m.startReplay(true, false) },
		vGroups:      func(m *Model, _ bool) tea.Cmd { return m.openGroups() },
		vEditPayload: func(m *Model, inDetail bool) tea.Cmd { return m.onAction(m.edit.start(m.scope(inDetail))) },
		vNextRow:     func(m *Model, _ bool) tea.Cmd { return m.stepDetail(1) },
		vPrevRow:     func(m *Model, _ bool) tea.Cmd { return m.stepDetail(-1) },
		vCloseDetail: func(m *Model, _ bool) tea.Cmd { m.detail = nil; return nil },
		vCloseGroups: func(m *Model, _ bool) tea.Cmd { m.groups = nil; return nil },
		vWide: func(m *Model, _ bool) tea.Cmd {
			if ts := m.tabs.current(); ts != nil {
				ts.toggleWide()
			}
			return nil
		},
		vScrollLeft: func(m *Model, _ bool) tea.Cmd {
			if ts := m.tabs.current(); ts != nil {
				ts.scrollSideways(-max(8, m.geo.tableW/3), m.geo.tableW)
			}
			return nil
		},
		vScrollRight: func(m *Model, _ bool) tea.Cmd {
			if ts := m.tabs.current(); ts != nil {
				ts.scrollSideways(max(8, m.geo.tableW/3), m.geo.tableW)
			}
			return nil
		},
		vNextView: func(m *Model, _ bool) tea.Cmd { return m.saidInfo(m.tabs.stepView(1)) },
		vPrevView: func(m *Model, _ bool) tea.Cmd { return m.saidInfo(m.tabs.stepView(-1)) },
		vCommand: func(m *Model, _ bool) tea.Cmd {
			m.cmd.open, m.cmd.cycle = true, nil
			m.cmd.input.SetValue("")
			return nil
		},
	}
}

// The table's keys, in the order they are matched. The view's keys work on a broken tab too;
// the rows' need rows.
var (
	tableViewVerbs = []keyVerb{
		{func(k *KeyMap) key.Binding { return k.Quit }, vQuit},
		{func(k *KeyMap) key.Binding { return k.Help }, vHelp},
		{func(k *KeyMap) key.Binding { return k.Refresh }, vRefresh},
		{func(k *KeyMap) key.Binding { return k.Cancel }, vCancelRun},
		{func(k *KeyMap) key.Binding { return k.Progress }, vProgress},
		{func(k *KeyMap) key.Binding { return k.Preview }, vPreview},
		{func(k *KeyMap) key.Binding { return k.Clear }, vClear},
		{func(k *KeyMap) key.Binding { return k.Command }, vCommand},
		{func(k *KeyMap) key.Binding { return k.Wide }, vWide},
		{func(k *KeyMap) key.Binding { return k.ScrollLeft }, vScrollLeft},
		{func(k *KeyMap) key.Binding { return k.ScrollRight }, vScrollRight},
		{func(k *KeyMap) key.Binding { return k.NextView }, vNextView},
		{func(k *KeyMap) key.Binding { return k.PrevView }, vPrevView},
	}
	tableRowVerbs = []keyVerb{
		{func(k *KeyMap) key.Binding { return k.Filter }, vFilter},
		{func(k *KeyMap) key.Binding { return k.Detail }, vDetail},
		{func(k *KeyMap) key.Binding { return k.Sort }, vSort},
		{func(k *KeyMap) key.Binding { return k.SetStatus }, vSetStatus},
		{func(k *KeyMap) key.Binding { return k.ClearError }, vClearError},
		{func(k *KeyMap) key.Binding { return k.Undo }, vUndo},
		{func(k *KeyMap) key.Binding { return k.Discard }, vDiscard},
		{func(k *KeyMap) key.Binding { return k.Requeue }, vRequeue},
		{func(k *KeyMap) key.Binding { return k.Copy }, vCopy},
		{func(k *KeyMap) key.Binding { return k.CopyLink }, vCopyLink},
		{func(k *KeyMap) key.Binding { return k.Reply }, vReply},
		{func(k *KeyMap) key.Binding { return k.Replay }, vReplay},
		{func(k *KeyMap) key.Binding { return k.ReplayAll }, vReplayAll},
		{func(k *KeyMap) key.Binding { return k.Groups }, vGroups},
		{func(k *KeyMap) key.Binding { return k.EditPayload }, vEditPayload},
	}
)

// markedAction: the marks of ts are now n (V): the toast that says so holds while they are.
type markedAction struct {
	ts *tabState
	n  int
}

// tabChangedAction: another tab is on screen.
type tabChangedAction struct{}

func (markedAction) isAction()     {}
func (tabChangedAction) isAction() {}

// Update handles a key in the table: the tabs, the cursor (a page is tableH, set by the
// parent), the marks; what else the table offers goes up as a keyAction. The view's keys work
// on a broken tab too; the rest need rows. The mouse wheel moves the cursor.
func (t tabSet) Update(msg tea.Msg) (tabSet, action) {
	if wm, ok := msg.(tea.MouseWheelMsg); ok {
		t.wheel(wm)
		return t, nil
	}
	km, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return t, nil
	}
	k := t.c.keys
	if v, ok := matchVerb(km, k, tableViewVerbs[:2]); ok { // quit and help come first
		return t, keyAction{v: v}
	}
	if ts := t.current(); ts != nil && ts.waiting() && len(t.held) < maxHeldKeys {
		t.held = append(t.held, km) // carried out once the filter applies (releaseHeld)
		return t, nil
	}
	if i, ok := t.tabKey(km, k); ok {
		if i != t.active && i >= 0 && i < len(t.list) {
			t.active = i
			return t, tabChangedAction{}
		}
		return t, nil
	}
	if v, ok := matchVerb(km, k, tableViewVerbs[2:]); ok {
		return t, keyAction{v: v}
	}
	ts := t.current()
	if ts == nil || ts.data == nil || ts.navKey(km, k, t.tableH) {
		return t, nil // a broken tab: nothing below applies
	}
	switch {
	case key.Matches(km, k.Mark):
		ts.toggleMark()
		ts.move(1, t.tableH)
		return t, nil
	case key.Matches(km, k.MarkAll):
		ts.markVisible()
		return t, markedAction{ts, ts.nMarked}
	case key.Matches(km, k.UnmarkAll):
		ts.unmarkAll()
		return t, nil
	}
	if v, ok := matchVerb(km, k, tableRowVerbs); ok {
		return t, keyAction{v: v}
	}
	return t, nil
}

// wheel moves the cursor of the active tab three rows.
func (t *tabSet) wheel(msg tea.MouseWheelMsg) {
	ts := t.current()
	if ts == nil || ts.data == nil {
		return
	}
	switch msg.Button {
	case tea.MouseWheelDown:
		ts.move(3, t.tableH)
	case tea.MouseWheelUp:
		ts.move(-3, t.tableH)
	}
}

// tabKey is the tab a key selects (next, previous, 1-3), and whether it is such a key.
func (t *tabSet) tabKey(msg tea.KeyPressMsg, k *KeyMap) (int, bool) {
	n := len(t.list)
	switch {
	case key.Matches(msg, k.NextTab):
		if n == 0 {
			return t.active, true
		}
		return (t.active + 1) % n, true
	case key.Matches(msg, k.PrevTab):
		if n == 0 {
			return t.active, true
		}
		return (t.active - 1 + n) % n, true
	case key.Matches(msg, k.Tab1):
		return 0, true
	case key.Matches(msg, k.Tab2):
		return 1, true
	case key.Matches(msg, k.Tab3):
		return 2, true
	}
	return 0, false
}

// navKey moves the cursor (h rows to a page); false for a key that isn't a move.
func (ts *tabState) navKey(msg tea.KeyPressMsg, k *KeyMap, h int) bool {
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
