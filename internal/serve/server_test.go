package serve

import (
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"charm.land/wish/v2/testsession"
	gossh "golang.org/x/crypto/ssh"

	"github.com/triage-dev/triage/config"
	"github.com/triage-dev/triage/internal/demo"
	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
	"github.com/triage-dev/triage/tui"
)

// wait is how long a test waits for something that should happen at once: a bound for a
// hang, generous enough that a loaded machine (-race, both cores busy) never reaches it.
const wait = 10 * time.Second

// newSigner is a fresh ed25519 key.
func newSigner(t *testing.T) gossh.Signer {
	t.Helper()
	s, _ := testbed.SSHKey(t)
	return s
}

// call is one factory call: who, and the environment the TUI got.
type call struct {
	user User
	env  []string
}

// fixture is a running server whose sessions get a real TUI over a real sheets.Store on
// the Sheets emulator (the demo workbook).
type srvFixture struct {
	emu    *emulator.Emulator
	srv    *Server
	addr   string
	calls  chan call
	ended  chan string // a session's end func ran (the user's name)
	logs   *testbed.Buffer
	cancel context.CancelFunc
	served chan error
}

// startServer runs a server with alice (operator) and bob (viewer) listed, set adjusting it.
func startServer(t *testing.T, alice, bob gossh.Signer, set func(*Settings)) *srvFixture {
	t.Helper()
	wb, err := demo.Workbook(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	sh := testbed.NewSheets(t, wb)
	emu := sh.Emu
	store := sh.Store(sheets.Options{SpreadsheetID: wb.SpreadsheetID, Tabs: demo.Tabs()})

	auth := &config.ServeAuth{Keys: map[string]config.ServeIdentity{}, Users: map[string]model.Access{"alice": model.AccessOperator, "bob": model.AccessViewer}}
	if alice != nil {
		auth.Keys[gossh.FingerprintSHA256(alice.PublicKey())] = config.ServeIdentity{Name: "alice", Access: model.AccessOperator}
	}
	if bob != nil {
		auth.Keys[gossh.FingerprintSHA256(bob.PublicKey())] = config.ServeIdentity{Name: "bob", Access: model.AccessViewer}
	}
	s := Settings{Addr: "127.0.0.1:0", HostKeyPath: filepath.Join(t.TempDir(), "state", "host_key"), MaxSessions: 4, IdleTimeout: time.Minute, MaxAuthFailures: 10, ShutdownGrace: 2 * time.Second, Auth: auth}
	if set != nil {
		set(&s)
	}
	f := &srvFixture{emu: emu, calls: make(chan call, 16), ended: make(chan string, 16), logs: &testbed.Buffer{}, served: make(chan error, 1)}
	log := slog.New(slog.NewTextHandler(f.logs, nil))
	// The sessions run on a hub over the store, as `triage serve` wires them: roles are
	// enforced where writes start.
	hubCtx, stopHub := context.WithCancel(context.Background())
	t.Cleanup(stopHub)
	hub := NewHub(hubCtx, HubOptions{Store: store, Refresh: time.Hour})
	go hub.Run(hubCtx)
	srv, err := New(s, func(u User, env []string) (tui.Options, func()) {
		f.calls <- call{u, env}
		sess := hub.Session(u)
		return sess.Options(tui.Options{SpreadsheetID: wb.SpreadsheetID, Remote: true}), func() { sess.Close(); f.ended <- u.Name }
	}, log)
	if err != nil {
		t.Fatal(err)
	}
	f.srv = srv
	l, err := net.Listen("tcp", s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	f.addr = l.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	go func() { f.served <- srv.Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-f.served:
		case <-time.After(5 * time.Second):
			t.Error("the server did not stop within 5s")
		}
	})
	return f
}

// clientConfig logs in as login with the given key (or certificate) signer.
func clientConfig(login string, key gossh.Signer) *gossh.ClientConfig {
	return &gossh.ClientConfig{User: login, Auth: []gossh.AuthMethod{gossh.PublicKeys(key)}, Timeout: wait}
}

