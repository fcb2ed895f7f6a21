package cli

import (
	"context"
	"fmt"
	"os/exec"
	"sync/atomic"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/triage-dev/triage/config"
	"github.com/triage-dev/triage/internal/replymail"
	"github.com/triage-dev/triage/postgres"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/tui"
)

// cmdTUI opens the TUI on the configured spreadsheet. The first load happens before the
// terminal is taken over, so a wrong ID, an unshared sheet or a dead network is a clear
// message and exit code 2, not a broken screen.
func cmdTUI(ctx context.Context, g *globals, e *env) error {
	s, err := resolveFor(g, e, forTUI)
	if err != nil {
		return err
	}
	// A wait for the Sheets quota is said on stderr until the TUI runs, then as a toast; a
	// TUI's requests each have a quota budget of their own, not one for the session.
	ctx = sheets.WithoutQuotaBudget(ctx)
	notices := make(chan string, 16)
	var running atomic.Bool
	stderrNotice := e.quotaNotice
	e.quotaNotice = func(line string) {
		switch {
		case running.Load():
			select {
			case notices <- line:
			default: // the TUI is behind on notices: this one is dropped, not waited for
			}
		case stderrNotice != nil:
			stderrNotice(line)
		default:
			fmt.Fprintf(e.stderr, "triage: %s\n", line)
		}
	}
	st, _, err := openStore(ctx, s, e)
	if err != nil {
		return err
	}
	defer closeStore(st)
	sources, err := buildSources(s.cfg)
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	wb, err := loadWorkbookShowing(ctx, st, e)
	if err != nil {
		return err
	}
	rp := newReplayRunner(sources, e.vars().secret, st)
	mailer, err := replymail.New(s.cfg.Mail, e.getenv)
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	opts := tui.Options{Store: st, SpreadsheetID: st.SpreadsheetID(), Refresh: s.cfg.RefreshInterval(), Replayer: rp, Initial: wb, Mailer: mailer}
	if db, ok := st.(*postgres.Store); ok {
		// A database tells of every change: no polling.
		updates, err := liveUpdates(ctx, db)
		if err != nil {
			return &exitError{code: exitUsage, err: err}
		}
		opts.Updates, opts.Refresh = updates, 0
	}
	opts.Notices = notices
	running.Store(true)
	return runTUI(ctx, e, s.cfg, opts)
}

// runTUI runs the bubbletea program until the user quits.
func runTUI(ctx context.Context, e *env, cfg *config.Config, opts tui.Options) error {
	opts, err := terminalOptions(e, cfg, opts)
	if err != nil {
		return err
	}
	return runProgram(ctx, e, opts)
}

// terminalOptions applies what the config and the environment say about the terminal: the
// [keys] overrides, mouse, NO_COLOR, and the tmux to ask about the clipboard.
func terminalOptions(e *env, cfg *config.Config, opts tui.Options) (tui.Options, error) {
	km, err := keyMap(cfg)
	if err != nil {
		return opts, err
	}
	opts.KeyMap = km
	opts.NoColor = e.vars().noColor
	opts.Environ = e.vars().termEnv
	opts.Mouse = opts.Mouse || cfg.Mouse
	if e.vars().tmux {
		// Inside tmux, the TUI asks tmux whether it passes the clipboard on before saying
		// "copied" (tui.Options.Tmux).
		if bin, err := exec.LookPath("tmux"); err == nil {
			opts.Tmux = bin
		}
	}
	return opts, nil
}

// runProgram runs the bubbletea program on this terminal until the user quits.
func runProgram(ctx context.Context, e *env, opts tui.Options) error {
	var popts []tea.ProgramOption
	popts = append(popts, tea.WithContext(ctx))
	if opts.NoColor {
		// charm reads NO_COLOR as a bool and ignores NO_COLOR=yes; any non-empty value counts.
		popts = append(popts, tea.WithColorProfile(colorprofile.Ascii))
	}
	m := tui.New(opts)
	p := tea.NewProgram(m, popts...)
	_, err := p.Run()
	if note := m.ExitNote(); note != "" {
		fmt.Fprintln(e.stderr, note)
	}
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("terminal UI: %w", err)
	}
	return nil
}
