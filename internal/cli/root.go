package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/spf13/cobra"

	"github.com/triage-dev/triage/config"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets"
)

// run executes one invocation (args without the program name) with e's standard streams and
// environment, and returns its exit code (DESIGN §7); Main calls it with the process's own,
// the tests with theirs. Everything a command prints goes
// through the one sanitising writer (jsonout.go), stdout and stderr alike, errors included;
// only cobra's own text (help, completion, man), which holds no sheet data, reaches stdout
// as it is; the TUI draws on the terminal itself, not through e.
func run(ctx context.Context, args []string, e *env) int {
	rawOut := e.stdout
	out, errw := newSafeWriter(e.stdout), newSafeWriter(e.stderr)
	defer func() {
		_ = out.Flush()
		_ = errw.Flush()
	}()
	e = &env{stdin: e.stdin, stdout: out, stderr: errw, getenv: e.getenv, environ: e.environ, termWidth: e.termWidth, dbTracer: e.dbTracer, quotaNotice: e.quotaNotice, quotaClock: e.quotaClock,
		replayClock: e.replayClock}
	// A command waits on the Sheets quota for one budget in all ([quota] budget), however
	// many requests it sends; the TUI and serve give each request its own (tui.go, serve.go).
	ctx = sheets.WithQuotaBudget(ctx, 0)
	root := newRootCmd(&globals{}, e)
	root.SetArgs(args)
	root.SetIn(e.stdin)
	// cobra's own output (help, completion scripts, the man page) is triage's own text, never
	// a cell: it goes to the terminal as it is, so styled help keeps its colours there (it is
	// styled only for a terminal). Everything a command prints goes through e.stdout.
	root.SetOut(rawOut)
	root.SetErr(e.stderr)
	// Errors are printed once, by exitCode; a usage error names the help to read, not the
	// whole usage.
	root.SilenceErrors, root.SilenceUsage = true, true
	// --version prints what `triage version` prints.
	root.Version = readBuildInfo().String()
	root.SetVersionTemplate("{{.Version}}\n")
	// Help (help.go) is drawn in fang's layout, wrapped to the terminal stdout is (80 columns
	// when piped); every command inherits it.
	root.SetHelpFunc(newHelpFunc(e, rawOut))
	return exitCode(root.ExecuteContext(ctx), e)
}

// exitCode maps a command's error to its exit code and prints it, sanitised, on stderr.
func exitCode(err error, e *env) int {
	if err == nil {
		return exitOK
	}
	var ee *exitError
	code := exitUsage // cobra's own errors (unknown command, bad flag, wrong arguments) are usage errors
	if errors.As(err, &ee) {
		code = ee.code
		if ee.err == nil {
			return code
		}
	}
	// Errors can quote the sheet (a header that was found, a status) or a server's answer:
	// the message goes through the same sanitiser as everything else on the terminal.
	fmt.Fprintln(e.stderr, "triage:", model.Sanitize(err.Error()))
	return code
}

// newRootCmd builds the command tree: the root opens the TUI, the rest are subcommands.
func newRootCmd(g *globals, e *env) *cobra.Command {
	root := &cobra.Command{
		Use:   "triage",
		Short: "Triage a Google Sheet inbox, dead-letter queue and job queue from a terminal",
		Long: `Triage a Google Sheet inbox, dead-letter queue and job queue from a terminal.

Without a command, triage opens the terminal UI on the spreadsheet. Flags beat the
environment, which beats the config file ($XDG_CONFIG_HOME/triage/config.toml).

Exit codes: 0 ok; 1 some rows not done (rejected, deferred, conflict, unknown ID);
2 usage, config or connection error; 3 a replay run halted.`,
		Example: `  triage --spreadsheet 1AbC...           # the TUI on a sheet
  triage demo                            # the TUI on a demo workbook
  triage list --tab Inbox --status new   # rows as a table
  triage replay --all --dry-run          # what a replay would send`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmdTUI(cmd.Context(), g, e)
		},
	}
	g.register(root.Flags(), gAll)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageErr("%v (see %s --help)", err, c.CommandPath())
	})
	root.AddCommand(
		newDemoCmd(g, e),
		newEmulatorCmd(g, e),
		newListCmd(g, e),
		newSetStatusCmd(g, e),
		newClearErrorCmd(g, e),
		newRequeueStaleCmd(g, e),
		newReplayCmd(g, e),
		newInitCmd(g, e),
		newMigrateCmd(g, e),
		newAuthCmd(g, e),
		newConfigCmd(g, e),
		newServeCmd(g, e),
		newVersionCmd(e),
		newCompletionCmd(),
		newManCmd(),
	)
	return root
}

// noArgs refuses positional arguments: a stray word is a usage error, not ignored.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	if cmd.HasSubCommands() {
		if cmd.SuggestionsMinimumDistance <= 0 {
			cmd.SuggestionsMinimumDistance = 2 // "lst" is list, "logn" is login
		}
		if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
			return usageErr("unknown command %q for %q: did you mean %s? (see %s --help)", args[0], cmdName(cmd), strings.Join(s, " or "), cmd.CommandPath())
		}
		return usageErr("unknown command %q for %q (see %s --help)", args[0], cmdName(cmd), cmd.CommandPath())
	}
	return usageErr("%s takes no arguments, got %q (see %s --help)", cmdName(cmd), args[0], cmd.CommandPath())
}

