package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	"github.com/triage-dev/triage/config"
	"github.com/triage-dev/triage/internal/words"
	"github.com/triage-dev/triage/sheets"
)

// This file is the one settings resolver: flags beat the environment, which beats the config
// file. It is the only code in this package that reads the environment
// (TestOnlySettingsReadsTheEnvironment); everything else gets what it needs from settings
// or environment.

// globals are the flags every command accepts.
type globals struct {
	spreadsheet, config, endpoint, credentials string
	readonly                                   bool
	// databaseURL is --database-url: a PostgreSQL store instead of the sheet.
	databaseURL string
}

// settings are the globals resolved against the environment and the config file:
// flags beat the environment, which beats the config file.
type settings struct {
	cfg         *config.Config
	spreadsheet string
	endpoint    string
	credentials string
	// credentialsFromEnv says credentials came from GOOGLE_APPLICATION_CREDENTIALS (for messages).
	credentialsFromEnv bool
	readonly           bool
	// databaseURL, when set, is the PostgreSQL store every command uses instead of the sheet
	// (--database-url, TRIAGE_DATABASE_URL, [store] url; checked by config.CheckStoreURL).
	// Never printed as is: config.RedactURL.
	databaseURL string
}

// environment is every environment variable the CLI consults, read once per invocation.
type environment struct {
	spreadsheet       string // TRIAGE_SPREADSHEET
	databaseURL       string // TRIAGE_DATABASE_URL
	configFile        string // TRIAGE_CONFIG
	defaultConfigPath string // $XDG_CONFIG_HOME/triage/config.toml (config.DefaultPathFrom)
	emulatorHost      string // SHEETS_EMULATOR_HOST (host:port)
	credentials       string // GOOGLE_APPLICATION_CREDENTIALS
	cloudSDKConfig    string // CLOUDSDK_CONFIG (gcloud's directory)
	home              string // HOME, else the OS's idea of it
	stateHome         string // XDG_STATE_HOME, else ~/.local/state
	user              string // USER, else LOGNAME
	noColor           bool   // NO_COLOR
	ssh               bool   // SSH_CONNECTION or SSH_TTY: a remote session
	display           bool   // DISPLAY or WAYLAND_DISPLAY: a local browser can open
	tmux              bool   // TMUX: the TUI runs inside tmux (whose clipboard option matters)
	columns           int    // COLUMNS, when a positive number: how wide the terminal is, as the shell says
	// colorEnv is what decides whether help may be drawn in colour (colorprofile.Detect):
	// TERM, COLORTERM, NO_COLOR, CLICOLOR, CLICOLOR_FORCE, TTY_FORCE, TMUX, as KEY=VALUE.
	colorEnv []string
	// termEnv is what the TUI reads of the environment (tui.Options.Environ): TERM,
	// COLORTERM, NO_COLOR, TMUX, VISUAL, EDITOR, as KEY=VALUE.
	termEnv []string
	// secret reads a source header's "env:NAME" value at send time (config §8).
	secret func(string) string
}

func readEnvironment(getenv func(string) string) environment {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	v := environment{
		spreadsheet:       getenv("TRIAGE_SPREADSHEET"),
		databaseURL:       getenv("TRIAGE_DATABASE_URL"),
		configFile:        getenv("TRIAGE_CONFIG"),
		defaultConfigPath: config.DefaultPathFrom(getenv),
		emulatorHost:      getenv(sheets.EmulatorHostEnv),
		credentials:       getenv("GOOGLE_APPLICATION_CREDENTIALS"),
		cloudSDKConfig:    getenv("CLOUDSDK_CONFIG"),
		home:              first(getenv("HOME"), homeDir()),
		stateHome:         getenv("XDG_STATE_HOME"),
		user:              first(getenv("USER"), getenv("LOGNAME")),
		noColor:           getenv("NO_COLOR") != "",
		ssh:               getenv("SSH_CONNECTION") != "" || getenv("SSH_TTY") != "",
		display:           getenv("DISPLAY") != "" || getenv("WAYLAND_DISPLAY") != "",
		tmux:              getenv("TMUX") != "",
		columns:           positiveInt(getenv("COLUMNS")),
		secret:            getenv,
	}
	for _, k := range []string{"TERM", "COLORTERM", "NO_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "TTY_FORCE", "TMUX"} {
		if val := getenv(k); val != "" {
			v.colorEnv = append(v.colorEnv, k+"="+val)
		}
	}
	for _, k := range []string{"TERM", "COLORTERM", "NO_COLOR", "TMUX", "VISUAL", "EDITOR"} {
		if val := getenv(k); val != "" {
			v.termEnv = append(v.termEnv, k+"="+val)
		}
	}
	if v.stateHome == "" && v.home != "" {
		v.stateHome = filepath.Join(v.home, ".local", "state")
	}
	return v
}

