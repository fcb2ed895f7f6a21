package mail

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/triage-dev/triage/config"
	"github.com/triage-dev/triage/model"
)

// sendSMTP submits msg to [mail] smtp: connect, TLS (STARTTLS required unless tls says
// implicit or none), AUTH when a user is set, MAIL, RCPT for each recipient, DATA. The whole
// session lives within ctx: its deadline caps every read and write (go-smtp sets its own per
// command, each clamped to it), and a cancel closes the connection. Until the message's end
// is written nothing has been sent, and a refused recipient aborts the whole reply; after
// it, an answer that doesn't come is ErrMayHaveBeenSent.
func (m *Mailer) sendSMTP(ctx context.Context, rcpts []string, msg []byte) error {
	addr := strings.TrimSpace(m.sec.SMTP)
	host, _, _ := net.SplitHostPort(addr)
	mode := m.sec.TLSMode()
	user := strings.TrimSpace(m.sec.User)
	var password string
	if user != "" {
		env := m.sec.PasswordEnv()
		if m.getenv != nil {
			password = m.getenv(env)
		}
		if password == "" {
			return fmt.Errorf("[mail] password reads the environment variable %s, which is not set: export %s (the SMTP password of %s) before starting triage; nothing was sent", env, env, model.SanitizeLine(user))
		}
	}
	s := &session{ctx: ctx, addr: model.SanitizeLine(addr), limit: m.timeout()}

	var d net.Dialer
	raw, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return s.dialError(err)
	}
	defer raw.Close()
	// A cancel (the person gave up, the timeout) ends whatever the session is waiting for.
	stop := context.AfterFunc(ctx, func() { raw.Close() })
	defer stop()
	deadline, _ := ctx.Deadline()
	conn := &sessionConn{Conn: raw, deadline: deadline}
	if err := conn.SetDeadline(time.Time{}); err != nil {
		return s.fail("the connection", err)
	}

	tlsConf := &tls.Config{ServerName: host, RootCAs: m.RootCAs, MinVersion: tls.VersionTLS12}
	var c *smtp.Client
	switch mode {
	case config.MailTLSImplicit:
		tc := tls.Client(conn, tlsConf)
		if err := tc.HandshakeContext(ctx); err != nil {
			return s.fail("TLS", err)
		}
		c = smtp.NewClient(tc)
	case config.MailTLSNone:
		c = smtp.NewClient(conn)
	default:
		c, err = smtp.NewClientStartTLS(conn, tlsConf)
		if err != nil {
			if strings.Contains(err.Error(), "doesn't support STARTTLS") {
				return fmt.Errorf("the SMTP server %s does not offer STARTTLS, which triage requires before it sends a password or a message: use the server's submission port (587, or 465 with tls = \"implicit\"); tls = \"none\" is for a relay on this machine; nothing was sent", s.addr)
			}
			return s.fail("the greeting", err)
		}
	}
	defer c.Close()
	// After STARTTLS the greeting is said again, over TLS: the handshake happens here.
	if err := c.Hello("localhost"); err != nil {
		return s.fail("the greeting", err)
	}
	if user != "" {
		var client sasl.Client
		switch {
		case c.SupportsAuth(sasl.Plain):
			client = sasl.NewPlainClient("", user, password)
		case c.SupportsAuth(sasl.Login):
			client = sasl.NewLoginClient(user, password)
		default:
			_, offered := c.Extension("AUTH")
			if offered == "" {
				offered = "none"
			}
			return fmt.Errorf("the SMTP server %s offers no login triage can use (PLAIN or LOGIN; it offers %s): check [mail] smtp is the server's submission port; nothing was sent", s.addr, model.SanitizeLine(offered))
		}
		if err := c.Auth(client); err != nil {
			var se *smtp.SMTPError
			if errors.As(err, &se) {
				return fmt.Errorf("the SMTP server %s refused the login of %s (%s): check [mail] user and the password in $%s; nothing was sent", s.addr, model.SanitizeLine(user), serverSaid(se), m.sec.PasswordEnv())
			}
			return s.fail("the login", err)
		}
	}
	from := m.from.Address
	if err := c.Mail(from, &smtp.MailOptions{UTF8: !ascii(append([]string{from}, rcpts...)...) && hasExt(c, "SMTPUTF8")}); err != nil {
		var se *smtp.SMTPError
		if errors.As(err, &se) {
			return fmt.Errorf("the SMTP server %s refused the sender %s (%s): check [mail] from is an address this account may send as; nothing was sent", s.addr, model.SanitizeLine(from), serverSaid(se))
		}
		return s.fail("the sender", err)
	}
	for _, to := range rcpts {
		if err := c.Rcpt(to, nil); err != nil {
			var se *smtp.SMTPError
			if errors.As(err, &se) {
				if se.Temporary() {
					return fmt.Errorf("the SMTP server %s can't take mail for %s now (%s): try again later; nothing was sent", s.addr, model.SanitizeLine(to), serverSaid(se))
				}
				return fmt.Errorf("the SMTP server %s refused the address %s (%s): check the address, or remove it; nothing was sent", s.addr, model.SanitizeLine(to), serverSaid(se))
			}
			return s.fail("the recipients", err)
		}
	}
	w, err := c.Data()
	if err != nil {
		var se *smtp.SMTPError
		if errors.As(err, &se) {
			return fmt.Errorf("the SMTP server %s refused to take the message (%s); nothing was sent", s.addr, serverSaid(se))
		}
		return s.fail("the message", err)
	}
	if _, err := w.Write(msg); err != nil {
		return s.fail("the message", err)
	}
	// From here the server may have the whole message.
	if err := w.Close(); err != nil {
		var se *smtp.SMTPError
		if errors.As(err, &se) {
			return fmt.Errorf("the SMTP server %s refused the message (%s); nothing was sent", s.addr, serverSaid(se))
		}
		return mayHaveLanded("the SMTP server %s did not answer the end of the message (%s)", s.addr, s.why(err))
	}
	_ = c.Quit() // the message is taken; a QUIT that fails changes nothing
	return nil
}

