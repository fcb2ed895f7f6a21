// Package serve is `triage serve`: the TUI for a team over SSH (DESIGN §9). The server
// decides who gets in (public keys and user certificates only), how many at once and for how
// long; each person's TUI comes from a Factory, which the hub fills from the one shared
// workbook.
package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/ssh"
	"charm.land/wish/v2"
	"charm.land/wish/v2/bubbletea"
	gossh "golang.org/x/crypto/ssh"

	"github.com/triage-dev/triage/config"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/tui"
)

// Factory makes the options of one person's TUI from who they are and their terminal's
// environment (filtered: see sessionEnv), and a func the server calls when the session ends.
type Factory func(u User, env []string) (tui.Options, func())

// Settings are the server's: [serve] with the command line's overrides applied.
type Settings struct {
	// Addr is the listen address (":2222").
	Addr string
	// HostKeyPath is the private host key, created 0600 when missing.
	HostKeyPath string
	// MaxSessions is how many sessions may be open at once.
	MaxSessions int
	// IdleTimeout closes a session that sent no input for that long.
	IdleTimeout time.Duration
	// MaxAuthFailures refused keys from one address within AuthFailureWindow refuse it for
	// the rest of the window.
	MaxAuthFailures int
	// AuthFailureWindow is config.AuthFailureWindow unless a test shortens it.
	AuthFailureWindow time.Duration
	// ShutdownGrace is how long open sessions get to end on shutdown, a write or a replay in
	// flight landing first (default 10s, under TimeoutStopSec=15 of packaging/systemd/triage.service).
	ShutdownGrace time.Duration
	// Auth is who may connect (config.Config.ServeAuth).
	Auth *config.ServeAuth

	// afterFunc starts a session's idle timer (time.AfterFunc unless a test fires its own).
	afterFunc func(time.Duration, func()) idleTimer
}

// Messages a client sees. They are the whole of what the server says outside the TUI.
const (
	msgNeedsTerminal = "triage serve needs a terminal: connect with ssh -t"
	msgShutdown      = "triage: the server is shutting down; goodbye"
	msgFullFormat    = "triage: the server is full (%d sessions); try again later"
	msgIdleFormat    = "triage: no input for %s; the session is closed"
	msgNotListed     = "triage: your key is no longer listed; ask the server's admin"
	msgAccessChanged = "triage: your access changed; connect again"
)

// Server serves the TUI over SSH. Build it with New, run it with ListenAndServe or Serve.
type Server struct {
	set     Settings
	factory Factory
	log     *slog.Logger
	now     func() time.Time

	auth    atomic.Pointer[config.ServeAuth]
	limiter *authLimiter
	ssh     *ssh.Server
	signer  gossh.Signer

	mu       sync.Mutex
	sessions map[*conn]struct{}
	closing  bool
	// ln is the listener Serve accepts on: shutdown closes it to stop accepting.
	ln   net.Listener
	done sync.WaitGroup // sessions inside the handler
}

// conn is one open session, for the limit and for shutdown.
type conn struct {
	user User
	meta connMeta      // the login, for Reload to identify the session again
	key  ssh.PublicKey // the key (or certificate) that logged in
	mu   sync.Mutex
	prog *tea.Program
	tui  *tui.Model
	done func() // the factory's, called when the session ends
	end  string // why the server ended it ("" when the person quit), said after the TUI exits
}

// stop asks the session's TUI to quit, saying why once it has (the TUI owns the screen
// until then). Quit waits for an unstarted program to start, so it runs on its own.
func (s *conn) stop(why string) {
	s.mu.Lock()
	if s.end == "" {
		s.end = why
	}
	p := s.prog
	s.mu.Unlock()
	if p != nil {
		// Not p.Quit(): a write or replay in flight gets to land first (tui.ShutdownMsg).
		go p.Send(tui.ShutdownMsg{})
	}
}