// terminal opens a session with a pty (80x24, term) and a shell, returning its output.
func (f *srvFixture) terminal(t *testing.T, login string, key gossh.Signer, term string) (*gossh.Session, *testbed.Buffer, func(string)) {
	t.Helper()
	sess, err := testsession.NewClientSession(t, f.addr, clientConfig(login, key))
	if err != nil {
		t.Fatalf("connect as %s: %v", login, err)
	}
	out := &testbed.Buffer{}
	sess.Stdout, sess.Stderr = out, out
	in, err := sess.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.RequestPty(term, 24, 80, gossh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	if err := sess.Shell(); err != nil {
		t.Fatal(err)
	}
	return sess, out, func(s string) { _, _ = in.Write([]byte(s)) }
}

func (f *srvFixture) nextCall(t *testing.T) call {
	t.Helper()
	select {
	case c := <-f.calls:
		return c
	case <-time.After(wait):
		t.Fatal("the factory was not called")
	}
	return call{}
}

// waitEnd waits for a client session to end.
func waitEnd(t *testing.T, sess *gossh.Session) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- sess.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(wait):
		t.Fatal("the session did not end")
	}
	return nil
}

// TestListedKeyGetsTheTUI: a listed key gets a session: the factory is called with that
// person (name, role, key fingerprint) and a filtered environment, the TUI draws, quitting
// ends the session, runs the factory's end func and logs the person's disconnect.
func TestListedKeyGetsTheTUI(t *testing.T) {
	alice, bob := newSigner(t), newSigner(t)
	f := startServer(t, alice, bob, nil)
	sess, err := testsession.NewClientSession(t, f.addr, clientConfig("whatever", bob))
	if err != nil {
		t.Fatal(err)
	}
	// EDITOR is the client's machine's; running it here would run the client's command.
	_ = sess.Setenv("EDITOR", "sh -c evil")
	_ = sess.Setenv("NO_COLOR", "1")
	out := &testbed.Buffer{}
	sess.Stdout, sess.Stderr = out, out
	in, _ := sess.StdinPipe()
	if err := sess.RequestPty("xterm-256color", 24, 80, gossh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	if err := sess.Shell(); err != nil {
		t.Fatal(err)
	}
	c := f.nextCall(t)
	want := User{Name: "bob", Access: model.AccessViewer, Key: gossh.FingerprintSHA256(bob.PublicKey())}
	if c.user != want {
		t.Errorf("factory got %+v, want %+v (the key decides, not the login name)", c.user, want)
	}
	env := strings.Join(c.env, " ")
	if !strings.Contains(env, "TERM=xterm-256color") || strings.Contains(env, "EDITOR") {
		t.Errorf("environment = %q: want the pty's TERM and no EDITOR", env)
	}
	if !strings.Contains(env, "NO_COLOR=1") {
		t.Errorf("environment = %q: want NO_COLOR (it describes the terminal)", env)
	}
	out.WaitFor(t, "Acme Studio")
	f.logs.WaitFor(t, "msg=connect user=bob role=viewer")
	_, _ = in.Write([]byte("q"))
	_ = waitEnd(t, sess)
	select {
	case name := <-f.ended:
		if name != "bob" {
			t.Errorf("end func ran for %q", name)
		}
	case <-time.After(wait):
		t.Error("the factory's end func did not run")
	}
	f.logs.WaitFor(t, "msg=disconnect user=bob role=viewer key="+want.Key)
}

// TestUnlistedKeyIsRefused: a key nobody listed never gets a session (the client's auth
// fails: "Permission denied (publickey)" in OpenSSH's words) and the refusal is logged.
func TestUnlistedKeyIsRefused(t *testing.T) {
	f := startServer(t, newSigner(t), nil, nil)
	stranger := newSigner(t)
	_, err := testsession.NewClientSession(t, f.addr, clientConfig("alice", stranger))
	if err == nil || !strings.Contains(err.Error(), "unable to authenticate") || !strings.Contains(err.Error(), "[none publickey]") {
		t.Fatalf("an unlisted key: err = %v, want an auth failure offering only publickey", err)
	}
	select {
	case c := <-f.calls:
		t.Fatalf("the factory was called for %+v", c.user)
	default:
	}
	f.logs.WaitFor(t, "msg=\"auth refused\" login=alice key="+gossh.FingerprintSHA256(stranger.PublicKey()))
}

// signCert is a user certificate for key, signed by ca, for principals, valid from..to.
func signCert(t *testing.T, ca, key gossh.Signer, principals []string, from, to time.Time) gossh.Signer {
	t.Helper()
	cert := &gossh.Certificate{
		Key: key.PublicKey(), CertType: gossh.UserCert, KeyId: "test", ValidPrincipals: principals,
		ValidAfter: uint64(from.Unix()), ValidBefore: uint64(to.Unix()),
		Permissions: gossh.Permissions{Extensions: map[string]string{"permit-pty": ""}},
	}
	if err := cert.SignCert(rand.Reader, ca); err != nil {
		t.Fatal(err)
	}
	s, err := gossh.NewCertSigner(cert, key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCertificates: a certificate from the trusted CA for the login name of a configured
// user gets in as that user; another CA's, an expired one, one for another principal and
// one for a name that is no configured user are refused.
func TestCertificates(t *testing.T) {
	ca, otherCA := newSigner(t), newSigner(t)
	f := startServer(t, nil, nil, func(s *Settings) { s.Auth.CAs = []gossh.PublicKey{ca.PublicKey()} })
	now := time.Now()
	key := newSigner(t)

	good := signCert(t, ca, key, []string{"alice"}, now.Add(-time.Hour), now.Add(time.Hour))
	sess, _, _ := f.terminal(t, "alice", good, "xterm")
	c := f.nextCall(t)
	if want := (User{Name: "alice", Access: model.AccessOperator, Key: gossh.FingerprintSHA256(key.PublicKey())}); c.user != want {
		t.Errorf("certificate user = %+v, want %+v", c.user, want)
	}
	_ = sess.Close()

	refused := []struct {
		name  string
		login string
		cert  gossh.Signer
	}{
		{"another CA", "alice", signCert(t, otherCA, key, []string{"alice"}, now.Add(-time.Hour), now.Add(time.Hour))},
		{"expired", "alice", signCert(t, ca, key, []string{"alice"}, now.Add(-2*time.Hour), now.Add(-time.Hour))},
		{"another principal", "alice", signCert(t, ca, key, []string{"bob"}, now.Add(-time.Hour), now.Add(time.Hour))},
		{"not a configured user", "mallory", signCert(t, ca, key, []string{"mallory"}, now.Add(-time.Hour), now.Add(time.Hour))},
	}
	for _, r := range refused {
		if _, err := testsession.NewClientSession(t, f.addr, clientConfig(r.login, r.cert)); err == nil || !strings.Contains(err.Error(), "unable to authenticate") {
			t.Errorf("%s: err = %v, want refused", r.name, err)
		}
	}
	select {
	case c := <-f.calls:
		t.Errorf("a refused certificate got a session: %+v", c.user)
	default:
	}
}

// TestMaxSessions: with max_sessions open, the next one gets the one line and is closed;
// when one ends, there is room again.
func TestMaxSessions(t *testing.T) {
	alice := newSigner(t)
	f := startServer(t, alice, nil, func(s *Settings) { s.MaxSessions = 2 })
	s1, o1, _ := f.terminal(t, "alice", alice, "xterm")
	_, o2, _ := f.terminal(t, "alice", alice, "xterm")
	o1.WaitFor(t, "Acme Studio")
	o2.WaitFor(t, "Acme Studio")
	s3, o3, _ := f.terminal(t, "alice", alice, "xterm")
	o3.WaitFor(t, "triage: the server is full (2 sessions); try again later")
	var exit *gossh.ExitError
	if err := waitEnd(t, s3); !errors.As(err, &exit) || exit.ExitStatus() != 1 {
		t.Errorf("the refused session ends with %v, want exit status 1", err)
	}
	if strings.Contains(o3.String(), "Acme Studio") {
		t.Error("the session over the limit got a screen")
	}
	_ = s1.Close()
	_ = waitEnd(t, s1)
	<-f.ended
	_, o4, _ := f.terminal(t, "alice", alice, "xterm")
	o4.WaitFor(t, "Acme Studio")
}

// TestIdleTimeoutClosesASilentSession: a session that sends nothing for idle_timeout is
// told so and closed, though the TUI keeps drawing.
func TestIdleTimeoutClosesASilentSession(t *testing.T) {
	alice := newSigner(t)
	f := startServer(t, alice, nil, func(s *Settings) { s.IdleTimeout = 400 * time.Millisecond })
	start := time.Now()
	sess, out, _ := f.terminal(t, "alice", alice, "xterm")
	out.WaitFor(t, "triage: no input for 400ms; the session is closed")
	_ = waitEnd(t, sess)
	if d := time.Since(start); d < 400*time.Millisecond {
		t.Errorf("closed after %s, before the idle timeout", d)
	}
	f.logs.WaitFor(t, "reason=\"triage: no input for 400ms")
}

// TestTypingKeepsASessionOpen: each keystroke restarts the session's idle timer, and the
// timer running out closes it. The timer is the test's, fired by hand, so how fast the
// machine delivers the keys can't decide the outcome.
func TestTypingKeepsASessionOpen(t *testing.T) {
	alice := newSigner(t)
	timers := &fakeTimers{}
	f := startServer(t, alice, nil, func(s *Settings) {
		s.IdleTimeout = 400 * time.Millisecond
		s.afterFunc = timers.afterFunc
	})
	sess, out, typeKeys := f.terminal(t, "alice", alice, "xterm")
	out.WaitFor(t, "Acme Studio")
	tm := timers.only(t)
	if tm.d != 400*time.Millisecond {
		t.Errorf("idle timer of %v, want the idle timeout (400ms)", tm.d)
	}
	for range 8 {
		n := tm.resets()
		typeKeys("j")
		if !testbed.Until(t, func() bool { return tm.resets() > n }) {
			t.Fatal("a keystroke did not restart the idle timer")
		}
	}
	if got := tm.lastReset(); got != 400*time.Millisecond {
		t.Errorf("a keystroke restarted the idle timer with %v, want 400ms", got)
	}
	if strings.Contains(out.String(), "no input for") {
		t.Error("a session with input was closed as idle")
	}
	tm.fire()
	out.WaitFor(t, "triage: no input for 400ms; the session is closed")
	_ = waitEnd(t, sess)
}

// fakeTimers stand in for time.AfterFunc: they run their func only when the test fires them.
type fakeTimers struct {
	mu     sync.Mutex
	timers []*fakeTimer
}

type fakeTimer struct {
	d       time.Duration
	f       func()
	mu      sync.Mutex
	reset   []time.Duration
	stopped bool
}

func (ft *fakeTimers) afterFunc(d time.Duration, f func()) idleTimer {
	tm := &fakeTimer{d: d, f: f}
	ft.mu.Lock()
	ft.timers = append(ft.timers, tm)
	ft.mu.Unlock()
	return tm
}

// only is the one timer started so far.
func (ft *fakeTimers) only(t *testing.T) *fakeTimer {
	t.Helper()
	ft.mu.Lock()
	defer ft.mu.Unlock()
	if len(ft.timers) != 1 {
		t.Fatalf("%d idle timers, want 1", len(ft.timers))
	}
	return ft.timers[0]
}

func (tm *fakeTimer) Reset(d time.Duration) bool {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	tm.reset = append(tm.reset, d)
	tm.stopped = false
	return true
}

func (tm *fakeTimer) Stop() bool {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	was := !tm.stopped
	tm.stopped = true
	return was
}

func (tm *fakeTimer) resets() int {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return len(tm.reset)
}

func (tm *fakeTimer) lastReset() time.Duration {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.reset[len(tm.reset)-1]
}

// fire runs the timer's func, as its time running out would.
func (tm *fakeTimer) fire() { go tm.f() }

// TestAuthFailureLimit: after max_auth_failures refused keys from one address, that address
// is refused even with a listed key (logged once); another address still gets in, and so
// does the first once its window is over.
func TestAuthFailureLimit(t *testing.T) {
	alice := newSigner(t)
	clock := struct {
		sync.Mutex
		t time.Time
	}{t: time.Now()}
	f := startServer(t, alice, nil, func(s *Settings) { s.MaxAuthFailures = 3 })
	f.srv.now = func() time.Time { clock.Lock(); defer clock.Unlock(); return clock.t }
	stranger := newSigner(t)
	for i := range 3 {
		if _, err := testsession.NewClientSession(t, f.addr, clientConfig("alice", stranger)); err == nil {
			t.Fatalf("attempt %d: a stranger got in", i+1)
		}
	}
	if _, err := testsession.NewClientSession(t, f.addr, clientConfig("alice", alice)); err == nil {
		t.Fatal("a listed key got in from an address over its failure limit")
	}
	if _, err := testsession.NewClientSession(t, f.addr, clientConfig("alice", stranger)); err == nil {
		t.Fatal("a stranger got in")
	}
	if n := strings.Count(f.logs.String(), "too many auth failures"); n != 1 {
		t.Errorf("the limit was logged %d times, want once:\n%s", n, f.logs.String())
	}

	// Another address (127.0.0.2 is loopback too) is not affected.
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}, Timeout: wait}
	conn, err := d.Dial("tcp", f.addr)
	if err != nil {
		t.Skipf("can't dial from 127.0.0.2: %v", err)
	}
	cc, _, _, err := gossh.NewClientConn(conn, f.addr, &gossh.ClientConfig{User: "alice", Auth: []gossh.AuthMethod{gossh.PublicKeys(alice)}, HostKeyCallback: gossh.InsecureIgnoreHostKey()})
	if err != nil {
		t.Fatalf("another address is refused: %v", err)
	}
	_ = cc.Close()

	// The window ends: the first address may try again.
	clock.Lock()
	clock.t = clock.t.Add(config.AuthFailureWindow)
	clock.Unlock()
	sess, err := testsession.NewClientSession(t, f.addr, clientConfig("alice", alice))
	if err != nil {
		t.Fatalf("after the window: %v", err)
	}
	_ = sess.Close()
}

// TestNoPtyGetsOneLine: a session without a terminal (ssh -T) gets the one line and exit 1,
// and no TUI.
func TestNoPtyGetsOneLine(t *testing.T) {
	alice := newSigner(t)
	f := startServer(t, alice, nil, nil)
	sess, err := testsession.NewClientSession(t, f.addr, clientConfig("alice", alice))
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr testbed.Buffer
	sess.Stdout, sess.Stderr = &stdout, &stderr
	err = sess.Run("")
	var exit *gossh.ExitError
	if !errors.As(err, &exit) || exit.ExitStatus() != 1 {
		t.Errorf("no pty: %v, want exit status 1", err)
	}
	if got := stderr.String(); got != "triage serve needs a terminal: connect with ssh -t\n" {
		t.Errorf("stderr = %q", got)
	}
	if stdout.String() != "" {
		t.Errorf("stdout = %q, want nothing", stdout.String())
	}
	select {
	case c := <-f.calls:
		t.Errorf("the factory was called without a terminal: %+v", c.user)
	default:
	}
}

// TestHostKey: a missing host key is created 0600 in a 0700 directory and used again on the
// next start; one that others can read is refused.
func TestHostKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "triage", "ssh_host_ed25519")
	factory := func(User, []string) (tui.Options, func()) { return tui.Options{}, nil }
	s1, err := New(Settings{HostKeyPath: path}, factory, nil)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("host key mode %04o, want 0600", fi.Mode().Perm())
	}
	if di, _ := os.Stat(filepath.Dir(path)); di.Mode().Perm() != 0o700 {
		t.Errorf("host key directory mode %04o, want 0700", di.Mode().Perm())
	}
	s2, err := New(Settings{HostKeyPath: path}, factory, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s1.Fingerprint() != s2.Fingerprint() || !strings.HasPrefix(s1.Fingerprint(), "SHA256:") {
		t.Errorf("fingerprints %s, %s: the second start must reuse the key", s1.Fingerprint(), s2.Fingerprint())
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Settings{HostKeyPath: path}, factory, nil); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("a 0644 host key: err = %v, want refused with how to fix it", err)
	}
}

