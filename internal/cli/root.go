package cli

import (
	"context"
	"errors"
	"fmt"
	"github.com/triage-dev/triage/sheets"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/triage-dev/triage/model"
)

// Run executes one invocation (args without the program name) with the given standard
// streams and environment, and returns its exit code (DESIGN §7). Tests call it; Main calls
// it with the process's own.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	return run(ctx, args, &env{stdin: stdin, stdout: stdout, stderr: stderr, getenv: getenv})
}

// run executes one invocation and returns its exit code. Everything a command prints goes
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

// completeTabs offers the tab roles for a command's --tab (a tab's name works too).
func completeTabs(cmd *cobra.Command) {
	_ = cmd.RegisterFlagCompletionFunc("tab", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"inbox\tthe contact-form inbox", "deadletter\tthe failed calls", "queue\tthe job queue"}, cobra.ShellCompDirectiveNoFileComp
	})
}
