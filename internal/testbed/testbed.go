// Package testbed is the test setup that several packages' tests share: the Sheets
// emulator behind a real HTTP server with a real sheets/v4 client over it, a local OAuth
// authorization server, a gate that holds calls at a destination, a TUI program a test can
// look into, the randomised tests' seeds, the other editor who moves rows under triage's
// writes (Adversary), and small helpers (a buffer two goroutines share, a byte counter that
// says when a writer goes quiet, SSH keys).
//
// It is not a _test package so that the tests of sheets, replay, config, tui,
// internal/serve, internal/cli and the root can all import it; its parts are real (real
// HTTP, the real client, the real emulator), never fakes that skip the wire (docs/DESIGN.md
// §12); SheetBackend is the sheet store as store/storetest exercises it. Only tests may
// import it: no production package does (docs/DESIGN.md §1), and of ours it imports only
// model, store, store/storetest, sheets and the emulator (replay/receiver may join them), so
// that the in-package tests of config, tui, internal/serve and internal/cli can import it
// without a cycle. TestOnlyTestsImportTheTestbed holds both.
package testbed

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Wait bounds what is no test's outcome: how long Peak holds requests that never fill its
// bound, and how long a program's end is awaited (Finished) before the test's own -timeout.
// A wait for something a test expects uses Until, bounded by the test only, so a busy
// machine can't fail it.
const Wait = 10 * time.Second

// Until polls cond until it holds (true) or the test is over (false): its context is done
// (the test ended), or its -timeout is near. It is the one wait loop for tests that watch
// something happen in another goroutine or process (a server stopping, a program's screen,
// a receiver's log); no wall-clock limit of its own decides it. Near the deadline it gives up
// with a little time left (a tenth of what was left when it began, at most 5s), so that the
// caller's failure, with what it saw, is reported rather than the test binary's panic. The
// first check is immediate, then one every 5ms.
//
//	if !testbed.Until(t, func() bool { return rcv.InFlight() >= 2 }) {
//		t.Fatal("the calls never arrived")
//	}
func Until(t testing.TB, cond func() bool) bool {
	var near <-chan time.Time
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if deadline, ok := d.Deadline(); ok {
			left := time.Until(deadline)
			timer := time.NewTimer(left - min(left/10, 5*time.Second))
			defer timer.Stop()
			near = timer.C
		}
	}
	// The cadence of the polls, not a limit: only the test's end stops them.
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-t.Context().Done():
			return false
		case <-near:
			return cond()
		case <-tick.C:
		}
	}
	return true
}

// Buffer is a bytes.Buffer that a writer and a reader in different goroutines may share (a
// command's output read by the test while it runs, a logger's lines).
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String is everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// WaitFor waits until the buffer holds want, failing the test with what it holds.
func (b *Buffer) WaitFor(t testing.TB, want string) {
	t.Helper()
	if !Until(t, func() bool { return strings.Contains(b.String(), want) }) {
		t.Fatalf("no %q before the test ended; got:\n%q", want, Tail(b.String()))
	}
}

// Tail is the last 2000 bytes of s, for a failure message.
func Tail(s string) string {
	if len(s) > 2000 {
		return "…" + s[len(s)-2000:]
	}
	return s
}

// Serve serves h over real HTTP on the loopback interface until the test ends.
func Serve(t testing.TB, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// DirState lists dir's entries, recursively, with their modes and sizes, and dir's own mode:
// compared before and after, it shows whether a command changed anything there.
func DirState(t testing.TB, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(&b, "%s %v %d\n", rel, fi.Mode(), fi.Size())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// ReadOnlyWorkDir makes the test's working directory a fresh one holding one file, read-only
// (0555) until the test ends, and returns it with its DirState: a command that must write
// nothing there can be checked against it.
func ReadOnlyWorkDir(t testing.TB) (dir, state string) {
	t.Helper()
	dir = t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "keep"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(dir, 0o755) })
	state = DirState(t, dir)
	t.Chdir(dir)
	return dir, state
}

// WriteFile writes text to name under a fresh t.TempDir() and returns its path (a config
// file, a client secret).
func WriteFile(t testing.TB, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
