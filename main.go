// Command triage is a terminal UI for triaging a contact-form inbox, a dead-letter queue of
// failed webhook calls and a job queue that live in a Google Sheet. See README.md.
//
// This file is the CLI: it parses flags and subcommands, loads the config, wires the
// packages together and maps outcomes to exit codes. It is the only place that knows every
// package.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/triage-dev/triage/model"
)

// Exit codes (DESIGN §7).
const (
	exitOK      = 0
	exitPartial = 1 // some rows not done: rejected, deferred, conflict, unknown ID
	exitUsage   = 2 // usage, config or connection error
	exitHalted  = 3 // a replay run halted
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// The first Ctrl-C asks for a clean stop (a replay lets calls in flight finish and writes
	// their outcomes back); once it has been seen, the default handling is back, so a second
	// Ctrl-C ends the process at once.
	go func() {
		<-ctx.Done()
		stop()
	}()
	code := run(ctx, os.Args[1:], &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv})
	stop()
	os.Exit(code)
}

// env is the process's outside world, passed in so commands run in tests without a process.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
}

// exitError carries an exit code through a command's error return.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, a ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, a...)}
}

const usageText = `triage: triage a Google Sheet inbox, dead-letter queue and job queue from a terminal.

Usage:
  triage [--spreadsheet ID] [--config FILE] [--readonly]      the TUI
  triage demo                                                 the TUI on an embedded demo workbook
  triage emulator [--addr 127.0.0.1:8089] [--workbook FILE] [--persist] [--allow-remote]
  triage list --tab NAME [--status S] [--filter Q] [--json]
  triage set-status --tab NAME --status S [--json] ID...
  triage clear-error --tab NAME [--json] ID...
  triage requeue-stale [--tab NAME] [--older-than 30m] [--dry-run] [--json]
  triage replay [--tab NAME] [--source S] [--all | ID...] [--dry-run] [--concurrency N] [--json] [--force]
  triage init                                                 create missing tabs/header cells; never deletes
  triage auth login [--oauth-client FILE] [--port N] [--no-browser] | status | logout
  triage config check                                         validate the config, every problem with its line

Global flags (flags beat environment, environment beats the config file):
  --spreadsheet ID    (env TRIAGE_SPREADSHEET)
  --config FILE       (default $XDG_CONFIG_HOME/triage/config.toml)
  --endpoint URL      Sheets API endpoint, no auth (env SHEETS_EMULATOR_HOST=host:port)
  --credentials FILE  service-account or authorized-user JSON (env GOOGLE_APPLICATION_CREDENTIALS)
  --readonly          open read-only: nothing is written, enforced by the store

Exit codes: 0 ok; 1 some rows not done; 2 usage, config or connection error; 3 a replay run halted.
`

// run executes one invocation and returns its exit code. Everything a command prints goes
// through the one sanitising writer (jsonout.go), stdout and stderr alike; the TUI draws on
// the terminal itself, not through e.
func run(ctx context.Context, args []string, e *env) int {
	out, errw := newSafeWriter(e.stdout), newSafeWriter(e.stderr)
	defer func() {
		_ = out.Flush()
		_ = errw.Flush()
	}()
	e = &env{stdin: e.stdin, stdout: out, stderr: errw, getenv: e.getenv}
	err := dispatch(ctx, args, e)
	if err == nil {
		return exitOK
	}
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	var ee *exitError
	code := exitUsage
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

func dispatch(ctx context.Context, args []string, e *env) error {
	g := &globals{}
	fs := newFlagSet("triage", e)
	g.register(fs)
	// Asked-for help goes to stdout (`triage --help | less`); a usage error's hint to stderr.
	fs.Usage = func() { fmt.Fprint(e.stdout, usageText) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageErr("%v (see triage --help)", err)
	}
	rest := fs.Args()
	if len(rest) == 0 {
		return cmdTUI(ctx, g, e)
	}
	cmd, rest := rest[0], rest[1:]
	switch cmd {
	case "demo":
		return cmdDemo(ctx, g, rest, e)
	case "emulator":
		return cmdEmulator(ctx, g, rest, e)
	case "list":
		return cmdList(ctx, g, rest, e)
	case "set-status":
		return cmdSetStatus(ctx, g, rest, e)
	case "clear-error":
		return cmdClearError(ctx, g, rest, e)
	case "requeue-stale":
		return cmdRequeueStale(ctx, g, rest, e)
	case "init":
		return cmdInit(ctx, g, rest, e)
	case "replay":
		return cmdReplay(ctx, g, rest, e)
	case "auth":
		return cmdAuth(ctx, g, rest, e)
	case "config":
		return cmdConfig(ctx, g, rest, e)
	case "help":
		fmt.Fprint(e.stdout, usageText)
		return nil
	}
	return usageErr("unknown command %q (commands: demo, emulator, list, set-status, clear-error, requeue-stale, replay, init, auth, config check; see triage --help)", cmd)
}

func newFlagSet(name string, e *env) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	return fs
}

// parseCmd parses a subcommand's flags, globals included, so they may come after it.
func parseCmd(fs *flag.FlagSet, g *globals, args []string) ([]string, error) {
	g.register(fs)
	// Flags may follow positional IDs too: `set-status --tab Inbox ID1 ID2 --status done`.
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usageErr("%s: %v", fs.Name(), err)
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
	return pos, nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

func joinQuoted(s []string) string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ", ")
}