// New builds the server: it reads (or creates) the host key and sets up authentication.
func New(set Settings, factory Factory, log *slog.Logger) (*Server, error) {
	if factory == nil {
		return nil, errors.New("serve: no session factory")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if set.MaxSessions <= 0 {
		set.MaxSessions = config.DefaultMaxSessions
	}
	if set.IdleTimeout <= 0 {
		set.IdleTimeout = config.DefaultIdleTimeout
	}
	if set.MaxAuthFailures <= 0 {
		set.MaxAuthFailures = config.DefaultMaxAuthFailures
	}
	if set.AuthFailureWindow <= 0 {
		set.AuthFailureWindow = config.AuthFailureWindow
	}
	if set.ShutdownGrace <= 0 {
		set.ShutdownGrace = 10 * time.Second
	}
	if set.afterFunc == nil {
		set.afterFunc = func(d time.Duration, f func()) idleTimer { return time.AfterFunc(d, f) }
	}
	s := &Server{set: set, factory: factory, log: log, now: time.Now, sessions: map[*conn]struct{}{}}
	s.auth.Store(set.Auth)
	s.limiter = newAuthLimiter(set.MaxAuthFailures, set.AuthFailureWindow, func() time.Time { return s.now() })
	keyPEM, signer, created, err := loadHostKey(set.HostKeyPath)
	if err != nil {
		return nil, err
	}
	s.signer = signer
	verb := "host key"
	if created {
		verb = "host key created"
	}
	log.Info(verb, "path", set.HostKeyPath, "fingerprint", s.Fingerprint())

	srv, err := wish.NewServer(
		// The host key must be an option: a wish server built without one writes its own
		// id_ed25519 into the working directory (and chmods that directory 0700), which
		// serve must never touch (it may be / or a read-only checkout).
		wish.WithHostKeyPEM(keyPEM),
		wish.WithAddress(set.Addr),
		wish.WithPublicKeyAuth(s.publicKey),
		// The connection's own idle limit only catches what the session's can't (a
		// connection that never opens a session, a dead peer): the TUI draws on its own
		// (the clock, refreshes), so traffic alone doesn't say a person is there.
		wish.WithIdleTimeout(set.IdleTimeout+time.Minute),
		wish.WithMiddleware(
			bubbletea.MiddlewareWithProgramHandler(s.program),
			s.gate,
		),
	)
	if err != nil {
		return nil, fmt.Errorf("ssh server: %w", err)
	}
	srv.HandshakeTimeout = 30 * time.Second
	srv.ConnCallback = s.accept
	s.ssh = srv
	return s, nil
}

// Fingerprint is the host key's SHA256 fingerprint, what users compare on first connect.
func (s *Server) Fingerprint() string { return gossh.FingerprintSHA256(s.signer.PublicKey()) }

// Reload replaces who may connect (on SIGHUP, after the config was read again). An open
// session whose key is no longer let in, or whose role changed, is ended (its person may
// connect again, with the new role): removing someone takes effect at once.
func (s *Server) Reload(auth *config.ServeAuth) {
	s.mu.Lock()
	s.auth.Store(auth)
	var changed []*conn
	for se := range s.sessions {
		if u, why := identify(auth, se.meta, se.key, s.now()); why != "" || u != se.user {
			changed = append(changed, se)
		}
	}
	s.mu.Unlock()
	s.log.Info("users reloaded", "keys", len(auth.Keys), "users", len(auth.Users), "cas", len(auth.CAs), "sessions_ended", len(changed))
	for _, se := range changed {
		s.log.Info("ending a session: access changed", "user", se.user.Name, "role", string(se.user.Access), "key", se.user.Key)
		se.stop(msgAccessChanged)
	}
}

// ListenAndServe listens on Settings.Addr and serves until ctx ends (then shuts down).
func (s *Server) ListenAndServe(ctx context.Context) error {
	var lc net.ListenConfig
	l, err := lc.Listen(ctx, "tcp", s.set.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", s.set.Addr, err)
	}
	return s.Serve(ctx, l)
}

// Serve serves on l until ctx ends, then shuts down: no new connections, each open session
// told why and given ShutdownGrace to end, then everything closed.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	s.log.Info("listening", "addr", l.Addr().String(), "max_sessions", s.set.MaxSessions, "idle_timeout", s.set.IdleTimeout.String())
	s.mu.Lock()
	s.ln = l
	s.mu.Unlock()
	errc := make(chan error, 1)
	go func() { errc <- s.ssh.Serve(l) }()
	select {
	case err := <-errc:
		if errors.Is(err, ssh.ErrServerClosed) {
			return nil
		}
		return fmt.Errorf("ssh server: %w", err)
	case <-ctx.Done():
	}
	s.shutdown()
	<-errc
	return nil
}

