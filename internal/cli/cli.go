// Package cli is the triage command line. See README.md.
//
// This package is the CLI: it parses flags and subcommands, loads the config, wires the
// packages together and maps outcomes to exit codes. It is the only place that knows every
// package.
//
// The design it follows, and the section (§N) and invariant numbers its comments cite, are in
// docs/DESIGN.md.
package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// Exit codes (DESIGN §7).
const (
	exitOK      = 0
	exitPartial = 1 // some rows not done: rejected, deferred, conflict, unknown ID
	exitUsage   = 2 // usage, config or connection error
	exitHalted  = 3 // a replay run halted
)

// env is the process's outside world, passed in so commands run in tests without a process.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string // read only by settings.go
	environ        *environment        // what settings.go read from getenv
	// termWidth, when set, says how wide the terminal a writer goes to is (0: not a terminal,
	// or unknown); nil measures the real one (terminal.go). Tests set it.
	termWidth func(io.Writer) int
	// dbTracer, when set, hears every statement a database store sends. Tests set it.
	dbTracer pgx.QueryTracer
	// quotaNotice, when set, is told each wait for the Sheets quota (the TUI shows it as a
	// toast, serve logs it); nil prints it on stderr.
	quotaNotice func(string)
	// quotaClock, when set, is the Sheets quota pacer's clock (tests: one shared with the
	// emulator's quota, whose waits pass at once).
	quotaClock *quotaClock
	// replayClock, when set, is the replay client's clock, which --max-time is measured on
	// (tests: a fake one their receivers move on); nil is time.Now.
	replayClock func() time.Time
}

// quotaClock is a clock for the quota pacer.
type quotaClock struct {
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
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

func joinQuoted(s []string) string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ", ")
}
