package cli

import (
	"errors"
	"fmt"
	"os"
	"sort"

	"github.com/spf13/cobra"

	"github.com/triage-dev/triage/config"
	"github.com/triage-dev/triage/model"
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
			return nil
		}
		return &exitError{code: exitUsage, err: err}
	}
	probs = append(probs, keyProblems(path)...)
	probs = append(probs, serveProblems(path, e.vars().home)...)
	sort.SliceStable(probs, func(i, j int) bool { return probs[i].Line < probs[j].Line })
	if len(probs) == 0 {
		fmt.Fprintf(e.stdout, "%s: ok\n", path)
		return nil
	}
	for _, p := range probs {
		if p.Line > 0 {
			fmt.Fprintf(e.stdout, "%s:%d: %s\n", path, p.Line, p.Msg)
		} else {
			fmt.Fprintf(e.stdout, "%s: %s\n", path, p.Msg)
		}
	}
	return &exitError{code: exitUsage, err: fmt.Errorf("%s in %s", model.Count(len(probs), "problem", "problems"), path)}
}

// keyProblems checks the config's [keys] against the TUI's actions: what config alone can't
// know (the action names, and two actions on one key).
func keyProblems(path string) []config.Problem {
	cfg, _ := config.Load(path, true)
	if cfg == nil || len(cfg.Keys) == 0 {
		return nil
	}
	var probs []config.Problem
	km := tui.DefaultKeyMap()
	actions := make([]string, 0, len(cfg.Keys))
	for a := range cfg.Keys {
		actions = append(actions, a)
	}
	sort.Strings(actions)
	for _, a := range actions {
		if err := km.Rebind(a, cfg.Keys[a]); err != nil {
			probs = append(probs, config.Problem{Line: cfg.Line("keys." + a), Msg: err.Error()})
		}
	}
	for _, c := range km.Conflicts() {
		probs = append(probs, config.Problem{Line: cfg.Line("keys"), Msg: c})
	}
	return probs
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