// shutdown stops accepting, asks every session's TUI to quit (each then says goodbye), waits
// up to ShutdownGrace for them, and closes what is left.
func (s *Server) shutdown() {
	s.mu.Lock()
	s.closing = true
	open := make([]*conn, 0, len(s.sessions))
	for se := range s.sessions {
		open = append(open, se)
	}
	s.mu.Unlock()
	s.log.Info("shutting down", "sessions", len(open))
	grace, cancel := context.WithTimeout(context.Background(), s.set.ShutdownGrace)
	defer cancel()
	// No new connections from now on. Not the ssh server's own Shutdown: it waits for its
	// connections with a WaitGroup that a connection finishing its handshake at that moment
	// adds to while it waits (a data race in the library); the sessions are waited for below,
	// and Close ends the rest.
	s.mu.Lock()
	if s.ln != nil {
		_ = s.ln.Close()
	}
	s.mu.Unlock()
	for _, se := range open {
		se.stop(msgShutdown)
	}
	ended := make(chan struct{})
	go func() { s.done.Wait(); close(ended) }()
	select {
	case <-ended:
	case <-grace.Done():
		s.log.Warn("sessions still open after the grace period; closing them", "grace", s.set.ShutdownGrace.String())
	}
	_ = s.ssh.Close()
}

// accept refuses a connection from an address over its auth failure limit before any
// handshake.
func (s *Server) accept(_ ssh.Context, c net.Conn) net.Conn {
	if blocked, _ := s.limiter.blocked(host(c.RemoteAddr())); blocked {
		return nil
	}
	return c
}

// publicKey is the only authentication method: a listed key or a trusted certificate.
// Refusals are counted per address and logged.
func (s *Server) publicKey(ctx ssh.Context, key ssh.PublicKey) bool {
	addr := host(ctx.RemoteAddr())
	if blocked, _ := s.limiter.blocked(addr); blocked {
		return false
	}
	meta := connMeta{user: ctx.User(), remote: ctx.RemoteAddr(), local: ctx.LocalAddr()}
	_, why := identify(s.auth.Load(), meta, key, s.now())
	if why == "" {
		return true
	}
	s.log.Warn("auth refused", "login", ctx.User(), "key", gossh.FingerprintSHA256(key), "remote", ctx.RemoteAddr().String(), "reason", why)
	if s.limiter.fail(addr) {
		_, until := s.limiter.blocked(addr)
		s.log.Warn("too many auth failures; refusing the address", "remote", addr, "failures", s.set.MaxAuthFailures, "until", until.Format(time.RFC3339))
	}
	return false
}

type userKey struct{}

// gate runs first for every session: who it is (again, from the key that completed the
// login), the terminal check, the session limit and the connect/disconnect log lines.
func (s *Server) gate(next ssh.Handler) ssh.Handler {
	return func(sess ssh.Session) {
		remote := sess.RemoteAddr().String()
		meta := connMeta{user: sess.User(), remote: sess.RemoteAddr(), local: sess.LocalAddr()}
		u, why := identify(s.auth.Load(), meta, sess.PublicKey(), s.now())
		if why != "" {
			// The users were reloaded between the key check and the session.
			s.log.Warn("session refused", "login", sess.User(), "remote", remote, "reason", why)
			sayLine(sess, msgNotListed)
			_ = sess.Exit(1)
			return
		}
		s.limiter.reset(host(sess.RemoteAddr()))
		log := s.log.With("user", u.Name, "role", string(u.Access), "key", u.Key, "remote", remote)
		if _, _, ok := sess.Pty(); !ok {
			log.Info("refused: no terminal")
			sayLine(sess, msgNeedsTerminal)
			_ = sess.Exit(1)
			return
		}
		se := &conn{user: u, meta: meta, key: sess.PublicKey()}
		if full := s.admit(se); full != "" {
			log.Warn("refused: "+full, "max_sessions", s.set.MaxSessions)
			sayLine(sess, full)
			_ = sess.Exit(1)
			return
		}
		defer s.leave(se)
		start := s.now()
		log.Info("connect")
		sess.Context().SetValue(userKey{}, se)
		next(sess)
		se.mu.Lock()
		why, m, done := se.end, se.tui, se.done
		se.mu.Unlock()
		if done != nil {
			done()
		}
		if m != nil && m.ExitNote() != "" {
			sayLine(sess, model.SanitizeText(m.ExitNote()))
		}
		if why != "" {
			sayLine(sess, why)
		}
		log.Info("disconnect", "duration", s.now().Sub(start).Round(time.Second).String(), "reason", firstNonEmpty(why, "quit"))
	}
}

