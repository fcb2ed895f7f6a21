// The action vocabulary and the root's dispatch. Components never reach into the app: their
// Update returns an action, what they ask of the app, and the root carries it out here
// (onAction, onEffect). The generic actions, which any component may return, are declared
// below; the others beside the component that returns them (keyAction in keys.go, the run
// views' in replayrun.go, watching's in watch.go, a dialog's answer in its dialog's file).

package tui

import tea "charm.land/bubbletea/v2"

// action is what a component asks of the app from its Update. nil is nothing to do (a
// dialog: still open).
type action interface{ isAction() }

// The generic actions: any component may return them.
type (
	// actions is several actions, carried out in order.
	actions []action
	// cmdAction: run cmd (a wait off the UI goroutine).
	cmdAction struct{ cmd tea.Cmd }
	// toastAction: a toast of level.
	toastAction struct {
		level toastLevel
		text  string
	}
	// dialogAction: open d.
	dialogAction struct{ d dialog }
	// closeAction: the dialog was dismissed; nothing happens.
	closeAction struct{}
	// writeAction: start the write op (Model.runWrite).
	writeAction struct{ op writeOp }
	// cancelNoteAction: the toast saying a run is cancelling (one's own or a watched one).
	cancelNoteAction struct{ text string }
)

func (actions) isAction()          {}
func (cmdAction) isAction()        {}
func (toastAction) isAction()      {}
func (dialogAction) isAction()     {}
func (closeAction) isAction()      {}
func (writeAction) isAction()      {}
func (cancelNoteAction) isAction() {}

// onAction carries out what a component returned: a dialog's answer, a key a view handed up
// (keyAction: verbs), a copy; the rest (onEffect) is common to every component.
func (m *Model) onAction(a action) tea.Cmd {
	switch a := a.(type) {
	case nil:
		return nil
	case keyAction:
		return verbs[a.v](m, a.inDetail)
	case copyAction:
		return m.onAction(m.clip.copyText(a.what, a.text))
	case pickGroupAction:
		return m.pickGroup(a.g)
	case closeAction:
		m.dialog = nil
		m.replay.pendingReplay = nil
		return nil
	case sendReplyAction:
		m.dialog = nil
		return m.sendReply(a.reply)
	case composeDoneAction:
		m.compose = nil
		return m.onReplyEdited(replyEditedMsg{reply: a.reply})
	case composeLeaveAction:
		m.compose = nil
		m.reply.kept[a.reply.id] = a.reply
		return m.toasts.sayf(toastInfo, "reply not sent: the draft is kept, %s opens it again", firstKey(m.c.keys.Reply))
	case reopenReplyAction:
		m.dialog = nil
		return m.editReply(a.reply)
	case pickStatusAction:
		m.dialog = nil
		return m.onAction(m.changes.setStatus(&m.tabs, a.status))
	case writeAction:
		return m.runWrite(a.op)
	case sortAction:
		m.dialog = nil
		m.tabs.applySort(a)
		return nil
	case confirmAction:
		m.dialog = nil
		m.tabs.unmark(a.op)
		return m.runWrite(a.op)
	case replayStartAction:
		m.dialog = nil
		return m.startRun(a.seq)
	case watchCancelAction:
		m.dialog = nil
		var act action
		m.watch, act = m.watch.Update(a)
		return m.onAction(act)
	case editStepAction:
		m.dialog = nil
		var act action
		m.edit, act = m.edit.Update(a)
		return m.onAction(act)
	case editorAction:
		if a.note == "" {
			return tea.Sequence(a.run)
		}
		return tea.Sequence(a.run, m.toasts.sayf(toastInfo, "%s", a.note))
	case quitAction:
		m.dialog = nil
		if !m.replay.running() {
			return m.quit()
		}
		return m.cancelAndQuit()
	}
	return m.onEffect(a)
}

// onEffect carries out the actions every component may return (onAction carries out the
// rest): several in order, a Cmd, a toast, a dialog, the halt banner; the run views' (help,
// cancel, refresh, a note), watching's (watchState), the table's (marks, another tab).
func (m *Model) onEffect(a action) tea.Cmd {
	switch a := a.(type) {
	case actions:
		cmds := make([]tea.Cmd, 0, len(a))
		for _, x := range a {
			cmds = append(cmds, m.onAction(x))
		}
		return tea.Batch(cmds...)
	case cmdAction:
		return a.cmd
	case toastAction:
		return m.toasts.push(a.level, a.text)
	case runStartedAction:
		return m.toasts.pushWhile(toastInfo, a.text, func() bool { return m.watch.tellsOf(a.id) })
	case myRunAction:
		return m.onAction(m.replay.onMyRun(a.info))
	case showRunAction:
		// One run's view at a time, over the detail view and the filter prompt.
		if a.watched {
			m.replay.showRun = false
		} else {
			m.watch.show = false
		}
		m.detail = nil
		m.prompt.open = false
		if a.spin {
			return m.spinner.Tick
		}
	case haltAction:
		m.replay.halt, m.replay.haltTab = a.h, a.tab
	case dialogAction:
		m.dialog = a.d
	case cancelNoteAction:
		return m.cancelNote(a.text)
	case cancelRunAction:
		return m.onAction(m.replay.cancel())
	case markedAction:
		// The toast tells of the marks as they are: it goes when they change (V, space, a
		// write) or the tab does.
		return m.toasts.pushWhile(toastInfo, itoa(a.n)+" marked", func() bool { return m.tabs.current() == a.ts && a.ts.nMarked == a.n })
	case tabChangedAction:
		// The info toasts go: they told of the tab that was on screen ("2 set to done · u
		// undoes"); errors stay.
		m.toasts.dismissInfo()
	}
	return nil
}
