// A real reply (neomutt's habit), when the config says how to send mail (Options.Mailer): `m`
// on an inbox message opens $VISUAL or $EDITOR on a draft (To, "Re:" subject, the message
// quoted, the signature and a template from the config), asks once the editor is closed
// whether to send it, sends it in a Cmd, and then sets the row to replied (its triaged_by and
// triaged_at stamped as for any change, and u undoes the status). A draft left as it was is
// not sent; one that can't be sent says why and reopens on a yes; a send that fails keeps the
// draft, and `m` on the row opens it again. Over `triage serve` the draft is written in the
// TUI's composer instead (composer.go): an editor there would run on the shared host. Without
// a Mailer, `m` copies the mailto: link as before.

package tui

import (
	"cmp"
	"context"
	"errors"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/triage-dev/triage/model"
)

// Mailer drafts and sends replies to inbox messages (Options.Mailer); internal/cli adapts the
// mail package to it.
type Mailer interface {
	// Draft is the text of a reply to record r of inbox table t, for the person to edit.
	Draft(t *model.Table, r *model.Record) (string, error)
	// Check reads an edited draft (drafted is what Draft gave): whom it goes to and its
	// subject, or why it can't be sent. An error wrapping ErrReplyNotWritten means the person
	// wrote no reply (the draft left as it was, or emptied).
	Check(drafted, edited string) (ReplyInfo, error)
	// Send sends the edited draft and says how it went ("to grace@example.com via smtp").
	// An error wrapping model.ErrMayHaveLanded means it may have gone out all the same.
	Send(ctx context.Context, drafted, edited string) (string, error)
}

// ReplyInfo is what the question before sending names: the recipients and the subject.
type ReplyInfo struct{ To, Subject string }

// ErrReplyNotWritten is a Mailer's answer to a draft with no reply written in it.
var ErrReplyNotWritten = errors.New("no reply written")

// replySendTimeout bounds a send, however long the Mailer would wait.
const replySendTimeout = 2 * time.Minute

// replyMail is the reply in progress: the row it answers, the draft as made and as edited.
type replyMail struct {
	tab, id         string
	drafted, edited string
}

// replyState is the replies being written, sent, or kept after a failed send (by row ID:
// `m` on that row opens the kept draft again).
type replyState struct {
	kept    map[string]replyMail
	sending bool
}

// replyEditedMsg is the editor's exit on a reply draft.
type replyEditedMsg struct {
	reply replyMail
	err   error
}

// replySentMsg is a send's outcome.
type replySentMsg struct {
	reply replyMail
	sent  string
	err   error
}

// sendReplyAction: the person said yes to sending.
type sendReplyAction struct{ reply replyMail }

// reopenReplyAction: the person said yes to editing a draft that couldn't be sent.
type reopenReplyAction struct{ reply replyMail }

func (sendReplyAction) isAction()   {}
func (reopenReplyAction) isAction() {}

// mailReply is `m` with a Mailer: the editor on the row's draft (a kept one if a send of it
// failed), or why not.
func (m *Model) mailReply(inDetail bool) tea.Cmd {
	ts, r := m.scope(inDetail).replyRow()
	if r == nil {
		return nil
	}
	t := ts.data.table
	if t.Config.Role != model.RoleInbox {
		return m.toasts.sayf(toastInfo, "%s (reply) works on the inbox only", firstKey(m.c.keys.Reply))
	}
	if m.reply.sending {
		return m.toasts.sayf(toastInfo, "a reply is being sent; try again when it is")
	}
	if !roleAllows(m.c.role, model.AccessTriager) {
		// Mail in the site's name is a triager's to send: a viewer gets the link to send
		// from their own mail, if at all.
		return tea.Batch(m.toasts.sayf(toastInfo, "%s is a %s: only %s sends a reply from here; the mailto: link instead", cellLine(m.c.user), m.c.role, rolesThatCan(model.AccessTriager)),
			m.onAction(m.changes.reply(m.scope(inDetail), &m.clip)))
	}
	rm, ok := m.reply.kept[r.ID]
	if !ok {
		draft, err := m.opts.Mailer.Draft(t, r)
		if err != nil {
			return m.toasts.sayf(toastError, "no reply: %v", err)
		}
		rm = replyMail{tab: t.Config.Name, id: r.ID, drafted: draft, edited: draft}
	}
	return m.editReply(rm)
}

// editReply suspends the TUI and runs the editor on the reply's text; over triage serve it
// opens the composer instead (an editor would run on the shared host).
func (m *Model) editReply(rm replyMail) tea.Cmd {
	if m.opts.Remote {
		m.compose = newComposer(m.c, rm, m.c.width, m.geo.bodyH)
		return nil
	}
	run := &editorRun{editor: cmp.Or(m.c.editor, defaultEditor), text: rm.edited}
	return tea.Exec(run, func(err error) tea.Msg {
		rm.edited = run.out
		return replyEditedMsg{reply: rm, err: err}
	})
}