// TestHostKeyNothingInWorkingDir: the server wish builds serves exactly the host key from
// the state directory, and building it writes nothing into the working directory (wish
// makes its own id_ed25519 there, and chmods the directory 0700, when given no key).
func TestHostKeyNothingInWorkingDir(t *testing.T) {
	cwd, before := testbed.ReadOnlyWorkDir(t)

	path := filepath.Join(t.TempDir(), "state", "ssh_host_ed25519")
	factory := func(User, []string) (tui.Options, func()) { return tui.Options{}, nil }
	s, err := New(Settings{HostKeyPath: path}, factory, nil)
	if err != nil {
		t.Fatal(err)
	}
	if after := testbed.DirState(t, cwd); after != before {
		t.Errorf("the working directory changed:\nbefore\n%safter\n%s", before, after)
	}
	if n := len(s.ssh.HostSigners); n != 1 {
		t.Fatalf("%d host keys, want only the one from %s", n, path)
	}
	if got := gossh.FingerprintSHA256(s.ssh.HostSigners[0].PublicKey()); got != s.Fingerprint() {
		t.Errorf("wish serves host key %s, the state directory's is %s", got, s.Fingerprint())
	}
}

// TestShutdownSaysGoodbye: cancelling the server's context ends each open session with the
// goodbye line, and Serve returns.
func TestShutdownSaysGoodbye(t *testing.T) {
	alice, bob := newSigner(t), newSigner(t)
	f := startServer(t, alice, bob, nil)
	s1, o1, _ := f.terminal(t, "alice", alice, "xterm")
	s2, o2, _ := f.terminal(t, "bob", bob, "xterm")
	o1.WaitFor(t, "Acme Studio")
	o2.WaitFor(t, "Acme Studio")
	f.cancel()
	o1.WaitFor(t, "triage: the server is shutting down; goodbye")
	o2.WaitFor(t, "triage: the server is shutting down; goodbye")
	_ = waitEnd(t, s1)
	_ = waitEnd(t, s2)
	select {
	case err := <-f.served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
		f.served <- nil // for the cleanup
	case <-time.After(wait):
		t.Fatal("Serve did not return")
	}
	if _, err := testsession.NewClientSession(t, f.addr, clientConfig("alice", alice)); err == nil {
		t.Error("a connection was accepted after shutdown")
	}
}

