package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/triage-dev/triage/config"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets"
)

// globals are the flags every command accepts.
type globals struct {
	spreadsheet, config, endpoint, credentials string
	readonly                                   bool
}

// register adds the global flags to a flag set. Defaults are the values already parsed, so
// a flag given before the subcommand survives the subcommand's own parse.
func (g *globals) register(fs *flag.FlagSet) {
	fs.StringVar(&g.spreadsheet, "spreadsheet", g.spreadsheet, "spreadsheet ID (env TRIAGE_SPREADSHEET)")
	fs.StringVar(&g.config, "config", g.config, "config file (default $XDG_CONFIG_HOME/triage/config.toml)")
	fs.StringVar(&g.endpoint, "endpoint", g.endpoint, "Sheets API endpoint URL, no auth (env SHEETS_EMULATOR_HOST=host:port)")
	fs.StringVar(&g.credentials, "credentials", g.credentials, "service-account or authorized-user JSON (env GOOGLE_APPLICATION_CREDENTIALS)")
	fs.BoolVar(&g.readonly, "readonly", g.readonly, "open read-only (enforced by the store)")
}

// settings are the globals resolved against the environment and the config file:
// flags beat the environment, which beats the config file.
type settings struct {
	cfg         *config.Config
	spreadsheet string
	endpoint    string
	credentials string
	readonly    bool
}

func resolve(g *globals, e *env) (*settings, error) {
	path, explicit := g.config, g.config != ""
	if path == "" {
		if p := e.getenv("TRIAGE_CONFIG"); p != "" {
			path, explicit = p, true
		} else {
			path = config.DefaultPathFrom(e.getenv)
		}
	}
	cfg := &config.Config{}
	if path != "" {
		c, err := config.Load(path, explicit)
		if err != nil {
			return nil, &exitError{code: exitUsage, err: fmt.Errorf("%w\nrun `triage config check` after fixing it", err)}
		}
		for _, w := range c.Warnings {
			fmt.Fprintf(e.stderr, "triage: warning: %s:%d: %s\n", path, w.Line, w.Msg)
		}
		cfg = c
	}
	s := &settings{cfg: cfg, readonly: g.readonly || cfg.ReadOnly}
	s.spreadsheet = first(g.spreadsheet, e.getenv("TRIAGE_SPREADSHEET"), cfg.Spreadsheet)
	s.endpoint = g.endpoint
	if s.endpoint == "" {
		if h := e.getenv("SHEETS_EMULATOR_HOST"); h != "" {
			s.endpoint = "http://" + strings.TrimPrefix(h, "http://")
		}
	}
	s.credentials = first(g.credentials, e.getenv("GOOGLE_APPLICATION_CREDENTIALS"))
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
	dir := e.getenv("XDG_STATE_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "triage", "token.json")
}

// openStore connects to the Sheets API and returns the store for the resolved settings.
func openStore(ctx context.Context, s *settings, e *env) (*sheets.Store, sheets.Identity, error) {
	if s.spreadsheet == "" {
		return nil, sheets.Identity{}, usageErr("no spreadsheet: pass --spreadsheet ID, set TRIAGE_SPREADSHEET, or put spreadsheet = \"ID\" in %s (the ID is the part of the sheet's URL between /d/ and /edit)", first(s.cfg.Path(), config.DefaultPathFrom(e.getenv)))
	}
	svc, ident, err := sheets.Connect(ctx, sheets.AuthOptions{
		Endpoint:        s.endpoint,
		CredentialsFile: s.credentials,
		TokenCacheFile:  tokenCachePath(e),
	})
	if err != nil {
		return nil, ident, &exitError{code: exitUsage, err: err}
	}
	st := sheets.New(ctx, svc, sheets.Options{
		SpreadsheetID: s.spreadsheet,
		Tabs:          s.cfg.TabConfigs(),
		ReadOnly:      s.readonly,
		Actor:         actorName(ident, e),
		Identity:      ident,
	})
	return st, ident, nil
}

// loadWorkbook does the first load; a failure here is a connection or setup problem, which
// the CLI reports with exit code 2.
func loadWorkbook(ctx context.Context, st *sheets.Store) (*model.Workbook, error) {
	wb, err := st.Load(ctx)
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	return wb, nil
}

// findTab resolves --tab (a tab name or a role name) in a loaded workbook. A configured tab
// that is missing from the spreadsheet or can't be used is reported with its real cause, by
// its configured name, whichever way it was asked for: `replay` asks for the role
// ("deadletter"), a person may type the tab's name ("failed_calls").
func findTab(wb *model.Workbook, name string) (*model.Table, error) {
	if name == "" {
		return nil, usageErr("--tab is required (tabs: %s)", tabNames(wb))
	}
	if t := wb.TabNamed(name); t != nil {
		return t, nil
	}
	role := model.Role(strings.ToLower(strings.TrimSpace(name)))
	if t := wb.Tab(role); t != nil {
		return t, nil
	}
	asked := func(tc model.TabConfig) bool { return strings.EqualFold(tc.Name, name) || tc.Role == role }
	for _, b := range wb.Broken {
		if asked(b.Config) {
			return nil, &exitError{code: exitUsage, err: fmt.Errorf("the %s tab %q can't be used: %w", b.Config.Role, b.Config.Name, b.Err)}
		}
	}
	for _, m := range wb.Missing {
		if asked(m) {
			return nil, usageErr("the %s tab %q is not in the spreadsheet: run `triage init` to create it, or, if the tab has another name, set it in the config ([tabs.%s] name = \"...\"); tabs loaded: %s",
				m.Role, m.Name, m.Role, tabNames(wb))
		}
	}
	return nil, usageErr("no tab %q: it is neither a configured tab's name nor a role (inbox, deadletter, queue); tabs loaded: %s", name, tabNames(wb))
}

func tabNames(wb *model.Workbook) string {
	var n []string
	for _, t := range wb.Tabs {
		n = append(n, t.Config.Name)
	}
	if len(n) == 0 {
		return "none loaded"
	}
	return joinQuoted(n)
}

// actorName is who fills triaged_by: the signed-in account or the service account's email;
// where the credentials don't say (ADC with a user account, the emulator), the local user
// and host, so a change can still be traced.
func actorName(ident sheets.Identity, e *env) string {
	if ident.Email != "" {
		return ident.Email
	}
	user := first(e.getenv("USER"), e.getenv("LOGNAME"), "unknown")
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	return user + "@" + host
}
