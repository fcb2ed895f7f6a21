package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/triage-dev/triage/model"
)

// fakeMailer drafts "To: ...\n\n> message", refuses a draft holding "BAD", and fails the
// send while fail is set.
type fakeMailer struct {
	mu   sync.Mutex
	sent []string
	fail error
}

func (f *fakeMailer) Draft(t *model.Table, r *model.Record) (string, error) {
	return "To: " + t.Get(r, model.FEmail) + "\nSubject: Re: hi\n\n> " + t.Get(r, model.FMessage) + "\n", nil
}

func (f *fakeMailer) Check(drafted, edited string) (ReplyInfo, error) {
	switch {
	case drafted == edited:
		return ReplyInfo{}, fmt.Errorf("%w: the draft was not changed", ErrReplyNotWritten)
	case strings.Contains(edited, "BAD"):
		return ReplyInfo{}, errors.New(`unknown header "BAD"`)
	}
	return ReplyInfo{To: "ann@example.com", Subject: "Re: hi"}, nil
}

func (f *fakeMailer) Send(_ context.Context, _, edited string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return "", f.fail
	}
	f.sent = append(f.sent, edited)
	return "to ann@example.com via smtp", nil
}

// The reply's steps once the editor is back: an unchanged draft is not sent; one that can't
// be sent offers the editor again; a yes sends it and sets the row to replied; a failed send
// keeps the draft, which m opens again; a send that may have gone out says so.
func TestReplyMailSteps(t *testing.T) {
	fm := &fakeMailer{}
	m := newLoaded(t, testWorkbook(t), 100, 30, func(o *Options) { o.Mailer = fm })
	ts := m.tabs.current()
	r, _ := ts.current()
	drafted, _ := fm.Draft(ts.data.table, r)
	edited := func(text string) replyEditedMsg {
		return replyEditedMsg{reply: replyMail{tab: ts.name(), id: r.ID, drafted: drafted, edited: text}}
	}
	send(m, edited(drafted))
	if m.dialog != nil || !strings.Contains(toastTexts(m), "reply not sent: no reply written") {
		t.Errorf("an unchanged draft: dialog %T, toasts %q", m.dialog, toastTexts(m))
	}
	send(m, edited(drafted+"BAD\n"))
	if d, ok := m.dialog.(confirm); !ok || !strings.Contains(d.question, "can't be sent") {
		t.Fatalf("a draft that can't be sent: %T", m.dialog)
	}
	keys(m, "esc")
	send(m, edited("Hello Ann,\n\nyes.\n"+drafted))
	d, ok := m.dialog.(confirm)
	if !ok || !strings.Contains(d.question, "Send the reply to ann@example.com?") {
		t.Fatalf("the question: %T %+v", m.dialog, d)
	}
	// The send fails: the draft is kept, and m would open it again.
	fm.fail = errors.New("connection refused")
	for _, msg := range cmdMsgs(t, send(m, press("y"))) {
		send(m, msg)
	}
	if _, kept := m.reply.kept[r.ID]; !kept || !strings.Contains(toastTexts(m), "reply not sent: connection refused") {
		t.Errorf("a failed send: kept %v, toasts %q", kept, toastTexts(m))
	}
	// It may have gone out: said so, kept.
	fm.fail = fmt.Errorf("%w: the answer after the message was lost", model.ErrMayHaveLanded)
	send(m, edited("Hello Ann,\n\nyes.\n"+drafted))
	for _, msg := range cmdMsgs(t, send(m, press("y"))) {
		send(m, msg)
	}
	if !strings.Contains(toastTexts(m), "may have been sent") {
		t.Errorf("a send that may have landed: %q", toastTexts(m))
	}
	// Sent: the row is set to replied.
	fm.fail = nil
	send(m, edited("Hello Ann,\n\nyes.\n"+drafted))
	for _, msg := range cmdMsgs(t, send(m, press("y"))) {
		send(m, msg)
	}
	if len(fm.sent) != 1 || !strings.Contains(fm.sent[0], "Hello Ann") {
		t.Fatalf("sent %q", fm.sent)
	}
	if _, kept := m.reply.kept[r.ID]; kept {
		t.Error("a sent reply's draft is still kept")
	}
	if !m.writes.writing || m.writes.inflight.edits[0].Set[model.FStatus] != "replied" {
		t.Errorf("the row is not being set to replied: writing %v", m.writes.writing)
	}
}

// Over triage serve the reply is written in the TUI's composer (an editor there would run on
// the shared host): m opens it on the draft, what is typed goes in, ctrl+s ends it and the
// question comes, y sends; esc leaves it with the draft kept, and m opens that again.
func TestReplyComposerOverServe(t *testing.T) {
	fm := &fakeMailer{}
	m := newLoaded(t, testWorkbook(t), 100, 30, func(o *Options) { o.Mailer = fm; o.Remote = true })
	keys(m, "m")
	if m.compose == nil {
		t.Fatalf("over serve m opened no composer; toasts %q", toastTexts(m))
	}
	if out := plainScreen(m); !strings.Contains(out, "Reply · ctrl+s ends it") || !strings.Contains(out, "To: ") {
		t.Errorf("the composer:\n%s", out)
	}
	typeText(m, "Thanks, Ann!")
	keys(m, "esc")
	if m.compose != nil || !strings.Contains(toastTexts(m), "the draft is kept") {
		t.Fatalf("esc: composer %v, toasts %q", m.compose != nil, toastTexts(m))
	}
	keys(m, "m")
	if m.compose == nil || !strings.Contains(m.compose.ta.Value(), "Thanks, Ann!") {
		t.Fatal("m doesn't open the kept draft again")
	}
	keys(m, "ctrl+s")
	if d, ok := m.dialog.(confirm); !ok || !strings.Contains(d.question, "Send the reply to") {
		t.Fatalf("ctrl+s: %T", m.dialog)
	}
	for _, msg := range cmdMsgs(t, send(m, press("y"))) {
		send(m, msg)
	}
	// What was typed went where the reply is written: below the headers, above the quote.
	if len(fm.sent) != 1 || !strings.HasPrefix(fm.sent[0], "To: ada@example.com\nSubject: Re: hi\n\nThanks, Ann!") {
		t.Errorf("sent %q", fm.sent)
	}
}

// Over triage serve, a viewer doesn't send mail in the site's name: m copies the link and says
// who can send.
func TestReplyByAViewerIsTheLink(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 100, 30, func(o *Options) {
		o.Mailer, o.Remote, o.Access, o.User = &fakeMailer{}, true, model.AccessViewer, "vera"
	})
	texts := clipboardTexts(t, send(m, press("m")))
	if m.compose != nil || len(texts) == 0 || !strings.HasPrefix(texts[0], "mailto:") || !strings.Contains(toastTexts(m), "vera is a viewer: only a triager or an operator sends a reply") {
		t.Errorf("a viewer's m: composer %v, copied %q, toasts %q", m.compose != nil, texts, toastTexts(m))
	}
}
