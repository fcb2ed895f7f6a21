// Package replymail is the TUI's Mailer (tui.Mailer: m as a real reply) made of the mail
// package: the one adapter between the two, for triage, triage serve and their tests.
package replymail

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"strings"

	"github.com/triage-dev/triage/config"
	triagemail "github.com/triage-dev/triage/mail"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/tui"
)

// replyMailer is the TUI's Mailer: the mail package, built from the config's [mail].
type replyMailer struct{ m *triagemail.Mailer }

// New is the TUI's Mailer for a config's [mail], nil when it doesn't say how to send (the TUI
// then copies a mailto: link); an error when the section has a problem.
func New(sec config.MailSection, getenv func(string) string) (tui.Mailer, error) {
	m, err := triagemail.New(sec, getenv)
	if err != nil {
		return nil, err
	}
	if !m.Configured() {
		return nil, nil
	}
	return replyMailer{m}, nil
}

// Draft is the reply's draft, with the config's default template.
func (r replyMailer) Draft(t *model.Table, rec *model.Record) (string, error) {
	return r.m.Draft(t, rec, r.m.DefaultTemplate())
}

// Check reads the edited draft.
func (r replyMailer) Check(drafted, edited string) (tui.ReplyInfo, error) {
	rp, err := triagemail.ParseDraft(drafted, edited)
	if errors.Is(err, triagemail.ErrNotSent) {
		return tui.ReplyInfo{}, fmt.Errorf("%w: %v", tui.ErrReplyNotWritten, err)
	}
	if err != nil {
		return tui.ReplyInfo{}, err
	}
	return tui.ReplyInfo{To: addressList(append(append([]*mail.Address(nil), rp.To...), rp.Cc...)), Subject: rp.Subject}, nil
}

// Send sends the edited draft.
func (r replyMailer) Send(ctx context.Context, drafted, edited string) (string, error) {
	rp, err := triagemail.ParseDraft(drafted, edited)
	if err != nil {
		return "", err
	}
	sent, err := r.m.Send(ctx, rp)
	if errors.Is(err, triagemail.ErrMayHaveBeenSent) {
		return "", fmt.Errorf("%w: %v", model.ErrMayHaveLanded, err)
	}
	if err != nil {
		return "", err
	}
	return "to " + strings.Join(sent.Recipients, ", ") + " via " + sent.Via, nil
}

// addressList names addresses as a person reads them: "Grace Hopper <grace@example.com>".
func addressList(as []*mail.Address) string {
	var out []string
	for _, a := range as {
		if a.Name != "" {
			out = append(out, a.Name+" <"+a.Address+">")
		} else {
			out = append(out, a.Address)
		}
	}
	return strings.Join(out, ", ")
}
