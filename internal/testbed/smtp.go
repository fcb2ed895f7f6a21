package testbed

import (
	"io"
	"net"
	"sync"
	"testing"

	"github.com/emersion/go-smtp"
)

// SMTPRelay is a real SMTP server (go-smtp) on 127.0.0.1, as a relay on this machine is:
// no TLS, no login. It keeps every message it takes.
type SMTPRelay struct {
	// Addr is its host:port.
	Addr string
	mu   sync.Mutex
	got  []RelayedMail
}

// RelayedMail is one message an SMTPRelay took: the envelope and the message as sent.
type RelayedMail struct {
	From string
	To   []string
	Data []byte
}

// StartSMTPRelay serves an SMTPRelay until the test ends.
func StartSMTPRelay(t testing.TB) *SMTPRelay {
	t.Helper()
	rl := &SMTPRelay{}
	srv := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &relaySession{rl: rl}, nil }))
	srv.Domain = "localhost"
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rl.Addr = l.Addr().String()
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(l) }()
	t.Cleanup(func() { srv.Close(); l.Close(); <-done })
	return rl
}

// Messages are the messages taken so far.
func (rl *SMTPRelay) Messages() []RelayedMail {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	return append([]RelayedMail(nil), rl.got...)
}

type relaySession struct {
	rl  *SMTPRelay
	cur RelayedMail
}

func (s *relaySession) Mail(from string, _ *smtp.MailOptions) error {
	s.cur = RelayedMail{From: from}
	return nil
}

func (s *relaySession) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.cur.To = append(s.cur.To, to)
	return nil
}

func (s *relaySession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.cur.Data = b
	s.rl.mu.Lock()
	s.rl.got = append(s.rl.got, s.cur)
	s.rl.mu.Unlock()
	return nil
}

func (s *relaySession) Reset()        { s.cur = RelayedMail{} }
func (s *relaySession) Logout() error { return nil }
