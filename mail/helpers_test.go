package mail

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"math/big"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/triage-dev/triage/config"
	"github.com/triage-dev/triage/model"
)

// inbox decodes an inbox tab (header row first) as a load does.
func inbox(t *testing.T, rows ...[]any) *model.Table {
	t.Helper()
	tb, err := model.Decode(model.DefaultTabConfig(model.RoleInbox), rows, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// inboxHeader is the inbox's default header row, with a Subject column.
var inboxHeader = []any{"Timestamp", "Name", "Email", "Message", "Status", "ID", "Subject"}

// oneMessage is an inbox of one row from name, email, subject and message.
func oneMessage(t *testing.T, name, email, subject, message string) (*model.Table, *model.Record) {
	t.Helper()
	tb := inbox(t, inboxHeader, []any{"2026-03-02T14:05:00Z", name, email, message, "new", "m1", subject})
	return tb, &tb.Records[0]
}

// testCA is a certificate made for this test run: a self-signed CA for 127.0.0.1 (and no
// host name), and the pool a client trusts it through.
type testCA struct {
	cert tls.Certificate
	pool *x509.CertPool
}

func newTestCA(t *testing.T) testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "triage test SMTP"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return testCA{cert: tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool: pool}
}

// received is one message the test server took.
type received struct {
	from   string
	rcpts  []string
	data   []byte
	tls    bool
	authAs string
}

// serverOpts says how the test server runs.
type serverOpts struct {
	startTLS     bool // offer STARTTLS with the test CA's certificate
	implicit     bool // TLS from the first byte (port 465's way)
	insecureAuth bool // offer AUTH without TLS (a relay on this machine)
	user, pass   string
	refuse       string // a recipient answered 550
	dropAfterEnd bool   // take the message, then cut the connection without answering
}

// testServer is go-smtp's server on 127.0.0.1:0, checking AUTH PLAIN against its user and
// password (when set: then MAIL needs a login), recording every message it takes.
type testServer struct {
	addr string
	ca   testCA
	opts serverOpts
	srv  *smtp.Server
	l    net.Listener

	mu   sync.Mutex
	got  []received
	auth []string // every login tried, "user:ok" or "user:refused"
}

func startServer(t *testing.T, o serverOpts) *testServer {
	t.Helper()
	ts := &testServer{ca: newTestCA(t), opts: o}
	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		_, isTLS := c.TLSConnectionState()
		return &testSession{ts: ts, conn: c, tls: isTLS}, nil
	}))
	srv.Domain = "localhost"
	srv.AllowInsecureAuth = o.insecureAuth
	srv.ErrorLog = discardLog{}
	tlsConf := &tls.Config{Certificates: []tls.Certificate{ts.ca.cert}}
	if o.startTLS {
		srv.TLSConfig = tlsConf
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if o.implicit {
		l = tls.NewListener(l, tlsConf)
	}
	ts.addr = l.Addr().String()
	ts.srv, ts.l = srv, l
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(l)
	}()
	t.Cleanup(func() {
		ts.stop()
		<-done
	})
	return ts
}

// stop closes the server: its address then refuses connections. The listener is closed
// here too: a Close that comes before Serve has taken the listener would not close it.
func (ts *testServer) stop() {
	ts.srv.Close()
	ts.l.Close()
}

func (ts *testServer) messages() []received {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return append([]received(nil), ts.got...)
}

func (ts *testServer) logins() []string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return append([]string(nil), ts.auth...)
}

type testSession struct {
	ts     *testServer
	conn   *smtp.Conn
	tls    bool
	authAs string
	cur    received
}

func (s *testSession) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *testSession) Auth(mech string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(identity, username, password string) error {
		s.ts.mu.Lock()
		defer s.ts.mu.Unlock()
		if username == s.ts.opts.user && password == s.ts.opts.pass && username != "" {
			s.authAs = username
			s.ts.auth = append(s.ts.auth, username+":ok")
			return nil
		}
		s.ts.auth = append(s.ts.auth, username+":refused")
		return smtp.ErrAuthFailed
	}), nil
}

func (s *testSession) Mail(from string, _ *smtp.MailOptions) error {
	if s.ts.opts.user != "" && s.authAs == "" {
		return smtp.ErrAuthRequired
	}
	s.cur = received{from: from, tls: s.tls, authAs: s.authAs}
	return nil
}

func (s *testSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	if to == s.ts.opts.refuse {
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "No such user here"}
	}
	s.cur.rcpts = append(s.cur.rcpts, to)
	return nil
}

func (s *testSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.cur.data = b
	s.ts.mu.Lock()
	s.ts.got = append(s.ts.got, s.cur)
	s.ts.mu.Unlock()
	if s.ts.opts.dropAfterEnd {
		s.conn.Close()
		return errors.New("dropped")
	}
	return nil
}

func (s *testSession) Reset()        { s.cur = received{} }
func (s *testSession) Logout() error { return nil }

type discardLog struct{}

func (discardLog) Printf(string, ...any) {}
func (discardLog) Println(...any)        {}

// smtpMailer is a Mailer sending to ts as sec says (smtp and from filled in when empty),
// trusting ts's CA, with a fixed clock; env is its environment.
func smtpMailer(t *testing.T, ts *testServer, sec config.MailSection, env map[string]string) *Mailer {
	t.Helper()
	if sec.SMTP == "" {
		sec.SMTP = ts.addr
	}
	if sec.From == "" {
		sec.From = "Site Owner <owner@example.com>"
	}
	m, err := New(sec, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	m.RootCAs = ts.ca.pool
	m.Now = func() time.Time { return time.Date(2026, 3, 3, 9, 30, 0, 0, time.UTC) }
	return m
}

// writeReply is draft with text written on its first body line, as a person would.
func writeReply(t *testing.T, draft, text string) string {
	t.Helper()
	lines := strings.Split(draft, "\n")
	for i, l := range lines {
		if l == "" {
			if lines[i+1] != "" {
				t.Fatalf("the draft's first body line is not empty:\n%s", draft)
			}
			lines[i+1] = text
			return strings.Join(lines, "\n")
		}
	}
	t.Fatalf("the draft has no body:\n%s", draft)
	return ""
}

// wantErr fails unless err says every fragment.
func wantErr(t *testing.T, err error, frags ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want one saying %q", frags)
	}
	t.Log(err)
	for _, f := range frags {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("error %q does not say %q", err, f)
		}
	}
}
