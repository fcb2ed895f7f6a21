package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/spf13/cobra"

	"github.com/triage-dev/triage/config"
	"github.com/triage-dev/triage/internal/words"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/tui"
)

func newConfigCmd(g *globals, e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Work with the config file",
		Long:  "Work with triage's config file ($XDG_CONFIG_HOME/triage/config.toml, or --config, or env TRIAGE_CONFIG).",
		Example: `  triage config check
  triage config check --config ./triage.toml`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error {
			return usageErr("config: want a subcommand: check (see triage config --help)")
		},
	}
	check := &cobra.Command{
		Use:   "check",
		Short: "Validate the config, every problem with its line",
		Long: `Validate the config file and print every problem with its line number. It accepts
exactly what the runtime accepts: both call the same validator. Exit 0 when the
config is fine (or absent at the default place), 2 otherwise.`,
		Example: `  triage config check
  triage config check --config ./triage.toml`,
		Args: noArgs,
	}
	g.register(check.Flags(), gConfig)
	check.RunE = func(*cobra.Command, []string) error { return runConfigCheck(g, e) }
	cmd.AddCommand(check)
	return cmd
}

func runConfigCheck(g *globals, e *env) error {
	path, explicit := configPath(g, e)
	probs, err := config.Check(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && !explicit {
			// The config is optional: no file at the default place means every default.
			fmt.Fprintf(e.stdout, "%s: no config file; triage runs on its defaults (see README.md, Config)\n", path)
			if line := refreshMode(g, e); line != "" {
				fmt.Fprintln(e.stdout, line)
			}
			return nil
		}
		return &exitError{code: exitUsage, err: err}
	}
	probs = append(probs, keyProblems(path)...)
	probs = append(probs, serveProblems(path, e.vars().home)...)
	sort.SliceStable(probs, func(i, j int) bool { return probs[i].Line < probs[j].Line })
	if len(probs) == 0 {
		fmt.Fprintf(e.stdout, "%s: ok\n", path)
		if line := refreshMode(g, e); line != "" {
			fmt.Fprintln(e.stdout, line)
		}
		return nil
	}
	for _, p := range probs {
		if p.Line > 0 {
			fmt.Fprintf(e.stdout, "%s:%d: %s\n", path, p.Line, p.Msg)
		} else {
			fmt.Fprintf(e.stdout, "%s: %s\n", path, p.Msg)
		}
	}
	return &exitError{code: exitUsage, err: fmt.Errorf("%s in %s", words.Count(len(probs), "problem", "problems"), path)}
}

// refreshModeTimeout bounds config check's one question to Drive.
const refreshModeTimeout = 15 * time.Second

// refreshMode says how refreshes will learn of changes, when a spreadsheet is named (config,
// TRIAGE_SPREADSHEET): it connects as triage would and asks Drive for the file's version once
// (sheets.Store.Changed), so the answer is the one the credential really gets. "" without a
// spreadsheet: nothing to ask about.
func refreshMode(g *globals, e *env) string {
	s, err := resolve(g, e)
	if err != nil || s.spreadsheet == "" {
		return ""
	}
	every := "refresh: every " + s.cfg.RefreshInterval().String()
	if s.cfg.RefreshInterval() <= 0 {
		every = "refresh: off (r reads)"
	}
	ctx, cancel := context.WithTimeout(context.Background(), refreshModeTimeout)
	defer cancel()
	st, _, err := openStore(ctx, s, e)
	if err != nil {
		return every + "; can't tell whether the change check works: " + err.Error()
	}
	if _, err := st.Changed(ctx); err != nil && !errors.Is(err, sheets.ErrNoChangeCheck) {
		return every + "; can't tell whether the change check works: " + err.Error()
	}
	return every + "; " + st.ChangeCheckMode()
}

// keyProblems checks the config's [keys] against the TUI's actions: what config alone can't
// know (the action names, and two actions on one key). It is what the TUI's start checks
// (keyMap): tui.ApplyKeys.
func keyProblems(path string) []config.Problem {
	cfg, _ := config.Load(path, true)
	if cfg == nil {
		return nil
	}
	_, probs := keyBindings(cfg)
	return probs
}

// keyBindings is the TUI's key map, the product's defaults (keymap.go at the module root) with
// the config's [keys] applied by tui.ApplyKeys, and every problem with its line in the config.
func keyBindings(cfg *config.Config) (tui.KeyMap, []config.Problem) {
	km, kps := tui.ApplyKeys(cfg.Keys)
	var probs []config.Problem
	for _, p := range kps {
		probs = append(probs, config.Problem{Key: p.Key, Line: cfg.Line(p.Key), Msg: p.Msg})
	}
	return km, probs
}

// keyMap is keyBindings for starting the TUI: a [keys] table with a problem is a usage error
// listing every problem with its line, as `triage config check` does.
func keyMap(cfg *config.Config) (tui.KeyMap, error) {
	km, probs := keyBindings(cfg)
	if len(probs) > 0 {
		return km, &exitError{code: exitUsage, err: &config.Error{Path: cfg.Path(), Problems: probs}}
	}
	return km, nil
}

// serveProblems checks the files [serve] names (authorized_keys, trusted_user_ca) as
// `triage serve` reads them at startup and on SIGHUP: the same function, Config.ServeAuth.
func serveProblems(path, home string) []config.Problem {
	cfg, _ := config.Load(path, true)
	if cfg == nil {
		return nil
	}
	_, probs := cfg.ServeAuth(home)
	return probs
}
