package mail

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	netmail "net/mail"
	"sort"
	"strings"
	"time"

	"github.com/triage-dev/triage/config"
)

// ErrNotConfigured is Send's error when [mail] names no transport: the caller offers the
// mailto: link instead (Configured says so beforehand).
var ErrNotConfigured = errors.New("sending mail is not configured: set [mail] smtp or sendmail (and from) in the config")

// ErrMayHaveBeenSent is wrapped by Send's error when the message was handed over but the
// answer was lost (a connection cut after the message's end, a sendmail program killed at
// the timeout): the reply may have gone out, as a store's write that wraps
// model.ErrMayHaveLanded may have landed. Sending it again may send it twice.
var ErrMayHaveBeenSent = errors.New("it may have been sent: look in the recipient's or your own mail before sending it again")

// Mailer drafts and sends replies as `[mail]` says. Build it with New; the zero of a nil
// *Mailer is "not configured": Configured is false and Draft has no template or signature.
// Its methods may be called from several goroutines at once.
type Mailer struct {
	sec    config.MailSection
	from   *netmail.Address
	getenv func(string) string

	// RootCAs are the certificate authorities an SMTP server's certificate is checked
	// against; nil: this machine's. A test adds the one that signed its server's
	// certificate; nothing ever turns the check off.
	RootCAs *x509.CertPool
	// Now is the clock of the Date header; nil: time.Now.
	Now func() time.Time
}

// New builds the Mailer of a `[mail]` section. getenv reads the SMTP password (password =
// "env:NAME") when a reply is sent, so a variable exported after startup is seen, and one
// that is unset fails that send saying which. A section with any problem config.CheckMail
// finds is refused with them all (the same rules `triage config check` reports, invariant
// 12). An empty section is a Mailer that is not Configured.
func New(sec config.MailSection, getenv func(string) string) (*Mailer, error) {
	if probs := config.CheckMail(sec); len(probs) > 0 {
		msgs := make([]string, len(probs))
		for i, p := range probs {
			msgs[i] = p.Msg
		}
		return nil, fmt.Errorf("the config's [mail] section has %d problem(s) (triage config check shows their lines): %s", len(probs), strings.Join(msgs, "; "))
	}
	m := &Mailer{sec: sec, getenv: getenv}
	if from := strings.TrimSpace(sec.From); from != "" {
		a, err := netmail.ParseAddress(from)
		if err != nil { // CheckMail read it; this is the same parser
			return nil, fmt.Errorf("mail.from: %v", err)
		}
		a.Name = HeaderText(a.Name, NameMax)
		m.from = a
	}
	return m, nil
}

// Configured reports whether replies can be sent: one transport and a sender are set. When
// false, the TUI keeps its mailto: link.
func (m *Mailer) Configured() bool {
	return m != nil && m.from != nil && m.sec.Transport() != ""
}

// Via says how replies leave, for a toast or a log line: "smtp.example.com:587 (STARTTLS)",
// "sendmail /usr/sbin/sendmail", or "" when not configured.
func (m *Mailer) Via() string {
	if !m.Configured() {
		return ""
	}
	if m.sec.Transport() == config.MailViaSendmail {
		return "sendmail " + strings.TrimSpace(m.sec.Sendmail)
	}
	mode := map[string]string{config.MailTLSStartTLS: "STARTTLS", config.MailTLSImplicit: "TLS", config.MailTLSNone: "no TLS"}[m.sec.TLSMode()]
	return fmt.Sprintf("%s (%s)", strings.TrimSpace(m.sec.SMTP), mode)
}

// From is the sender replies go out as (nil when not configured).
func (m *Mailer) From() *netmail.Address {
	if m == nil || m.from == nil {
		return nil
	}
	a := *m.from
	return &a
}

// Templates are the names of the configured reply templates, sorted.
func (m *Mailer) Templates() []string {
	if m == nil {
		return nil
	}
	out := make([]string, 0, len(m.sec.Templates))
	for k := range m.sec.Templates {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// DefaultTemplate is the template a draft starts from unless the person picks another
// ("" for none): [mail] default_template.
func (m *Mailer) DefaultTemplate() string {
	if m == nil {
		return ""
	}
	return strings.TrimSpace(m.sec.DefaultTemplate)
}

func (m *Mailer) template(name string) (string, bool) {
	if m == nil {
		return "", false
	}
	t, ok := m.sec.Templates[name]
	return t, ok
}

func (m *Mailer) templateList() string {
	names := m.Templates()
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// signature is the configured signature without its "-- " line (the draft writes it), ""
// when none.
func (m *Mailer) signature() string {
	if m == nil {
		return ""
	}
	s := strings.Trim(normalize(m.sec.Signature), "\n")
	for _, sep := range []string{"-- \n", "--\n"} {
		if rest, ok := strings.CutPrefix(s, sep); ok {
			s = strings.TrimLeft(rest, "\n")
			break
		}
	}
	return s
}

func (m *Mailer) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

func (m *Mailer) timeout() time.Duration { return m.sec.TimeoutDuration() }

// Sent is what Send did: the Message-ID the reply went out under, every address it went to
// (Bcc included), and the way it left (Via).
type Sent struct {
	MessageID  string
	Recipients []string
	Via        string
}

// Send builds the reply's message (Message) and hands it to the configured transport,
// within ctx and [mail] timeout, whichever ends first; it returns once the server (or the
// sendmail program) took the message. Its errors say what failed and what to check. One
// that wraps ErrMayHaveBeenSent means the reply may have gone out: the caller must not
// offer to send it again without saying so. Any other error means nothing was sent.
// ErrNotConfigured: no transport.
func (m *Mailer) Send(ctx context.Context, rp Reply) (Sent, error) {
	if !m.Configured() {
		return Sent{}, ErrNotConfigured
	}
	msg, id, err := m.Message(rp)
	if err != nil {
		return Sent{}, err
	}
	rcpts := rp.recipients()
	sent := Sent{MessageID: id, Recipients: rcpts, Via: m.Via()}
	ctx, cancel := context.WithTimeout(ctx, m.timeout())
	defer cancel()
	switch m.sec.Transport() {
	case config.MailViaSMTP:
		err = m.sendSMTP(ctx, rcpts, msg)
	default:
		err = m.sendSendmail(ctx, rcpts, msg)
	}
	if err != nil {
		return Sent{}, err
	}
	return sent, nil
}

// mayHaveLanded wraps an error after the message was handed over.
func mayHaveLanded(format string, a ...any) error {
	return fmt.Errorf("%s; %w", fmt.Sprintf(format, a...), ErrMayHaveBeenSent)
}