// positiveInt is s as a positive number, or 0 when it is not one.
func positiveInt(s string) int {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

// vars is the environment of this invocation (read on first use).
func (e *env) vars() *environment {
	if e.environ == nil {
		v := readEnvironment(e.getenv)
		e.environ = &v
	}
	return e.environ
}

// demoProblems is the demo's part of the config's problems: those of the settings it uses,
// as an error (nil when there are none); the others are said once on stderr, as not used.
func demoProblems(e *env, ce *config.Error) error {
	var used, other []config.Problem
	for _, p := range ce.Problems {
		if p.Warning {
			continue
		}
		if demoUses(p) {
			used = append(used, p)
		} else {
			other = append(other, p)
		}
	}
	if len(other) > 0 {
		var sections []string
		for _, p := range other {
			top, _, _ := strings.Cut(p.Key, ".")
			if !slices.Contains(sections, top) {
				sections = append(sections, top)
			}
		}
		fmt.Fprintf(e.stderr, "triage: the demo doesn't use %s of %s: %s there %s not in its way (`triage config check` lists %s)\n",
			strings.Join(sections, ", "), ce.Path, words.Count(len(other), "problem", "problems"), words.Plural(len(other), "is", "are"), words.Plural(len(other), "it", "them"))
	}
	if len(used) == 0 {
		return nil
	}
	return &config.Error{Path: ce.Path, Problems: used}
}

// configPath is the config file to read and whether it was asked for (--config or
// TRIAGE_CONFIG: then a missing file is an error; the default place may have none).
func configPath(g *globals, e *env) (path string, explicit bool) {
	if p := first(g.config, e.vars().configFile); p != "" {
		return p, true
	}
	return e.vars().defaultConfigPath, false
}

// purpose says what a command reads the config for, and so which of its problems stop it:
// every command refuses a config with problems; one that starts the TUI also checks [keys]
// (so its error lists everything at once, as `triage config check` does); the demo uses
// only the terminal settings, and only their problems stop it.
type purpose int

const (
	forCLI  purpose = iota // every problem but [keys], which only the TUI uses
	forTUI                 // every problem, [keys] included
	forDemo                // [keys], mouse, refresh and readonly; the rest is not used
)

// demoUses reports whether the demo uses the config entry a problem is about: the terminal
// settings. A problem with no key (the file doesn't parse) stops it too.
func demoUses(p config.Problem) bool {
	top, _, _ := strings.Cut(p.Key, ".")
	switch top {
	case "", "keys", "mouse", "refresh", "readonly":
		return true
	}
	return false
}

func resolve(g *globals, e *env) (*settings, error) { return resolveFor(g, e, forCLI) }

// resolveFor is resolve for a purpose: which problems of the config stop the command.
func resolveFor(g *globals, e *env, why purpose) (*settings, error) {
	path, explicit := configPath(g, e)
	cfg := &config.Config{}
	if path != "" {
		c, err := config.Load(path, explicit)
		var ce *config.Error
		if errors.As(err, &ce) && c != nil && why != forCLI {
			_, kps := keyBindings(c)
			ce.Problems = append(ce.Problems, kps...)
			sort.SliceStable(ce.Problems, func(i, j int) bool { return ce.Problems[i].Line < ce.Problems[j].Line })
		}
		if ce != nil && why == forDemo {
			err = demoProblems(e, ce)
		}
		if err != nil {
			return nil, &exitError{code: exitUsage, err: fmt.Errorf("%w\nrun `triage config check` after fixing it", err)}
		}
		for _, w := range c.Warnings {
			fmt.Fprintf(e.stderr, "triage: warning: %s:%d: %s\n", path, w.Line, w.Msg)
		}
		cfg = c
	}
	s := &settings{cfg: cfg, readonly: g.readonly || cfg.ReadOnly}
	s.spreadsheet = first(g.spreadsheet, e.vars().spreadsheet, cfg.Spreadsheet)
	s.endpoint = g.endpoint
	if s.endpoint == "" {
		if h := e.vars().emulatorHost; h != "" {
			s.endpoint = "http://" + strings.TrimPrefix(h, "http://")
		}
	}
	s.credentials = first(g.credentials, e.vars().credentials)
	s.credentialsFromEnv = g.credentials == "" && s.credentials != ""
	s.databaseURL = first(g.databaseURL, e.vars().databaseURL, cfg.Store.URL)
	if s.databaseURL != "" {
		// The config file's url is checked with the rest of the file; a flag's or the
		// environment's by the same rule, here.
		if err := config.CheckStoreURL(s.databaseURL); err != nil {
			return nil, usageErr("%v", err)
		}
	}
	return s, nil
}

func first(v ...string) string {
	for _, s := range v {
		if s != "" {
			return s
		}
	}
	return ""
}

// tokenCachePath is where `triage auth login` keeps the user's token.
func tokenCachePath(e *env) string {
	if e.vars().stateHome == "" {
		return ""
	}
	return filepath.Join(e.vars().stateHome, "triage", "token.json")
}

// globalFlag selects which of the global flags a command takes.
type globalFlag int

const (
	gSpreadsheet globalFlag = 1 << iota
	gConfig
	gEndpoint
	gCredentials
	gReadonly
	gDatabase

	gConnect = gSpreadsheet | gConfig | gEndpoint | gCredentials | gDatabase // commands that only read
	gAll     = gConnect | gReadonly
)

// register adds the selected global flags to a command's flag set.
func (g *globals) register(fs *pflag.FlagSet, which globalFlag) {
	if which&gSpreadsheet != 0 {
		fs.StringVar(&g.spreadsheet, "spreadsheet", g.spreadsheet, "spreadsheet ID (env TRIAGE_SPREADSHEET)")
	}
	if which&gConfig != 0 {
		fs.StringVar(&g.config, "config", g.config, "config file (env TRIAGE_CONFIG; default $XDG_CONFIG_HOME/triage/config.toml)")
	}
	if which&gEndpoint != 0 {
		fs.StringVar(&g.endpoint, "endpoint", g.endpoint, "Sheets API endpoint URL, no auth (env SHEETS_EMULATOR_HOST=host:port)")
	}
	if which&gCredentials != 0 {
		fs.StringVar(&g.credentials, "credentials", g.credentials, "the JSON key of a service account or an authorized user (env GOOGLE_APPLICATION_CREDENTIALS)")
	}
	if which&gDatabase != 0 {
		fs.StringVar(&g.databaseURL, "database-url", g.databaseURL, "a PostgreSQL store instead of the sheet: postgres://USER:PASSWORD@HOST/DB?sslmode=require (env TRIAGE_DATABASE_URL; config [store] url)")
	}
	if which&gReadonly != 0 {
		fs.BoolVar(&g.readonly, "readonly", g.readonly, "open read-only: nothing is written, enforced by the store")
	}
}

func homeDir() string {
	h, _ := os.UserHomeDir()
	return h
}
