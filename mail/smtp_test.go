package mail

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"mime/quotedprintable"
	"net"
	netmail "net/mail"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/triage-dev/triage/config"
)

// login is the test server's account and the Mailer's settings for it.
var login = config.MailSection{User: "ada@example.com", Password: "env:SMTP_PW"}

var loginEnv = map[string]string{"SMTP_PW": "s3cret pass"}

// parsed is a received message read with net/mail: its header, and the body decoded.
func parsed(t *testing.T, data []byte) (netmail.Header, string) {
	t.Helper()
	msg, err := netmail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("the message does not parse: %v\n%s", err, data)
	}
	if cte := msg.Header.Get("Content-Transfer-Encoding"); cte != "quoted-printable" {
		t.Fatalf("Content-Transfer-Encoding %q", cte)
	}
	body, err := io.ReadAll(quotedprintable.NewReader(msg.Body))
	if err != nil {
		t.Fatal(err)
	}
	return msg.Header, strings.ReplaceAll(string(body), "\r\n", "\n")
}

// decoded is a header's value with its encoded words decoded.
func decoded(t *testing.T, h netmail.Header, name string) string {
	t.Helper()
	v, err := new(mime.WordDecoder).DecodeHeader(h.Get(name))
	if err != nil {
		t.Fatalf("%s %q: %v", name, h.Get(name), err)
	}
	return v
}

// TestSendOverSTARTTLS: a reply drafted from a message, edited and read back goes over
// STARTTLS with AUTH PLAIN to a real server, and arrives as written: the envelope, every
// header, the body decoded, non-ASCII names and subjects round trip.
func TestSendOverSTARTTLS(t *testing.T) {
	ts := startServer(t, serverOpts{startTLS: true, user: "ada@example.com", pass: "s3cret pass"})
	sec := login
	sec.From = "Zoë Owner <owner@example.com>"
	sec.Signature = "Zoë\nexample.com"
	m := smtpMailer(t, ts, sec, loginEnv)
	tb, r := oneMessage(t, "José Müller", "jose@example.org", "Grüße aus München", "Hallo,\nwie geht's?")
	draft, err := m.Draft(tb, r, "")
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(draft, "Cc: \n", "Cc: Ann <ann@example.net>\n", 1)
	edited = strings.Replace(edited, "Bcc: \n", "Bcc: archive@example.com\n", 1)
	edited = writeReply(t, edited, "Danke, José! Alles gut.")
	rp, err := ParseDraft(draft, edited)
	if err != nil {
		t.Fatal(err)
	}
	sent, err := m.Send(context.Background(), rp)
	if err != nil {
		t.Fatal(err)
	}
	got := ts.messages()
	if len(got) != 1 {
		t.Fatalf("%d messages on the server", len(got))
	}
	g := got[0]
	if !g.tls || g.authAs != "ada@example.com" {
		t.Errorf("tls %v, logged in as %q", g.tls, g.authAs)
	}
	wantRcpts := []string{"jose@example.org", "ann@example.net", "archive@example.com"}
	if g.from != "owner@example.com" || !slices.Equal(g.rcpts, wantRcpts) || !slices.Equal(sent.Recipients, wantRcpts) {
		t.Errorf("envelope from %q to %q (sent %q)", g.from, g.rcpts, sent.Recipients)
	}
	h, body := parsed(t, g.data)
	from, err := h.AddressList("From")
	if err != nil || len(from) != 1 || from[0].Name != "Zoë Owner" || from[0].Address != "owner@example.com" {
		t.Errorf("From %v %v", from, err)
	}
	to, err := h.AddressList("To")
	if err != nil || len(to) != 1 || to[0].Name != "José Müller" || to[0].Address != "jose@example.org" {
		t.Errorf("To %v %v", to, err)
	}
	cc, err := h.AddressList("Cc")
	if err != nil || len(cc) != 1 || cc[0].Address != "ann@example.net" {
		t.Errorf("Cc %v %v", cc, err)
	}
	if h.Get("Bcc") != "" || bytes.Contains(g.data, []byte("archive@")) {
		t.Errorf("the Bcc address is in the message:\n%s", g.data)
	}
	if s := decoded(t, h, "Subject"); s != "Re: Grüße aus München" {
		t.Errorf("Subject %q", s)
	}
	if d, err := h.Date(); err != nil || !d.Equal(time.Date(2026, 3, 3, 9, 30, 0, 0, time.UTC)) {
		t.Errorf("Date %v %v", d, err)
	}
	if id := h.Get("Message-ID"); id != sent.MessageID || !strings.HasPrefix(id, "<") || !strings.HasSuffix(id, "@example.com>") || len(id) != len("<@example.com>")+32 {
		t.Errorf("Message-ID %q (sent %q)", id, sent.MessageID)
	}
	if h.Get("MIME-Version") != "1.0" || h.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Errorf("MIME headers %q %q", h.Get("MIME-Version"), h.Get("Content-Type"))
	}
	want := "Danke, José! Alles gut.\n\nOn Mon, 2 Mar 2026 at 14:05, José Müller wrote:\n> Hallo,\n> wie geht's?\n\n-- \nZoë\nexample.com\n"
	if body != want {
		t.Errorf("body\n%q\nwant\n%q", body, want)
	}
	if !ascii(string(g.data)) {
		t.Errorf("the message is not 7-bit:\n%s", g.data)
	}
	if sent.Via != ts.addr+" (STARTTLS)" {
		t.Errorf("Via %q", sent.Via)
	}
}

