package cli

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/tui"
)

// TestDemoReadsTheConfig: `triage demo --config FILE` uses the file's [keys], mouse, refresh
// and readonly (the demo used to pass an empty config, so none of them did anything there).
// The program runs under teatest: the rebound key does the action, the old one doesn't.
func TestDemoReadsTheConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	cfg := "refresh = \"7m\"\nmouse = true\n[tabs.inbox]\nmark_read_on_open = true\n[keys]\nset_status = [\"Z\"]\nquit = [\"ctrl+q\"]\n"
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }}
	opts, stop, err := demoOptions(ctx, &globals{config: path}, e)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if opts.Refresh != 7*time.Minute || !opts.Mouse || !opts.Demo {
		t.Errorf("the config's refresh and mouse reach the demo: refresh %v mouse %v demo %v", opts.Refresh, opts.Mouse, opts.Demo)
	}

	// The person's way of working (mark_read_on_open) reaches the demo's own inbox tab.
	wb, err := opts.Store.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if in := wb.Tab(model.RoleInbox); in == nil || !in.Config.MarkReadOnOpen {
		t.Errorf("mark_read_on_open doesn't reach the demo's inbox")
	}

	// The whole screen is read from inside the program (testbed.Program), not the renderer's
	// output fragments.
	tm := testbed.StartProgram(t, tui.New(opts), 100, 30)
	wait := func(what ...string) { t.Helper(); tm.WaitScreen(t, what...) }
	wait("Acme Studio", "Z status") // the footer names the config's key
	tm.Keys("q")                    // no longer quits: the program must still answer
	tm.Keys("Z")
	wait("Set status of")
	tm.Keys("esc")
	tm.Keys("ctrl+q")
	tm.Finished(t)
}

// TestBadKeysStopTheTUIWithTheirLines: a [keys] table with problems stops the TUI (and the demo)
// before it starts, with every problem on its line, as `triage config check` shows them: both
// call tui.ApplyKeys (DESIGN invariant 12).
func TestBadKeysStopTheTUIWithTheirLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	cfg := "refresh = \"7m\"\n[keys]\nqiut = [\"x\"]\nset_status = [\"r\"]\n"
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	e := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }}
	_, _, err := demoOptions(context.Background(), &globals{config: path}, e)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitUsage {
		t.Fatalf("want a usage error, got %v", err)
	}
	for _, want := range []string{path + `:3: unknown key action "qiut"`, path + `:2: key "r" is bound to both`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}
