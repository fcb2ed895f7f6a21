// Replying to an inbox message: `m` copies a ready mailto: link (to, Re: subject, the message
// quoted) through OSC 52, then offers to set the row to replied.

package tui

import (
	"fmt"
	"net/mail"
	"net/url"
	"strings"

	"github.com/triage-dev/triage/model"
)

// statusReplied is the inbox status `m` offers to set once the reply link is copied.
const statusReplied = "replied"

// Limits of the reply link. Mail clients and browsers cut or refuse long mailto: links
// (about 2,000 characters is where the first ones give up), and percent-encoding makes
// non-ASCII text up to nine times longer: the subject is a short line and the quote is the
// message's beginning, with a note when it was shortened.
const (
	replySubjectMax = 60
	replyQuoteMax   = 1500 // characters of the message quoted
)

// replyLink is the mailto: link answering an inbox message, and whether its quote was
// shortened.
type replyLink struct {
	link      string
	to        string
	shortened bool
}

// mailtoReply builds the reply link for record r of inbox table t (RFC 6068): to the Email
// cell, subject "Re: " and the subject column if the sheet has one, else the message's first
// line, shortened; body the message quoted with "> ". Every part is sanitised before it is
// encoded (invariant 9): a control character or a bidi override percent-encoded would still
// reach the mail client decoded. A missing or invalid address is an error saying so.
func mailtoReply(t *model.Table, r *model.Record) (replyLink, error) {
	cell := strings.TrimSpace(t.Get(r, model.FEmail))
	if cell == "" {
		return replyLink{}, fmt.Errorf("this message has no email address to reply to")
	}
	addr, err := mail.ParseAddress(cell)
	if err != nil || strings.ContainsFunc(addr.Address, func(r rune) bool { return model.Unsafe(r) || r == ' ' || r == '\n' || r == '\t' }) {
		return replyLink{}, fmt.Errorf("the email address %s is not valid: no reply link copied", truncate(cellLine(cell), 40))
	}
	msg := t.Get(r, model.FMessage)
	subject := ""
	if c := headerCol(t, "subject"); c >= 0 && c < len(r.Cells) {
		subject = firstLine(r.Cells[c])
	}
	if subject == "" {
		subject = firstLine(msg)
	}
	subject = truncate(subject, replySubjectMax)
	if !strings.HasPrefix(strings.ToLower(subject), "re:") {
		subject = strings.TrimSpace("Re: " + subject)
	}
	quote, shortened := model.QuoteLines(msg, replyQuoteMax)
	var body []string
	if name := cellLine(t.Get(r, model.FName)); name != "" {
		body = append(body, "", name+" wrote:")
	} else {
		body = append(body, "", "You wrote:")
	}
	body = append(body, quote...)
	// RFC 6068 §5: a line break in the body is %0D%0A.
	link := "mailto:" + strings.ReplaceAll(mailtoEscape(addr.Address), "%40", "@") +
		"?subject=" + mailtoEscape(subject) + "&body=" + mailtoEscape(strings.Join(body, "\r\n"))
	return replyLink{link: link, to: addr.Address, shortened: shortened}, nil
}

// mailtoEscape percent-encodes a mailto: header value (RFC 6068): everything but the
// unreserved characters is encoded, as UTF-8, a space as %20 (never "+", which mail clients
// read as a plus sign), so &, =, ?, # and % in the text can't end or add a header.
func mailtoEscape(s string) string {
	return strings.ReplaceAll(url.QueryEscape(s), "+", "%20")
}

// headerCol finds an extra column by its header (case-insensitive), or -1.
func headerCol(t *model.Table, name string) int {
	for i, h := range t.Header.Headers {
		if strings.EqualFold(strings.TrimSpace(h), name) {
			return i
		}
	}
	return -1
}

// replyRow is the row m answers: the detail view's record, else the cursor row; a nil record
// when there is none.
func (sc actionScope) replyRow() (*tabState, *model.Record) {
	var ts *tabState
	var r *model.Record
	if sc.detail != nil {
		ts, r = sc.tabs.named(sc.detail.tab), &sc.detail.rec
	} else if ts = sc.tabs.current(); ts != nil && ts.data != nil {
		r, _ = ts.current()
	}
	if ts == nil || ts.data == nil {
		return nil, nil
	}
	return ts, r
}

// reply answers `m`: on an inbox row (the cursor's, or the detail's), copy the reply
// link, then offer (default No) to set the row to replied, where the tab has that status and a
// write could start.
func (ch *changes) reply(sc actionScope, cb *clipboard) action {
	ts, r := sc.replyRow()
	if r == nil {
		return nil
	}
	t := ts.data.table
	if t.Config.Role != model.RoleInbox {
		return toastAction{toastInfo, fmt.Sprintf("%s (reply) works on the inbox only: it copies a mailto: link answering a message", firstKey(ch.c.keys.Reply))}
	}
	rl, err := mailtoReply(t, r)
	if err != nil {
		return toastAction{toastError, err.Error()}
	}
	note := ""
	if rl.shortened {
		note = fmt.Sprintf(" (the quote is the first %d characters)", replyQuoteMax)
	}
	said := fmt.Sprintf("copied a mailto: reply to %s%s", truncate(cellLine(rl.to), 40), note)
	if r.Status == statusReplied || r.ID == "" || !t.HasStatus(statusReplied) || ch.c.readOnly {
		return cb.copy(rl.link, said)
	}
	if _, _, found := ts.data.record(r.ID); !found {
		return cb.copy(rl.link, said)
	}
	if why := sc.busy; why != "" {
		return actions{cb.copy(rl.link, said), toastAction{toastInfo, fmt.Sprintf("not offering to set %s: %s", statusReplied, why)}}
	}
	cur, _, _ := ts.data.record(r.ID)
	op := writeOp{kind: writeSetStatus, tab: t.Config.Name, edits: []model.Edit{model.SetStatus(t, cur, statusReplied)}, status: statusReplied}
	title := fmt.Sprintf("Set %s to %s?", rowLabel(t, cur), statusReplied)
	undo := firstKey(ch.c.keys.Undo)
	// The question says what is true of the clipboard: it comes once the copy went out, or
	// didn't (tmux dropping it), never before.
	return cb.copyThen(rl.link, said, func(copied bool) action {
		body := "The reply link is on the clipboard. Answer y once the reply is sent (" + undo + " undoes it)."
		if !copied {
			body = "Nothing was copied (see the note below). Reply to " + cellLine(rl.to) + " another way, then answer y (" + undo + " undoes it)."
		}
		return dialogAction{newConfirm(ch.c, title, []string{body}, op)}
	})
}