// TestHostileCellsAddNoHeader: names and subjects holding CR, LF, NUL, bidi controls or a
// thousand characters never add a header, end one or make a line too long, whether they come
// through a draft or straight in a Reply.
func TestHostileCellsAddNoHeader(t *testing.T) {
	ts := startServer(t, serverOpts{startTLS: true, user: "ada@example.com", pass: "s3cret pass"})
	m := smtpMailer(t, ts, login, loginEnv)
	long := strings.Repeat("Ö", 1000)
	cases := []struct {
		name, subject string
	}{
		{"Eve\r\nBcc: victim@x.example", "Hi\n\nbody"},
		{"Eve\nX-Injected: 1", "Subject\r\nX-Injected: 2\r\n\r\nbody"},
		{"Eve\x00\x1b[31m\u202eevil\u2066", "\u202egnp.exe\x00\x07"},
		{long, strings.Repeat("a", 1000)},
		{strings.Repeat("b", 1000), long},
		{"=?utf-8?q?Eve=0D=0ABcc:_victim@x.example?=", "=?utf-8?q?x=0D=0ABcc:_v@x.example?="},
		{`O'Brien "Bob" \ Jr. <boss@x.example>, `, "Re: Re: [ticket] \\ \"quoted\""},
		{"=?utf-8?q?Eve=0D=0A?=", "=?utf-8?b?eA0KQmNjOiB2QHguZXhhbXBsZQ==?= ünïcode"},
	}
	for i, c := range cases {
		// Through a draft: the cells become the draft's To and Subject lines.
		tb, r := oneMessage(t, c.name, "eve@example.org", c.subject, "hello")
		draft, err := m.Draft(tb, r, "")
		if err != nil {
			t.Fatal(err)
		}
		header, _, _ := strings.Cut(draft, "\n\n")
		if n := strings.Count(header, "\n"); n != 3 {
			t.Errorf("case %d: the draft's header block has %d lines:\n%s", i, n+1, header)
		}
		rp, err := ParseDraft(draft, writeReply(t, draft, "ok"))
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		// Straight in a Reply: the cells as they are.
		raw := Reply{To: []*netmail.Address{{Name: c.name, Address: "eve@example.org"}}, Subject: c.subject, Body: "ok\n"}
		for j, rp := range []Reply{rp, raw} {
			before := len(ts.messages())
			_, err := m.Send(context.Background(), rp)
			if len([]rune(rp.Subject)) > DraftSubjectMax {
				// A subject no reader reads is refused, not cut behind the writer's back.
				wantErr(t, err, "keep it under 250")
				continue
			}
			if err != nil {
				t.Fatalf("case %d.%d: %v", i, j, err)
			}
			g := ts.messages()[before]
			checkClean(t, g)
		}
	}
}

// checkClean holds a received message to what the cells must not do to it.
func checkClean(t *testing.T, g received) {
	t.Helper()
	if !slices.Equal(g.rcpts, []string{"eve@example.org"}) {
		t.Errorf("envelope recipients %q", g.rcpts)
	}
	head, _, _ := bytes.Cut(g.data, []byte("\r\n\r\n"))
	for _, l := range strings.Split(string(head), "\r\n") {
		if len(l) > 998 {
			t.Errorf("a header line of %d characters", len(l))
		}
		if strings.ContainsAny(l, "\r\n\x00") {
			t.Errorf("a raw control in %q", l)
		}
	}
	h, body := parsed(t, g.data)
	var names []string
	for k := range h {
		names = append(names, k)
	}
	slices.Sort(names)
	want := []string{"Content-Transfer-Encoding", "Content-Type", "Date", "From", "Message-Id", "Mime-Version", "Subject", "To"}
	if !slices.Equal(names, want) {
		t.Errorf("headers %q, want %q\n%s", names, want, g.data)
	}
	to, err := h.AddressList("To")
	if err != nil || len(to) != 1 || to[0].Address != "eve@example.org" {
		t.Fatalf("To %v %v\n%s", to, err, g.data)
	}
	subject := decoded(t, h, "Subject")
	for _, s := range []string{to[0].Name, subject} {
		if strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) || r == '\u202e' || r == '\u2066' }) {
			t.Errorf("a control character came through: %q", s)
		}
		if strings.Contains(s, "victim") && strings.Contains(s, "\n") {
			t.Errorf("a line break in %q", s)
		}
	}
	if n := len([]rune(to[0].Name)); n > NameMax {
		t.Errorf("a name of %d characters", n)
	}
	if n := len([]rune(subject)); n > DraftSubjectMax {
		t.Errorf("a subject of %d characters", n)
	}
	if !strings.HasPrefix(body, "ok\n") {
		t.Errorf("body %q", body)
	}
}