// TestRolesOverSSH: over an SSH session, a viewer's s writes nothing and says why; an
// operator's lands. The role is the one the key was listed with, whatever login is typed.
func TestRolesOverSSH(t *testing.T) {
	alice, bob := newSigner(t), newSigner(t)
	f := startServer(t, alice, bob, nil)
	_, bo, bsend := f.terminal(t, "alice", bob, "xterm") // bob's key, typing alice's name
	bo.WaitFor(t, "bob · viewer")
	bsend("s")
	bo.WaitFor(t, "bob is a viewer")
	if n := f.emu.Count("spreadsheets.batchUpdate"); n != 0 {
		t.Errorf("a viewer's s sent %d writes", n)
	}
	_, ao, asend := f.terminal(t, "alice", alice, "xterm")
	ao.WaitFor(t, "alice · operator")
	asend("s")
	ao.WaitFor(t, "Set status of")
	asend("4")
	ao.WaitFor(t, "set to done")
	if n := f.emu.Count("spreadsheets.batchUpdate"); n != 1 {
		t.Errorf("an operator's status change: %d writes, want 1", n)
	}
}

// TestShutdownLetsWritesLand: a write in flight when the server is told to stop lands in the
// sheet before the session ends (tui.ShutdownMsg, not tea.Quit), and the session still gets
// its goodbye.
func TestShutdownLetsWritesLand(t *testing.T) {
	alice := newSigner(t)
	// A grace no loaded machine runs out of: the write lands because the session waits for
	// it, not because it happened to be fast enough.
	f := startServer(t, alice, nil, func(s *Settings) { s.ShutdownGrace = time.Minute })
	held, release := make(chan struct{}, 1), make(chan struct{})
	var once sync.Once
	let := func() { once.Do(func() { close(release) }) }
	t.Cleanup(let) // a failed check must not leave the server waiting on the held write
	f.emu.SetHook(func(r emulator.Request) {
		if r.Method == "spreadsheets.batchUpdate" {
			held <- struct{}{}
			<-release
		}
	})
	_, out, send := f.terminal(t, "alice", alice, "xterm")
	out.WaitFor(t, "Acme Studio")
	send("s")
	out.WaitFor(t, "Set status of")
	send("5") // spam: no row of the demo's newest is spam yet
	select {
	case <-held:
	case <-time.After(wait):
		t.Fatal("the write never reached the sheet")
	}
	f.cancel()
	// The session has the shutdown and is waiting for its write (a session ended with
	// tea.Quit would never say this); nothing decides it but what the session draws.
	out.WaitFor(t, "closing: your change is being written first")
	if strings.Contains(out.String(), msgShutdown) {
		t.Error("the session ended while its write was held")
	}
	let()
	out.WaitFor(t, "triage: the server is shutting down; goodbye")
	if n := f.emu.Count("spreadsheets.batchUpdate"); n != 1 {
		t.Errorf("batchUpdate requests: %d, want the one write", n)
	}
	spam := 0
	for _, row := range f.emu.Cells("demo", "Inbox") {
		for _, c := range row {
			if model.CellString(c) == "spam" {
				spam++
			}
		}
	}
	if spam < 2 { // the demo has one spam message; the write made a second
		t.Errorf("the write held at shutdown didn't land: %d spam rows", spam)
	}
}

