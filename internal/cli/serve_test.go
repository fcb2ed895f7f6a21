package cli

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/triage-dev/triage/internal/testbed"
)

// TestServeNeedsSomeoneToLetIn: a config that lists nobody is a usage error naming what to
// add, before anything listens.
func TestServeNeedsSomeoneToLetIn(t *testing.T) {
	c := &cli{t: t, env: map[string]string{"HOME": t.TempDir(), "XDG_CONFIG_HOME": t.TempDir()}}
	r := c.run("serve", "--spreadsheet", "s1", "--endpoint", "http://127.0.0.1:1")
	if r.code != exitUsage || !strings.Contains(r.stderr, "nobody can log in: add a [serve.users.NAME] section") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestConfigCheckReadsServeFiles: config check reports a bad authorized_keys line on the
// line of the setting, naming the file's line, as serve would refuse it.
func TestConfigCheckReadsServeFiles(t *testing.T) {
	dir := t.TempDir()
	ak := filepath.Join(dir, "authorized_keys")
	if err := os.WriteFile(ak, []byte("# team\nssh-ed25519 nonsense bob\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfg, []byte("[serve]\nauthorized_keys = \""+ak+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := &cli{t: t, env: map[string]string{"HOME": dir}}
	r := c.run("config", "check", "--config", cfg)
	if want := cfg + ":2: " + ak + ":2: not a public key line"; r.code != exitUsage || !strings.Contains(r.stdout, want) {
		t.Errorf("exit %d, stdout %q, want %q", r.code, r.stdout, want)
	}
	r = c.run("serve", "--config", cfg, "--spreadsheet", "s1")
	if r.code != exitUsage || !strings.Contains(r.stderr, ak+":2: not a public key line") {
		t.Errorf("serve: exit %d, stderr %q: want the same problem", r.code, r.stderr)
	}
}

// TestServeReloadsUsersOnHangup runs `triage serve` against the emulator: SIGHUP after a
// person is added lets them in; a broken config on SIGHUP keeps the users as they were;
// cancelling stops it with exit 0. It runs in a fresh read-only working directory, which
// serve must leave as it was (entries and modes): its only file is the host key in the
// state directory.
func TestServeReloadsUsersOnHangup(t *testing.T) {
	_, url := startEmu(t, smallWorkbook())
	cwd, cwdBefore := testbed.ReadOnlyWorkDir(t)
	dir := t.TempDir()
	alice, aliceLine := testbed.SSHKey(t)
	carol, carolLine := testbed.SSHKey(t)
	cfg := filepath.Join(dir, "config.toml")
	write := func(s string) {
		if err := os.WriteFile(cfg, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	base := "spreadsheet = \"s1\"\n[serve.users.alice]\nrole = \"operator\"\nkeys = [\"" + aliceLine + "\"]\n"
	write(base)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()

	var stdout, stderr testbed.Buffer
	env := map[string]string{"HOME": dir, "XDG_STATE_HOME": dir, "SHEETS_EMULATOR_HOST": strings.TrimPrefix(url, "http://")}
	e := &env_{stdout: &stdout, stderr: &stderr, getenv: func(k string) string { return env[k] }}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	code := make(chan int, 1)
	go func() { code <- run(ctx, []string{"serve", "--config", cfg, "--addr", addr}, e.env()) }()
	waitLog := func(want string) {
		t.Helper()
		if !testbed.Until(t, func() bool { return strings.Contains(stderr.String(), want) }) {
			t.Fatalf("no %q in the log:\n%s", want, stderr.String())
		}
	}
	waitLog("msg=listening")
	if !strings.Contains(stderr.String(), "fingerprint=SHA256:") {
		t.Errorf("the host key's fingerprint is not logged:\n%s", stderr.String())
	}
	if fi, err := os.Stat(filepath.Join(dir, "triage", "ssh_host_ed25519")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("host key in the state directory: %v", err)
	}
	login := func(key gossh.Signer) error {
		c, err := gossh.Dial("tcp", addr, &gossh.ClientConfig{User: "x", Auth: []gossh.AuthMethod{gossh.PublicKeys(key)}, HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 5 * time.Second})
		if err == nil {
			_ = c.Close()
		}
		return err
	}
	if err := login(alice); err != nil {
		t.Fatalf("alice: %v", err)
	}
	if login(carol) == nil {
		t.Fatal("carol got in before she was listed")
	}

	write(base + "[serve.users.carol]\nrole = \"viewer\"\nkeys = [\"" + carolLine + "\"]\n")
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitLog("users reloaded")
	if err := login(carol); err != nil {
		t.Errorf("carol after SIGHUP: %v", err)
	}

	write(base + "[serve.users.carol]\nrole = \"boss\"\n")
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitLog("reload refused")
	if err := login(carol); err != nil {
		t.Errorf("a broken config on SIGHUP changed the users: carol %v", err)
	}

	cancel()
	select {
	case c := <-code:
		if c != exitOK {
			t.Errorf("exit %d:\n%s", c, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop")
	}
	if strings.Contains(stderr.String(), "PRIVATE KEY") {
		t.Error("the log holds the private key")
	}
	if after := testbed.DirState(t, cwd); after != cwdBefore {
		t.Errorf("serve changed its working directory:\nbefore\n%safter\n%s", cwdBefore, after)
	}
}

// env_ builds an env for run with the test's writers.
type env_ struct {
	stdout, stderr *testbed.Buffer
	getenv         func(string) string
}

func (e *env_) env() *env {
	return &env{stdin: strings.NewReader(""), stdout: e.stdout, stderr: e.stderr, getenv: e.getenv}
}