// session names an SMTP session's failures for the person: what failed, at which step, and
// what to check.
type session struct {
	ctx   context.Context
	addr  string
	limit time.Duration
}

// dialError is a connection that could not be made.
func (s *session) dialError(err error) error {
	var dns *net.DNSError
	switch {
	case s.ctx.Err() != nil:
		return s.fail("the connection", err)
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("nothing answers at %s (connection refused): check [mail] smtp's host and port, and that the server is running; nothing was sent", s.addr)
	case errors.As(err, &dns):
		return fmt.Errorf("can't find the SMTP host of %s (%s): check [mail] smtp's host name; nothing was sent", s.addr, model.SanitizeLine(dns.Err))
	}
	return fmt.Errorf("can't connect to the SMTP server %s (%s): check [mail] smtp and the network; nothing was sent", s.addr, s.why(err))
}

// fail is a failure before the message's end: nothing was sent.
func (s *session) fail(step string, err error) error {
	if errors.Is(s.ctx.Err(), context.Canceled) {
		return fmt.Errorf("sending to the SMTP server %s was cancelled (at %s); nothing was sent", s.addr, step)
	}
	if msg := tlsProblem(err); msg != "" {
		return fmt.Errorf("TLS with the SMTP server %s failed: %s; nothing was sent", s.addr, msg)
	}
	var se *smtp.SMTPError
	if errors.As(err, &se) {
		return fmt.Errorf("the SMTP server %s refused %s (%s); nothing was sent", s.addr, step, serverSaid(se))
	}
	return fmt.Errorf("the SMTP session with %s failed at %s (%s); nothing was sent", s.addr, step, s.why(err))
}

// why is a transport error in words: the session's timeout, a cancel, or the error itself.
func (s *session) why(err error) string {
	switch {
	case errors.Is(s.ctx.Err(), context.DeadlineExceeded) || isTimeout(err):
		return fmt.Sprintf("no answer within %s: check [mail] smtp's host and port (on port 465, tls = \"implicit\"), or raise [mail] timeout", s.limit)
	case s.ctx.Err() != nil:
		return "cancelled"
	}
	return model.SanitizeLine(err.Error())
}

// tlsProblem says what went wrong in a TLS handshake, or "" when err is not one.
func tlsProblem(err error) string {
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	var record tls.RecordHeaderError
	var alert tls.AlertError
	switch {
	case errors.As(err, &unknown):
		return "the server's certificate is not signed by an authority this machine trusts (a self-signed certificate?): check [mail] smtp names the provider's server, or install its CA"
	case errors.As(err, &host):
		return fmt.Sprintf("the server's certificate is not for the host in [mail] smtp (%s): use the host name the certificate names", model.SanitizeLine(host.Error()))
	case errors.As(err, &invalid):
		return fmt.Sprintf("the server's certificate is not valid (%s): the server's administrator must renew it", model.SanitizeLine(invalid.Error()))
	case errors.As(err, &verify):
		return fmt.Sprintf("the server's certificate can't be verified (%s)", model.SanitizeLine(verify.Error()))
	case errors.As(err, &record):
		return "the server did not answer in TLS: on port 587 or 25 use tls = \"starttls\" (the default); tls = \"implicit\" is for port 465"
	case errors.As(err, &alert):
		return fmt.Sprintf("the server ended the handshake (%s)", model.SanitizeLine(alert.Error()))
	}
	return ""
}

// serverSaid is an SMTP answer for a message: its code and text, sanitised and cut (a
// server's text is not ours to trust, and some are long).
func serverSaid(se *smtp.SMTPError) string {
	return fmt.Sprintf("%d %s", se.Code, cut(model.SanitizeLine(strings.TrimSpace(se.Message)), 200))
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func hasExt(c *smtp.Client, name string) bool {
	ok, _ := c.Extension(name)
	return ok
}

func ascii(ss ...string) bool {
	for _, s := range ss {
		for i := 0; i < len(s); i++ {
			if s[i] >= 0x80 {
				return false
			}
		}
	}
	return true
}

// sessionConn caps every deadline set on a connection at the session's: go-smtp sets a
// deadline per command (minutes) and clears it after, which would outlive [mail] timeout.
type sessionConn struct {
	net.Conn
	deadline time.Time
}

func (c *sessionConn) clamp(t time.Time) time.Time {
	if c.deadline.IsZero() || (!t.IsZero() && t.Before(c.deadline)) {
		return t
	}
	return c.deadline
}

// SetDeadline sets the deadline, capped at the session's.
func (c *sessionConn) SetDeadline(t time.Time) error { return c.Conn.SetDeadline(c.clamp(t)) }

// SetReadDeadline sets the read deadline, capped at the session's.
func (c *sessionConn) SetReadDeadline(t time.Time) error {
	return c.Conn.SetReadDeadline(c.clamp(t))
}

// SetWriteDeadline sets the write deadline, capped at the session's.
func (c *sessionConn) SetWriteDeadline(t time.Time) error {
	return c.Conn.SetWriteDeadline(c.clamp(t))
}
