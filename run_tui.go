package main

import (
	"context"
	"fmt"
	"os"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/triage-dev/triage/config"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/sheetstest"
	"github.com/triage-dev/triage/tui"
)

// cmdTUI opens the TUI on the configured spreadsheet. The first load happens before the
// terminal is taken over, so a wrong ID, an unshared sheet or a dead network is a clear
// message and exit code 2, not a broken screen.
func cmdTUI(ctx context.Context, g *globals, e *env) error {
	s, err := resolve(g, e)
	if err != nil {
		return err
	}
	st, _, err := openStore(ctx, s, e)
	if err != nil {
		return err
	}
	sources, err := buildSources(s.cfg)
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	wb, err := loadWorkbook(ctx, st)
	if err != nil {
		return err
	}
	rp := &replayAdapter{client: newReplayClient(sources, e.getenv), store: st, sources: sources, now: time.Now, concurrency: 4}
	return runTUI(ctx, e, s.cfg, tui.Options{Store: st, SpreadsheetID: s.spreadsheet, Refresh: s.cfg.RefreshInterval(), Replayer: rp, Initial: wb})
}

// cmdDemo opens the TUI on the embedded demo workbook, served by an in-process emulator.
func cmdDemo(ctx context.Context, g *globals, args []string, e *env) error {
	fs := newFlagSet("demo", e)
	if _, err := parseCmd(fs, g, args); err != nil {
		return err
	}
	st, _, rp, stop, err := startDemoReplay(ctx, g.readonly, e.getenv)
	if err != nil {
		return err
	}
	defer stop()
	return runTUI(ctx, e, &config.Config{}, tui.Options{Store: st, SpreadsheetID: "demo", Refresh: 60 * time.Second,
		Banner: "demo: an in-memory workbook; nothing leaves this machine", Replayer: rp})
}

// startDemo serves the demo workbook on a loopback port and returns a store on it, and the
// emulator behind it (tests look at its cells).
func startDemo(ctx context.Context, readonly bool) (*sheets.Store, *sheetstest.Emulator, func(), error) {
	st, emu, _, stop, err := startDemoReplay(ctx, readonly, os.Getenv)
	return st, emu, stop, err
}

// startDemoReplay is startDemo with the demo's replay receivers running and the TUI's
// replayer; secrets (DEMO_BILLING_TOKEN) are read through getenv.
func startDemoReplay(ctx context.Context, readonly bool, getenv func(string) string) (*sheets.Store, *sheetstest.Emulator, tui.Replayer, func(), error) {
	wb, err := demoWorkbook(time.Now())
	if err != nil {
		return nil, nil, nil, nil, err
	}
	emu := sheetstest.New()
	sources, bodyKeys, stopReceivers, err := startDemoReceivers(ctx, emu, wb)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	emu.AddWorkbook(wb)
	url, stop, err := sheetstest.Serve(ctx, "127.0.0.1:0", emu)
	if err != nil {
		stopReceivers()
		return nil, nil, nil, nil, fmt.Errorf("demo: start the local Sheets emulator: %w", err)
	}
	svc, _, err := sheets.Connect(ctx, sheets.AuthOptions{Endpoint: url})
	if err != nil {
		_ = stop()
		stopReceivers()
		return nil, nil, nil, nil, err
	}
	st := sheets.New(ctx, svc, sheets.Options{SpreadsheetID: wb.SpreadsheetID, Tabs: withBodyKeyFields(demoTabs(), bodyKeys), ReadOnly: readonly, Actor: "demo@localhost"})
	rp := &replayAdapter{client: newReplayClient(sources, getenv), store: st, sources: sources, now: time.Now, concurrency: 4}
	return st, emu, rp, func() { _ = stop(); stopReceivers() }, nil
}

func demoTabs() []model.TabConfig {
	return (&config.Config{}).TabConfigs()
}

// runTUI runs the bubbletea program until the user quits.
func runTUI(ctx context.Context, e *env, cfg *config.Config, opts tui.Options) error {
	km := tui.DefaultKeyMap()
	if err := applyKeyOverrides(&km, cfg.Keys); err != nil {
		return usageErr("%v", err)
	}
	if err := km.Validate(); err != nil {
		return usageErr("config [keys]: %v", err)
	}
	opts.KeyMap = km
	opts.NoColor = e.getenv("NO_COLOR") != ""
	opts.Mouse = opts.Mouse || cfg.Mouse
	var popts []tea.ProgramOption
	popts = append(popts, tea.WithContext(ctx))
	if opts.NoColor {
		// charm reads NO_COLOR as a bool and ignores NO_COLOR=yes; any non-empty value counts.
		popts = append(popts, tea.WithColorProfile(colorprofile.Ascii))
	}
	p := tea.NewProgram(tui.New(opts), popts...)
	_, err := p.Run()
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("terminal UI: %w", err)
	}
	return nil
}

// cmdEmulator serves a workbook over the Sheets v4 REST API until interrupted: on loopback
// only unless --allow-remote (it has no authentication; see serveEmulator).
func cmdEmulator(ctx context.Context, g *globals, args []string, e *env) error {
	fs := newFlagSet("emulator", e)
	addr := fs.String("addr", "127.0.0.1:8089", "listen address (loopback only unless --allow-remote)")
	path := fs.String("workbook", "", "JSON workbook to serve (default: the demo workbook)")
	persist := fs.Bool("persist", false, "write every change back to --workbook")
	allowRemote := fs.Bool("allow-remote", false, "allow an --addr other machines can reach (the API is unauthenticated and writable)")
	if _, err := parseCmd(fs, g, args); err != nil {
		return err
	}
	var wb *sheetstest.Workbook
	var err error
	if *path == "" {
		if *persist {
			return usageErr("emulator: --persist needs --workbook FILE")
		}
		wb, err = demoWorkbook(time.Now())
	} else {
		wb, err = sheetstest.LoadWorkbook(*path)
	}
	if err != nil {
		return usageErr("emulator: %v", err)
	}
	emu := sheetstest.New()
	emu.AddWorkbook(wb)
	if *persist {
		emu.SetPersist(wb.SpreadsheetID, *path)
	}
	srv, err := serveEmulator(ctx, e, emu, wb, *addr, *allowRemote)
	if err != nil {
		return err
	}
	defer srv.Stop()
	<-ctx.Done()
	return nil
}
