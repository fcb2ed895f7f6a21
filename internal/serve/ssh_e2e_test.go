package serve

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/triage-dev/triage/config"
	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/tui"
)

// sshKey writes a new ed25519 private key for the OpenSSH client (0600) and returns its path
// and SHA256 fingerprint.
func sshKey(t *testing.T, dir, name string) (path, fingerprint string) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := gossh.MarshalPrivateKey(priv, name)
	if err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	sp, err := gossh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return path, gossh.FingerprintSHA256(sp)
}

// sshClientArgs are the OpenSSH client's options for a test: this key only, no known_hosts,
// no config from the machine.
func sshClientArgs(addr, key string) []string {
	host, port, _ := net.SplitHostPort(addr)
	return []string{"-F", "/dev/null", "-p", port, "-i", key, "-o", "IdentitiesOnly=yes", "-o", "StrictHostKeyChecking=no",
		"-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR", "-o", "BatchMode=yes", host}
}

// panes runs OpenSSH clients in tmux windows (a pty each) on a private tmux server.
type panes struct {
	t      *testing.T
	socket string
}

func newPanes(t *testing.T) *panes {
	t.Helper()
	for _, bin := range []string{"ssh", "tmux"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Fatalf("this test drives the real OpenSSH client in tmux: %s is missing (.ci/run installs openssh-client and tmux)", bin)
		}
	}
	p := &panes{t: t, socket: fmt.Sprintf("triage-e2e-%d-%d", os.Getpid(), time.Now().UnixNano())}
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", p.socket, "kill-server").Run() })
	return p
}

func (p *panes) tmux(args ...string) string {
	p.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", p.socket, "-f", "/dev/null"}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %v: %v: %s", args, err, out)
	}
	return string(out)
}

// open starts `ssh -t login@server` in a 100x30 window named name.
func (p *panes) open(name, login, addr, key string) {
	args := append([]string{"ssh", "-t"}, sshClientArgs(addr, key)...)
	args[len(args)-1] = login + "@" + args[len(args)-1]
	p.tmux("new-session", "-d", "-s", name, "-x", "100", "-y", "30", "-e", "TERM=xterm-256color", strings.Join(args, " ")+"; sleep 60")
}

func (p *panes) screen(name string) string { return p.tmux("capture-pane", "-p", "-t", name) }

func (p *panes) keys(name string, keys ...string) {
	p.tmux(append([]string{"send-keys", "-t", name}, keys...)...)
}

// waitFor polls the pane until it shows every string, or fails with the screen.
func (p *panes) waitFor(name string, what ...string) {
	p.t.Helper()
	var s string
	ok := testbed.Until(p.t, func() bool {
		s = p.screen(name)
		for _, w := range what {
			if !strings.Contains(s, w) {
				return false
			}
		}
		return true
	})
	if !ok {
		p.t.Fatalf("%s: waited for %q until the test's end; the screen:\n%s", name, what, s)
	}
}

// serveHub runs a server on a loopback port whose sessions run on f's hub as `triage serve`
// wires them (Remote), logging to logs (nil: discarded), until the test ends; it returns the
// address.
func serveHub(tb testing.TB, f *fixture, auth *config.ServeAuth, logs io.Writer) string {
	tb.Helper()
	return serveHubMailing(tb, f, auth, logs, nil)
}

// serveHubMailing is serveHub whose sessions send replies with mailer (nil: none).
func serveHubMailing(tb testing.TB, f *fixture, auth *config.ServeAuth, logs io.Writer, mailer tui.Mailer) string {
	tb.Helper()
	log := slog.New(slog.DiscardHandler)
	if logs != nil {
		log = slog.New(slog.NewTextHandler(logs, nil))
	}
	srv, err := New(Settings{Addr: "127.0.0.1:0", HostKeyPath: filepath.Join(tb.TempDir(), "host_key"), MaxSessions: 4,
		IdleTimeout: time.Minute, MaxAuthFailures: 10, ShutdownGrace: 2 * time.Second, Auth: auth},
		func(u User, _ []string) (tui.Options, func()) {
			s := f.hub.Session(u)
			return s.Options(tui.Options{SpreadsheetID: sheetID, Remote: true, Mailer: mailer}), s.Close
		}, log)
	if err != nil {
		tb.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, l) }()
	tb.Cleanup(func() {
		cancel()
		<-served
	})
	return l.Addr().String()
}

// TestSSHEndToEnd connects with the real OpenSSH client through a pty, as people on the jump
// host would: alice (operator) sets a status and the emulator's row records her name in
// triaged_by; bob (viewer), connected at the same time, sees it without a keypress and can't
// set one himself (told why, nothing written); an unlisted key is refused before any screen.
func TestSSHEndToEnd(t *testing.T) {
	p := newPanes(t)
	f := newFixture(t, time.Hour, 5)
	f.run(t)
	dir := t.TempDir()
	aliceKey, aliceFP := sshKey(t, dir, "alice")
	bobKey, bobFP := sshKey(t, dir, "bob")
	eveKey, _ := sshKey(t, dir, "eve")
	auth := &config.ServeAuth{
		Keys:  map[string]config.ServeIdentity{aliceFP: {Name: "alice", Access: model.AccessOperator}, bobFP: {Name: "bob", Access: model.AccessViewer}},
		Users: map[string]model.Access{"alice": model.AccessOperator, "bob": model.AccessViewer},
	}
	logs := &testbed.Buffer{}
	addr := serveHub(t, f, auth, logs)

	// An unlisted key: refused at authentication, no screen.
	out, err := exec.Command("ssh", append(append([]string{"-T"}, sshClientArgs(addr, eveKey)...), "true")...).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "Permission denied (publickey)") || strings.Contains(string(out), "triage") {
		t.Errorf("an unlisted key: err %v, output %q", err, out)
	}

	p.open("alice", "alice", addr, aliceKey)
	p.open("bob", "bob", addr, bobKey)
	p.waitFor("alice", "alice · operator", "Person 4")
	p.waitFor("bob", "bob · viewer", "Person 4")

	// bob, a viewer, tries to set a status: nothing is sent, and he is told why.
	writes := f.emu.Count("spreadsheets.batchUpdate")
	p.keys("bob", "s")
	p.waitFor("bob", "bob is a viewer")
	if n := f.emu.Count("spreadsheets.batchUpdate"); n != writes {
		t.Errorf("a viewer's s sent %d writes", n-writes)
	}

	// alice sets the cursor row (the newest: Person 4, id-4) to done.
	if s := p.screen("bob"); strings.Contains(s, "done") {
		t.Fatalf("bob's screen says done before anyone wrote it:\n%s", s)
	}
	p.keys("alice", "s")
	p.waitFor("alice", "Set status of")
	p.keys("alice", "4")
	if !testbed.Until(t, func() bool { return f.cell("Inbox", 5, "id-4", 4) == "done" }) {
		t.Fatalf("alice's write never landed: id-4 is %q\n%s", f.cell("Inbox", 5, "id-4", 4), p.screen("alice"))
	}
	if by := f.cell("Inbox", 5, "id-4", 6); by != "alice" {
		t.Errorf("triaged_by records %q, want alice (the person, not the service account)", by)
	}
	// bob's screen shows it without a keypress.
	start := time.Now()
	p.waitFor("bob", "done")
	t.Logf("bob saw alice's change %v after it landed", time.Since(start).Round(time.Millisecond))
	if !strings.Contains(logs.String(), "user=alice") {
		t.Errorf("the server log lacks alice's connect:\n%s", logs.String())
	}
}