// TestSMTPFailuresSayWhatToDo: each way a send fails against the real server says what
// failed and what to check, and sends nothing.
func TestSMTPFailuresSayWhatToDo(t *testing.T) {
	rp := Reply{To: []*netmail.Address{{Name: "Ann", Address: "ann@example.org"}}, Subject: "Re: hi", Body: "thanks\n"}
	ctx := context.Background()

	t.Run("wrong password", func(t *testing.T) {
		ts := startServer(t, serverOpts{startTLS: true, user: "ada@example.com", pass: "s3cret pass"})
		m := smtpMailer(t, ts, login, map[string]string{"SMTP_PW": "wrong"})
		_, err := m.Send(ctx, rp)
		wantErr(t, err, "refused the login of ada@example.com (535", "check [mail] user and the password in $SMTP_PW", "nothing was sent")
		if strings.Contains(err.Error(), "wrong") {
			t.Errorf("the error quotes the password: %v", err)
		}
		if len(ts.messages()) != 0 || !slices.Equal(ts.logins(), []string{"ada@example.com:refused"}) {
			t.Errorf("messages %d, logins %q", len(ts.messages()), ts.logins())
		}
	})
	t.Run("password not in the environment", func(t *testing.T) {
		ts := startServer(t, serverOpts{startTLS: true, user: "ada@example.com", pass: "s3cret pass"})
		m := smtpMailer(t, ts, login, nil)
		_, err := m.Send(ctx, rp)
		wantErr(t, err, "SMTP_PW, which is not set", "export SMTP_PW")
		if len(ts.logins()) != 0 {
			t.Errorf("it logged in: %q", ts.logins())
		}
	})
	t.Run("recipient refused", func(t *testing.T) {
		ts := startServer(t, serverOpts{startTLS: true, user: "ada@example.com", pass: "s3cret pass", refuse: "nobody@example.org"})
		m := smtpMailer(t, ts, login, loginEnv)
		bad := rp
		bad.Cc = []*netmail.Address{{Address: "nobody@example.org"}}
		_, err := m.Send(ctx, bad)
		wantErr(t, err, "refused the address nobody@example.org (550 No such user here)", "check the address", "nothing was sent")
		if errors.Is(err, ErrMayHaveBeenSent) || len(ts.messages()) != 0 {
			t.Errorf("may have been sent %v; %d messages", errors.Is(err, ErrMayHaveBeenSent), len(ts.messages()))
		}
	})
	t.Run("server gone", func(t *testing.T) {
		ts := startServer(t, serverOpts{startTLS: true})
		ts.stop()
		m := smtpMailer(t, ts, config.MailSection{}, nil)
		_, err := m.Send(ctx, rp)
		wantErr(t, err, "nothing answers at "+ts.addr+" (connection refused)", "check [mail] smtp's host and port", "nothing was sent")
	})
	t.Run("no STARTTLS", func(t *testing.T) {
		ts := startServer(t, serverOpts{insecureAuth: true, user: "ada@example.com", pass: "s3cret pass"})
		m := smtpMailer(t, ts, login, loginEnv)
		_, err := m.Send(ctx, rp)
		wantErr(t, err, "does not offer STARTTLS", "tls = \"implicit\"", "nothing was sent")
		if len(ts.logins()) != 0 || len(ts.messages()) != 0 {
			t.Errorf("the password or the message went in plain text: logins %q, %d messages", ts.logins(), len(ts.messages()))
		}
	})
	t.Run("untrusted certificate", func(t *testing.T) {
		ts := startServer(t, serverOpts{startTLS: true, user: "ada@example.com", pass: "s3cret pass"})
		m := smtpMailer(t, ts, login, loginEnv)
		m.RootCAs = newTestCA(t).pool // another CA than the server's
		_, err := m.Send(ctx, rp)
		wantErr(t, err, "TLS with the SMTP server "+ts.addr+" failed", "not signed by an authority this machine trusts", "nothing was sent")
		if len(ts.logins()) != 0 {
			t.Errorf("logged in over an untrusted connection: %q", ts.logins())
		}
	})
	t.Run("certificate for another host", func(t *testing.T) {
		ts := startServer(t, serverOpts{startTLS: true})
		_, port, _ := net.SplitHostPort(ts.addr)
		// localhost is this machine, but not a name the certificate (for 127.0.0.1) has.
		m := smtpMailer(t, ts, config.MailSection{SMTP: "localhost:" + port}, nil)
		_, err := m.Send(ctx, rp)
		if err != nil && strings.Contains(err.Error(), "can't find the SMTP host") {
			t.Skip("localhost does not resolve here")
		}
		wantErr(t, err, "the server's certificate is not for the host in [mail] smtp", "nothing was sent")
	})
	t.Run("implicit TLS to a plain server", func(t *testing.T) {
		ts := startServer(t, serverOpts{startTLS: true})
		m := smtpMailer(t, ts, config.MailSection{TLS: "implicit"}, nil)
		_, err := m.Send(ctx, rp)
		wantErr(t, err, "did not answer in TLS", "tls = \"starttls\"")
	})
	t.Run("answer lost after the message", func(t *testing.T) {
		ts := startServer(t, serverOpts{startTLS: true, dropAfterEnd: true})
		m := smtpMailer(t, ts, config.MailSection{}, nil)
		_, err := m.Send(ctx, rp)
		wantErr(t, err, "did not answer the end of the message", "may have been sent")
		if !errors.Is(err, ErrMayHaveBeenSent) || len(ts.messages()) != 1 {
			t.Errorf("ErrMayHaveBeenSent %v, %d messages", errors.Is(err, ErrMayHaveBeenSent), len(ts.messages()))
		}
	})
}

