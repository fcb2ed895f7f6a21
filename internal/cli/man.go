package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/triage-dev/triage/tui"
)

// newManCmd prints the man page (section 1) on stdout: `triage man > triage.1`.
func newManCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "man",
		Short: "Print the man page",
		Long:  "Print triage's man page (roff, section 1) on stdout.",
		Example: `  triage man > ~/.local/share/man/man1/triage.1
  triage man | man -l -`,
		Args:                  noArgs,
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprint(cmd.OutOrStdout(), manPage(cmd.Root(), readBuildInfo()))
			return err
		},
	}
}

// manPage renders the command tree as a section-1 man page, from the same texts as --help:
// NAME and SYNOPSIS, the root's description as DESCRIPTION, its flags as OPTIONS, then every
// command (COMMANDS: usage, description, flags, examples), EXIT STATUS, the TUI's KEYS (its
// help's groups), CONFIGURATION, FILES and ENVIRONMENT.
//
// The title line is `.TH TRIAGE 1 DATE "triage VERSION" "User Commands"`: the centre of the
// header is the short manual name, so it never runs into "TRIAGE(1)" on either side, and the
// date is the commit's (none when the build didn't record one), so the page is the same for
// the same build. A description's hard-wrapped lines are joined into one paragraph each (roff
// fills them); a blank line between them starts the next (.PP).
func manPage(root *cobra.Command, bi buildInfo) string {
	var b strings.Builder
	line := func(s string) { b.WriteString(s + "\n") }
	date := bi.Time
	if len(date) >= len("2006-01-02") {
		date = date[:len("2006-01-02")]
	}
	line(fmt.Sprintf(".TH %s 1 %s %s %s", strings.ToUpper(root.Name()), roffArg(date),
		roffArg(root.Name()+" "+bi.Version), roffArg("User Commands")))
	// No hyphenation, ragged right: flags, paths and variables stay whole and copy as typed.
	line(".nh")
	line(".ad l")

	line(".SH NAME")
	line(roffText(root.Name() + " - " + lowerFirst(root.Short)))

	line(".SH SYNOPSIS")
	line(".B " + roffText(root.Name()))
	line(`[\fIflags\fR]`)
	line(".br")
	line(".B " + roffText(root.Name()))
	line(`\fIcommand\fR [\fIargs\fR] [\fIflags\fR]`)

	line(".SH DESCRIPTION")
	manParagraphs(line, root.Long)

	line(".SH OPTIONS")
	manFlags(line, root)

	line(".SH COMMANDS")
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sc := range c.Commands() {
			if sc.Hidden || sc.Deprecated != "" || !sc.IsAvailableCommand() {
				continue
			}
			line(".SS " + roffArg(usageLine(sc, true, helpStyles{})))
			manParagraphs(line, first(sc.Long, sc.Short))
			if hasOwnFlags(sc) {
				line(".PP")
				line("Flags:")
				line(".RS 4")
				manFlags(line, sc)
				line(".RE")
			}
			if ex := strings.Trim(sc.Example, "\n"); ex != "" {
				line(".PP")
				line("Examples:")
				line(".PP")
				line(".RS 4")
				line(".nf")
				for _, l := range exampleLines(ex, manExampleWidth, helpStyles{}) {
					line(roffText(l))
				}
				line(".fi")
				line(".RE")
			}
			walk(sc)
		}
	}
	walk(root)

	line(".SH EXIT STATUS")
	for _, s := range [][2]string{
		{"0", "Everything asked was done (a row already as asked counts as done)."},
		{"1", "Some rows were not done: a conflict, an unknown ID, a rejected, deferred or refused row, an outcome that could not be written back."},
		{"2", "A usage, config or connection error."},
		{"3", "A replay run halted."},
	} {
		line(".TP")
		line(".B " + s[0])
		line(roffText(s[1]))
	}

	line(".SH KEYS")
	manParagraphs(line, "The terminal UI (triage, triage demo, triage serve) answers these keys, the defaults; [keys] in the config rebinds any of them. ? shows the ones that work where you are.")
	for _, g := range tui.HelpGroups(tui.DefaultKeyMap()) {
		line(".SS " + roffArg(g.Title))
		for _, e := range g.Entries {
			line(".TP")
			line(".B " + roffText(e.Keys))
			line(roffText(e.Desc))
		}
	}

	line(".SH CONFIGURATION")
	manParagraphs(line, "One TOML file, optional: --config FILE, else TRIAGE_CONFIG, else $XDG_CONFIG_HOME/triage/config.toml. triage config check validates it and names every problem with its line; triage init writes a first one. Its parts:")
	for _, s := range [][2]string{
		{"spreadsheet, refresh, full_refresh, readonly, mouse, oauth_client", "The sheet, how often the TUI refreshes and reads the whole sheet, read-only, mouse reporting, the OAuth client for triage auth login."},
		{"[tabs.inbox], [tabs.deadletter], [tabs.queue]", "Each tab's name, statuses, columns (by header) and, for the queue, stale_after."},
		{"[sources.NAME]", "What a replay of a source's failed calls may send and to where: url_prefixes, method, headers (secrets as env:NAME), key, timeout, concurrency, rate, outcomes."},
		{"[keys]", "Rebound keys: action = [\"key\", ...]."},
		{"[quota]", "per_minute and budget: pacing under the Sheets API quota."},
		{"[notify]", "The alert a replay posts when a run halts or leaves rows not done."},
		{"[store]", "url: a PostgreSQL database instead of the sheet."},
		{"[serve]", "triage serve: the address, host key, people and their roles, authorized keys."},
	} {
		line(".TP")
		line(".B " + roffText(s[0]))
		line(roffText(s[1]))
	}

	line(".SH FILES")
	for _, s := range [][2]string{
		{"$XDG_CONFIG_HOME/triage/config.toml", "The config (~/.config when XDG_CONFIG_HOME is unset)."},
		{"$XDG_STATE_HOME/triage/token.json", "The login triage auth login saved (~/.local/state when XDG_STATE_HOME is unset); triage auth logout removes it."},
		{"$XDG_STATE_HOME/triage/ssh_host_ed25519", "triage serve's host key, made at its first start unless [serve] host_key names another."},
	} {
		line(".TP")
		line(".B " + roffText(s[0]))
		line(roffText(s[1]))
	}

	line(".SH ENVIRONMENT")
	for _, s := range [][2]string{
		{"TRIAGE_SPREADSHEET", "The spreadsheet ID, when --spreadsheet is not given."},
		{"TRIAGE_CONFIG", "The config file, when --config is not given (default $XDG_CONFIG_HOME/triage/config.toml)."},
		{"GOOGLE_APPLICATION_CREDENTIALS", "A service-account key or authorized-user JSON, when --credentials is not given."},
		{"SHEETS_EMULATOR_HOST", "host:port of a Sheets API emulator to use instead of Google, without auth."},
		{"NO_COLOR", "Help without colour."},
	} {
		line(".TP")
		line(".B " + roffText(s[0]))
		line(roffText(s[1]))
	}

	line(".SH SEE ALSO")
	line(roffText("The README (https://github.com/triage-dev/triage) covers setting up a sheet, the config file, replaying failed calls, running from cron and serving a team over SSH."))
	return b.String()
}