// TestReloadChangesWhoGetsIn: after Reload, a newly listed key gets in, a removed one is
// refused, and the removed person's open session is ended.
func TestReloadChangesWhoGetsIn(t *testing.T) {
	alice, carol := newSigner(t), newSigner(t)
	f := startServer(t, alice, nil, nil)
	if _, err := testsession.NewClientSession(t, f.addr, clientConfig("carol", carol)); err == nil {
		t.Fatal("carol got in before she was listed")
	}
	open, out, _ := f.terminal(t, "alice", alice, "xterm")
	out.WaitFor(t, "Acme Studio")
	f.nextCall(t)
	f.srv.Reload(&config.ServeAuth{Keys: map[string]config.ServeIdentity{
		gossh.FingerprintSHA256(carol.PublicKey()): {Name: "carol", Access: model.AccessTriager},
	}})
	out.WaitFor(t, "triage: your access changed; connect again")
	_ = waitEnd(t, open)
	sess, _, _ := f.terminal(t, "carol", carol, "xterm")
	if c := f.nextCall(t); c.user.Name != "carol" || c.user.Access != model.AccessTriager {
		t.Errorf("after reload: %+v", c.user)
	}
	_ = sess.Close()
	if _, err := testsession.NewClientSession(t, f.addr, clientConfig("alice", alice)); err == nil {
		t.Error("alice's removed key still gets in")
	}
}

// TestDumbTerminalIsPlain: TERM=dumb reaches the TUI, which draws without colour.
func TestDumbTerminalIsPlain(t *testing.T) {
	alice := newSigner(t)
	f := startServer(t, alice, nil, nil)
	sess, out, _ := f.terminal(t, "alice", alice, "dumb")
	if c := f.nextCall(t); !strings.Contains(strings.Join(c.env, " "), "TERM=dumb") {
		t.Errorf("env = %v", c.env)
	}
	out.WaitFor(t, "Acme Studio")
	time.Sleep(200 * time.Millisecond)
	if s := out.String(); strings.Contains(s, "\x1b[38;") || strings.Contains(s, "\x1b[48;") {
		t.Errorf("TERM=dumb output has colours: %q", testbed.Tail(s))
	}
	_ = sess.Close()
}
