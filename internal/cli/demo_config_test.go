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

// A config with problems in several places: the TUI lists them all at once, [keys] among
// them, as `triage config check` does (it used to list [keys] only once the rest was
// fixed); the demo stops only for the settings it uses and says the rest isn't in its way;
// a value of the wrong type says what it should be in the config's words.
func TestConfigProblemsAllAtOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	cfg := "mouse = \"yes\"\nrefresh = \"soon\"\n[sources.crm]\nurl_prefixes = [\"ftp://x\"]\ntimeout = \"forever\"\n[keys]\nqiut = [\"x\"]\n"
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr strings.Builder
	e := &env{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }}
	g := &globals{config: path}
	checkErr := runConfigCheck(g, e)
	var ee *exitError
	if !errors.As(checkErr, &ee) || ee.code != exitUsage {
		t.Fatalf("config check: %v", checkErr)
	}
	checked := strings.Count(stdout.String(), path+":")
	if !strings.Contains(stdout.String(), `mouse must be true or false, not a string`) {
		t.Errorf("the type problem is the decoder's words:\n%s", stdout.String())
	}

	_, err := resolveFor(g, e, forTUI)
	if err == nil {
		t.Fatal("the TUI starts on a config with problems")
	}
	if got := strings.Count(err.Error(), path+":"); got != checked {
		t.Errorf("the TUI lists %d problems, config check %d:\n%v\n--- config check\n%s", got, checked, err, stdout.String())
	}
	if !strings.Contains(err.Error(), `unknown key action "qiut"`) {
		t.Errorf("the TUI's error lacks the [keys] problem:\n%v", err)
	}

	stderr.Reset()
	_, err = resolveFor(g, e, forDemo)
	if err == nil {
		t.Fatal("the demo starts with a bad mouse, refresh and [keys]")
	}
	for _, want := range []string{"mouse must be", "refresh", "qiut"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the demo's error lacks %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "sources") {
		t.Errorf("the demo refuses for [sources], which it doesn't use:\n%v", err)
	}
	if !strings.Contains(stderr.String(), "the demo doesn't use sources") {
		t.Errorf("the demo doesn't say the [sources] problems aren't in its way: %q", stderr.String())
	}

	// Only [sources] wrong: the demo starts.
	if err := os.WriteFile(path, []byte("[sources.crm]\nurl_prefixes = [\"ftp://x\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := resolveFor(g, e, forDemo); err != nil {
		t.Errorf("the demo refuses a config whose only problems are in [sources]: %v", err)
	}
}