// manExampleWidth is the width examples are laid out to (no fill in an example block): at
// 80 columns, a subsection's indented block starts at column 11.
const manExampleWidth = 68

// manParagraphs writes a description as paragraphs, one roff text line each.
func manParagraphs(line func(string), text string) {
	for _, p := range paragraphs(text) {
		line(".PP")
		line(roffText(p))
	}
}

// manFlags writes a command's flags as a tagged list; --help is left out (every command has
// it).
func manFlags(line func(string), c *cobra.Command) {
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Name == "help" {
			return
		}
		name := "--" + f.Name
		if f.Shorthand != "" {
			name = "-" + f.Shorthand + ", " + name
		}
		switch f.Value.Type() {
		case "string":
			name += " VALUE"
		case "int":
			name += " N"
		case "duration":
			name += " DURATION"
		}
		text := sentence(f.Usage)
		switch f.DefValue {
		case "", "false", "0", "0s", "[]":
		default:
			text += " (default " + f.DefValue + ")"
		}
		line(".TP")
		line(".B " + roffText(name))
		line(roffText(text))
	})
}

// roffText escapes text for a roff text line: a backslash is \e, a hyphen \- (so that flags
// and paths read and copy as typed), and a line can't start with a control character (. or ').
func roffText(s string) string {
	s = strings.NewReplacer(`\`, `\e`, "-", `\-`).Replace(s)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}

// roffArg is s as one quoted argument of a request (.TH, .SS).
func roffArg(s string) string {
	return `"` + strings.ReplaceAll(roffText(s), `"`, `\(dq`) + `"`
}

// lowerFirst lowers a description's first letter for NAME ("triage - triage a Google Sheet
// ..."), unless the first word is an acronym.
func lowerFirst(s string) string {
	w, _, _ := strings.Cut(s, " ")
	if len(w) > 1 && strings.ToUpper(w) == w {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}