// TestSMTPImplicitTLSAndLocalRelay: port 465's TLS from the first byte, and a relay on this
// machine without TLS when the config says tls = "none".
func TestSMTPImplicitTLSAndLocalRelay(t *testing.T) {
	rp := Reply{To: []*netmail.Address{{Address: "ann@example.org"}}, Subject: "Re: hi", Body: "thanks\n"}
	for _, c := range []struct {
		name string
		opts serverOpts
		tls  string
		via  string
	}{
		{"implicit", serverOpts{implicit: true, user: "ada@example.com", pass: "s3cret pass"}, "implicit", "TLS"},
		{"none", serverOpts{insecureAuth: true, user: "ada@example.com", pass: "s3cret pass"}, "none", "no TLS"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ts := startServer(t, c.opts)
			sec := login
			sec.TLS = c.tls
			m := smtpMailer(t, ts, sec, loginEnv)
			sent, err := m.Send(context.Background(), rp)
			if err != nil {
				t.Fatal(err)
			}
			got := ts.messages()
			if len(got) != 1 || got[0].tls != (c.tls == "implicit") || got[0].authAs != "ada@example.com" {
				t.Fatalf("got %+v", got)
			}
			if sent.Via != ts.addr+" ("+c.via+")" {
				t.Errorf("Via %q", sent.Via)
			}
		})
	}
}

// TestSMTPCancel: a cancel while the server says nothing ends the send at once, saying so;
// nothing was sent.
func TestSMTPCancel(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err == nil {
			accepted <- c // and never greet
		}
	}()
	m, err := New(config.MailSection{From: "owner@example.com", SMTP: l.Addr().String()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := m.Send(ctx, Reply{To: []*netmail.Address{{Address: "ann@example.org"}}, Subject: "x", Body: "y\n"})
		errc <- err
	}()
	c := <-accepted
	defer c.Close()
	cancel()
	err = <-errc
	wantErr(t, err, "cancelled", "nothing was sent")
	if errors.Is(err, ErrMayHaveBeenSent) {
		t.Errorf("a send cancelled before the message says it may have been sent: %v", err)
	}
}

// TestNotConfigured: without a transport there is nothing to send with, and the TUI keeps
// its mailto: link.
func TestNotConfigured(t *testing.T) {
	var nilMailer *Mailer
	m, err := New(config.MailSection{Signature: "Ada"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []*Mailer{nilMailer, m} {
		if x.Configured() || x.Via() != "" || x.From() != nil {
			t.Errorf("%v: configured", x)
		}
		if _, err := x.Send(context.Background(), Reply{}); !errors.Is(err, ErrNotConfigured) {
			t.Errorf("Send: %v", err)
		}
	}
	if _, err := New(config.MailSection{From: "owner@example.com", SMTP: "a:25", Sendmail: "/usr/sbin/sendmail"}, nil); err == nil ||
		!strings.Contains(err.Error(), "both set") || !strings.Contains(err.Error(), "triage config check") {
		t.Errorf("New of a section config check refuses: %v", err)
	}
}