// cmdName is how an error message names cmd: every message is printed after "triage: ", so
// a subcommand is named by its path without the root ("set-status", "auth login"), and only
// the root itself as "triage".
func cmdName(cmd *cobra.Command) string {
	if !cmd.HasParent() {
		return cmd.Name()
	}
	return strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
}

// minArgs wants at least n positional arguments, named what in the message.
func minArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < n {
			return usageErr("%s: want at least %d %s (see %s --help)", cmdName(cmd), n, what, cmd.CommandPath())
		}
		return nil
	}
}

// Main runs the command line of the process (os.Args, the standard streams, the
// environment) and returns its exit code.
func Main(ctx context.Context) int {
	return run(ctx, os.Args[1:], &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv})
}

// completeTabs offers the tabs' names for a command's --tab, as the config names them (the
// defaults otherwise), each described by its role; the role names work too.
func completeTabs(cmd *cobra.Command, g *globals, e *env) {
	_ = cmd.RegisterFlagCompletionFunc("tab", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		var out []string
		for _, tc := range completionTabs(g, e) {
			out = append(out, tc.Name+"\t"+roleWords[tc.Role])
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	})
}

// roleWords describes each role's tab in a completion list.
var roleWords = map[model.Role]string{
	model.RoleInbox: "the contact-form inbox", model.RoleDeadLetter: "the failed calls", model.RoleQueue: "the job queue",
}

// completionTabs is the tabs as the config names them: the defaults when the config can't be
// read (a completion never fails loudly).
func completionTabs(g *globals, e *env) []model.TabConfig {
	cfg := &config.Config{}
	if path, explicit := configPath(g, e); path != "" {
		if c, err := config.Load(path, explicit); c != nil && err == nil {
			cfg = c
		}
	}
	return cfg.TabConfigs()
}

// completionTab is the tab a command line being completed names with --tab (by name or
// role), or the role's default tab when it names none.
func completionTab(cmd *cobra.Command, g *globals, e *env, def model.Role) (model.TabConfig, bool) {
	want, _ := cmd.Flags().GetString("tab")
	for _, tc := range completionTabs(g, e) {
		if (want == "" && tc.Role == def) || (want != "" && (strings.EqualFold(tc.Name, want) || strings.EqualFold(string(tc.Role), want))) {
			return tc, true
		}
	}
	return model.TabConfig{}, false
}

// completeStatuses offers the statuses of the tab --tab names for a command's --status.
func completeStatuses(cmd *cobra.Command, g *globals, e *env) {
	_ = cmd.RegisterFlagCompletionFunc("status", func(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
		tc, ok := completionTab(cmd, g, e, model.RoleInbox)
		if !ok {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		statuses := tc.Statuses
		if len(statuses) == 0 {
			statuses = model.DefaultStatuses(tc.Role)
		}
		return statuses, cobra.ShellCompDirectiveNoFileComp
	})
}

// completionLoadTimeout bounds reading the sheet for a completion: a shell waiting on TAB
// longer than this is worse than no list.
const completionLoadTimeout = 5 * time.Second

// completeIDs offers the row IDs of the tab --tab names (of role def without one) as the
// command's arguments, newest first, each with what a person knows the row by, leaving out
// the IDs already given. It reads the sheet (as the command would); without a spreadsheet,
// credentials or network it offers nothing.
func completeIDs(cmd *cobra.Command, g *globals, e *env, def model.Role) {
	cmd.ValidArgsFunction = func(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
		tc, ok := completionTab(cmd, g, e, def)
		if !ok {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx, cancel := context.WithTimeout(cmd.Context(), completionLoadTimeout)
		defer cancel()
		quiet := *e
		quiet.stderr = io.Discard
		_, t, err := openTab(ctx, g, &quiet, tc.Name)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []string
		for i := len(t.Records) - 1; i >= 0 && len(out) < maxCompletedIDs; i-- {
			r := &t.Records[i]
			if r.ID == "" || slices.Contains(args, r.ID) {
				continue
			}
			out = append(out, model.SanitizeLine(r.ID)+"\t"+completionWords(t, r))
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// maxCompletedIDs is how many IDs a completion offers: the newest rows, enough to pick from.
const maxCompletedIDs = 200

// completionWords describes a row in a completion list: its status and who or what it is.
func completionWords(t *model.Table, r *model.Record) string {
	what := ""
	switch t.Config.Role {
	case model.RoleInbox:
		what = cmp.Or(t.Get(r, model.FName), t.Get(r, model.FEmail))
	case model.RoleDeadLetter:
		what = t.Get(r, model.FSource)
	}
	words := strings.TrimSpace(r.Status + " " + what)
	return ansi.Truncate(model.SanitizeLine(words), 60, "…")
}