// admit takes a session slot, or says why not.
func (s *Server) admit(se *conn) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closing:
		return msgShutdown
	case len(s.sessions) >= s.set.MaxSessions:
		return fmt.Sprintf(msgFullFormat, s.set.MaxSessions)
	}
	// Again under the lock Reload holds, so a reload between the gate's check and here
	// can't let the old access in.
	if u, why := identify(s.auth.Load(), se.meta, se.key, s.now()); why != "" || u != se.user {
		return msgAccessChanged
	}
	s.sessions[se] = struct{}{}
	s.done.Add(1)
	return ""
}

func (s *Server) leave(se *conn) {
	s.mu.Lock()
	delete(s.sessions, se)
	s.mu.Unlock()
	s.done.Done()
}

// program builds one person's TUI: the factory's options for them, the session's own size,
// colour profile and (filtered) environment, and its input watched for the idle limit.
func (s *Server) program(sess ssh.Session) *tea.Program {
	se, _ := sess.Context().Value(userKey{}).(*conn)
	if se == nil {
		return nil
	}
	env := sessionEnv(sess)
	opts, done := s.factory(se.user, env)
	opts.Environ = env
	if envSet(env, "NO_COLOR") {
		opts.NoColor = true
	}
	m := tui.New(opts)
	idle := newIdleInput(sess, s.set.IdleTimeout, s.set.afterFunc, func() {
		se.stop(fmt.Sprintf(msgIdleFormat, s.set.IdleTimeout))
	}, func() {
		// The client closed the session (its connection may live on, multiplexed): the
		// TUI would otherwise wait for keys that never come.
		se.stop("")
	})
	go func() { <-sess.Context().Done(); idle.stop() }()
	popts := append(bubbletea.MakeOptions(sess),
		// After MakeOptions, so these win: the person's own keystrokes reset the idle clock,
		// and the TUI sees only the variables that describe the terminal.
		tea.WithInput(idle),
		tea.WithEnvironment(env),
		// The process's signals are the server's (SIGTERM is a shutdown, which quits each
		// TUI in turn), not each session's.
		tea.WithoutSignalHandler(),
	)
	p := tea.NewProgram(m, popts...)
	se.mu.Lock()
	se.prog, se.tui, se.done = p, m, done
	stopped := se.end != ""
	se.mu.Unlock()
	if stopped {
		go p.Send(tui.ShutdownMsg{})
	}
	return p
}

// sessionEnv is the part of the client's environment the TUI may see: what describes the
// terminal. The rest (EDITOR, VISUAL, TMUX ...) is the client's machine, not this one:
// EDITOR would run a command of the client's choosing here.
func sessionEnv(sess ssh.Session) []string {
	var env []string
	for _, kv := range sess.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "COLORTERM", "NO_COLOR", "LANG", "LC_ALL", "LC_CTYPE":
			env = append(env, kv)
		}
	}
	if pty, _, ok := sess.Pty(); ok {
		env = append(env, "TERM="+pty.Term)
	}
	return env
}

func envSet(env []string, name string) bool {
	for _, kv := range env {
		if k, v, _ := strings.Cut(kv, "="); k == name && v != "" {
			return true
		}
	}
	return false
}

// sayLine writes one line to the client outside the TUI (an emulated pty turns \n into
// \r\n). It goes to stderr, where ssh shows messages even with output redirected.
func sayLine(sess ssh.Session, msg string) {
	_, _ = io.WriteString(sess.Stderr(), msg+"\n")
}

func firstNonEmpty(v ...string) string {
	for _, s := range v {
		if s != "" {
			return s
		}
	}
	return ""
}

// idleInput is the session's input with a clock: no input for the idle limit calls onIdle;
// the end of the input (the client closed the session) calls onEnd.
type idleInput struct {
	r     io.Reader
	d     time.Duration
	timer idleTimer
	onEnd func()
	ended sync.Once
}

// idleTimer is the part of *time.Timer the idle limit uses.
type idleTimer interface {
	Reset(time.Duration) bool
	Stop() bool
}

// newIdleInput watches r: onIdle runs (through afterFunc, time.AfterFunc) once d passes
// without input.
func newIdleInput(r io.Reader, d time.Duration, afterFunc func(time.Duration, func()) idleTimer, onIdle, onEnd func()) *idleInput {
	return &idleInput{r: r, d: d, timer: afterFunc(d, onIdle), onEnd: onEnd}
}

func (in *idleInput) Read(p []byte) (int, error) {
	n, err := in.r.Read(p)
	if n > 0 {
		in.timer.Reset(in.d)
	}
	if err != nil {
		in.ended.Do(in.onEnd)
	}
	return n, err
}

func (in *idleInput) stop() { in.timer.Stop() }
