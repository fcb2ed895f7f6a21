package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/triage-dev/triage/config"
	"github.com/triage-dev/triage/tui"
)

// TestOnlySettingsReadsTheEnvironment: settings.go is the one reader of the environment in
// this package; every other file gets what it needs from the resolved settings.
func TestOnlySettingsReadsTheEnvironment(t *testing.T) {
	re := regexp.MustCompile(`os\.(Getenv|LookupEnv|Environ|UserHomeDir)\(|\.getenv\(|config\.DefaultPath\(`)
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f == "settings.go" || strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if re.MatchString(line) {
				t.Errorf("%s:%d reads the environment outside settings.go: %s", f, i+1, strings.TrimSpace(line))
			}
		}
	}
}

// TestSettingsPrecedence: a flag beats the environment, which beats the config file.
func TestSettingsPrecedence(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.toml")
	if err := os.WriteFile(cfg, []byte("spreadsheet = \"from-file\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"HOME": dir, "XDG_CONFIG_HOME": dir}
	e := &env{getenv: func(k string) string { return vars[k] }, stderr: &strings.Builder{}}
	get := func(g *globals) *settings {
		t.Helper()
		e.environ = nil
		s, err := resolve(g, e)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if s := get(&globals{config: cfg}); s.spreadsheet != "from-file" {
		t.Errorf("config file: %q", s.spreadsheet)
	}
	vars["TRIAGE_SPREADSHEET"] = "from-env"
	vars["SHEETS_EMULATOR_HOST"] = "127.0.0.1:9"
	vars["GOOGLE_APPLICATION_CREDENTIALS"] = "/env.json"
	if s := get(&globals{config: cfg}); s.spreadsheet != "from-env" || s.endpoint != "http://127.0.0.1:9" || s.credentials != "/env.json" {
		t.Errorf("environment: %+v", s)
	}
	if s := get(&globals{config: cfg, spreadsheet: "from-flag", endpoint: "http://h:1", credentials: "/flag.json"}); s.spreadsheet != "from-flag" || s.endpoint != "http://h:1" || s.credentials != "/flag.json" {
		t.Errorf("flags: %+v", s)
	}
	vars["TRIAGE_CONFIG"] = filepath.Join(dir, "missing.toml")
	if _, err := resolve(&globals{}, &env{getenv: func(k string) string { return vars[k] }, stderr: &strings.Builder{}}); err == nil {
		t.Error("TRIAGE_CONFIG naming a missing file should be an error")
	}
	if s := get(&globals{config: cfg}); s.spreadsheet != "from-env" {
		t.Errorf("--config beats TRIAGE_CONFIG: %+v", s)
	}
	v := readEnvironment(func(k string) string {
		return map[string]string{"HOME": "/h", "LOGNAME": "ann", "SSH_TTY": "/dev/pts/1"}[k]
	})
	if v.stateHome != "/h/.local/state" || v.user != "ann" || !v.ssh || v.display {
		t.Errorf("readEnvironment: %+v", v)
	}
}

// The TUI is handed the terminal's variables (tui.Options.Environ), and only those: the rest
// of the environment (a secret among it) stays out of the model.
func TestTerminalOptionsCarryTheTerminalsEnvironment(t *testing.T) {
	vars := map[string]string{"TERM": "dumb", "EDITOR": "vi", "TMUX": "/tmp/tmux-0/default,1,0", "CRM_TOKEN": "s3cret", "HOME": "/h"}
	e := &env{getenv: func(k string) string { return vars[k] }}
	opts, err := terminalOptions(e, &config.Config{}, tui.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(opts.Environ, " ")
	if got != "TERM=dumb TMUX=/tmp/tmux-0/default,1,0 EDITOR=vi" {
		t.Errorf("Environ = %q", got)
	}
}