// onReplyEdited checks what the editor left and asks whether to send it.
func (m *Model) onReplyEdited(msg replyEditedMsg) tea.Cmd {
	rm := msg.reply
	if msg.err != nil {
		return m.toasts.sayf(toastError, "the editor failed: %v; nothing was sent", msg.err)
	}
	info, err := m.opts.Mailer.Check(rm.drafted, rm.edited)
	switch {
	case errors.Is(err, ErrReplyNotWritten):
		delete(m.reply.kept, rm.id)
		return m.toasts.sayf(toastInfo, "reply not sent: %v", err)
	case err != nil:
		d := newConfirm(m.c, "This reply can't be sent. Edit it again?", []string{model.SanitizeText(err.Error())}, writeOp{})
		d.yes, d.yesLabel = reopenReplyAction{rm}, "edit"
		return m.onAction(dialogAction{d})
	}
	notes := []string{"Subject: " + cellLine(info.Subject)}
	if body := replyBodyStart(rm.edited, 3); body != "" {
		notes = append(notes, body)
	}
	if ts := m.tabs.named(rm.tab); ts != nil && ts.data != nil && ts.data.table.HasStatus(statusReplied) {
		notes = append(notes, "Once it is sent, the row is set to "+statusReplied+" ("+firstKey(m.c.keys.Undo)+" undoes that, not the mail).")
	}
	d := newConfirm(m.c, "Send the reply to "+cellLine(info.To)+"?", notes, writeOp{})
	d.yes, d.yesLabel = sendReplyAction{rm}, "send"
	m.reply.kept[rm.id] = rm // a no keeps the draft: m opens it again
	return m.onAction(dialogAction{d})
}

// replyBodyStart is the first n lines of a draft's body (after its headers), for the question.
func replyBodyStart(draft string, n int) string {
	_, body, _ := strings.Cut(strings.ReplaceAll(draft, "\r\n", "\n"), "\n\n")
	var lines []string
	for _, l := range strings.Split(body, "\n") {
		if l = strings.TrimRight(l, " "); l != "" && len(lines) < n {
			lines = append(lines, cellLine(l))
		}
	}
	return strings.Join(lines, " / ")
}

// sendReply sends the reply in a Cmd.
func (m *Model) sendReply(rm replyMail) tea.Cmd {
	m.reply.sending = true
	mailer, ctx := m.opts.Mailer, m.life.ctx
	return tea.Batch(m.toasts.sayf(toastInfo, "sending the reply…"), func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, replySendTimeout)
		defer cancel()
		sent, err := mailer.Send(ctx, rm.drafted, rm.edited)
		return replySentMsg{reply: rm, sent: sent, err: err}
	})
}

// onReplySent says how the send went; a sent reply sets its row to replied, a failed one keeps
// its draft.
func (m *Model) onReplySent(msg replySentMsg) tea.Cmd {
	m.reply.sending = false
	rm := msg.reply
	switch {
	case errors.Is(msg.err, model.ErrMayHaveLanded):
		m.reply.kept[rm.id] = rm
		return m.toasts.sayf(toastError, "the reply may have been sent (%v): look in your sent mail before sending it again; %s opens the draft", msg.err, firstKey(m.c.keys.Reply))
	case msg.err != nil:
		m.reply.kept[rm.id] = rm
		return m.toasts.sayf(toastError, "reply not sent: %v; %s opens the draft again", msg.err, firstKey(m.c.keys.Reply))
	}
	delete(m.reply.kept, rm.id)
	said := m.toasts.sayf(toastInfo, "reply sent %s", cellLine(msg.sent))
	ts := m.tabs.named(rm.tab)
	if ts == nil || ts.data == nil || !ts.data.table.HasStatus(statusReplied) || m.c.readOnly {
		return said
	}
	cur, _, found := ts.data.record(rm.id)
	if !found || cur.Status == statusReplied {
		return said
	}
	if why := m.canWrite(); why != "" {
		return tea.Batch(said, m.toasts.sayf(toastInfo, "not set to %s: %s", statusReplied, why))
	}
	op := writeOp{kind: writeSetStatus, tab: ts.data.table.Config.Name, edits: []model.Edit{model.SetStatus(ts.data.table, cur, statusReplied)}, status: statusReplied}
	return tea.Batch(said, m.onAction(writeAction{op}))
}

// replyOffered reports whether `m` writes and sends a reply here (a Mailer), else copies the
// mailto: link.
func (m *Model) replyOffered() bool { return m.opts.Mailer != nil }
