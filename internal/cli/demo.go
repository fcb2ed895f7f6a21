package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/triage-dev/triage/config"
	"github.com/triage-dev/triage/internal/demo"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
	"github.com/triage-dev/triage/tui"
)

// newDemoCmd is `triage demo`: the TUI on the embedded demo workbook, served by an
// in-process emulator.
func newDemoCmd(g *globals, e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "The TUI on an embedded demo workbook",
		Long: `Open the terminal UI on an embedded demo workbook (an inbox, a dead-letter queue and a job
queue, with hostile text), served by an in-process Sheets emulator, with in-process
receivers for replays. Nothing leaves this machine; no account or config is needed.
A config file (--config, else the default one) is read for [keys], mouse, refresh and
readonly, so key bindings can be tried here first; its spreadsheet and sources are not used.`,
		Example: `  triage demo
  triage demo --readonly
  triage demo --config ./my-keys.toml`,
		Args: noArgs,
	}
	g.register(cmd.Flags(), gConfig|gReadonly)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error { return runDemo(cmd.Context(), g, e) }
	return cmd
}

// runDemo opens the TUI on the demo. The config file (--config, else the default one) is read
// as for the real thing, so [keys], mouse, refresh and readonly can be tried on the demo; its
// spreadsheet, tabs and sources are not used: the demo brings its own.
func runDemo(ctx context.Context, g *globals, e *env) error {
	opts, stop, err := demoOptions(ctx, g, e)
	if err != nil {
		return err
	}
	defer stop()
	return runProgram(ctx, e, opts)
}

// demoOptions starts the demo (emulator, receivers, store) and returns the TUI's options with
// the config's terminal settings applied, and how to stop the demo.
func demoOptions(ctx context.Context, g *globals, e *env) (tui.Options, func(), error) {
	s, err := resolveFor(g, e, forDemo)
	if err != nil {
		return tui.Options{}, nil, err
	}
	st, _, rp, stop, err := startDemoReplay(ctx, s.readonly, e.vars().secret, demoPreferences(s.cfg))
	if err != nil {
		return tui.Options{}, nil, err
	}
	opts, err := terminalOptions(e, s.cfg, tui.Options{Store: st, SpreadsheetID: "demo", Refresh: s.cfg.RefreshInterval(),
		Banner: demoBanner, Replayer: rp, Demo: true})
	if err != nil {
		stop()
		return tui.Options{}, nil, err
	}
	return opts, stop, nil
}

// demoBanner is the header note of the demo: what it is and that it is safe to play with.
const demoBanner = "demo: an in-memory workbook; nothing leaves this machine"

// demoPreferences is what of the user's tab settings the demo's own tabs take: how the
// person likes to work (mark_read_on_open), not what names or columns their sheet has.
func demoPreferences(cfg *config.Config) func([]model.TabConfig) []model.TabConfig {
	var markRead bool
	for _, tc := range cfg.TabConfigs() {
		if tc.Role == model.RoleInbox {
			markRead = tc.MarkReadOnOpen
		}
	}
	return func(tabs []model.TabConfig) []model.TabConfig {
		for i := range tabs {
			if tabs[i].Role == model.RoleInbox {
				tabs[i].MarkReadOnOpen = markRead
			}
		}
		return tabs
	}
}

// startDemo serves the demo workbook on a loopback port and returns a store on it, and the
// emulator behind it (tests look at its cells).
func startDemo(ctx context.Context, readonly bool) (*sheets.Store, *emulator.Emulator, func(), error) {
	st, emu, _, stop, err := startDemoReplay(ctx, readonly, func(string) string { return "" }, nil)
	return st, emu, stop, err
}

// startDemoReplay is startDemo with the demo's replay receivers running and the TUI's
// replayer; secrets (DEMO_BILLING_TOKEN) are read through secret. prefs, when set, adjusts
// the demo's tab settings (demoPreferences).
func startDemoReplay(ctx context.Context, readonly bool, secret func(string) string, prefs func([]model.TabConfig) []model.TabConfig) (*sheets.Store, *emulator.Emulator, tui.Replayer, func(), error) {
	wb, err := demo.Workbook(time.Now())
	if err != nil {
		return nil, nil, nil, nil, err
	}
	emu := emulator.New()
	rcv, err := demo.StartReceivers(ctx, emu, wb)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	stopReceivers := rcv.Stop
	sources, err := buildSources(rcv.Config)
	if err != nil {
		stopReceivers()
		return nil, nil, nil, nil, fmt.Errorf("demo receivers: %w", err)
	}
	emu.AddWorkbook(wb)
	url, stop, err := emulator.Serve(ctx, "127.0.0.1:0", emu)
	if err != nil {
		stopReceivers()
		return nil, nil, nil, nil, fmt.Errorf("demo: start the local Sheets emulator: %w", err)
	}
	// As a real sheet is connected: streaming reads and the change check (the emulator
	// answers Drive's files.get), so the demo shows what a user gets.
	conn, err := sheets.ConnectWithDrive(ctx, sheets.AuthOptions{Endpoint: url})
	if err != nil {
		_ = stop()
		stopReceivers()
		return nil, nil, nil, nil, err
	}
	tabs := demo.WithBodyKeyFields(demo.Tabs(), rcv.BodyKeyFields)
	if prefs != nil {
		tabs = prefs(tabs)
	}
	st := sheets.New(ctx, conn.Sheets, sheets.Options{SpreadsheetID: wb.SpreadsheetID, Tabs: tabs, ReadOnly: readonly,
		Actor: "demo@localhost", HTTPClient: conn.HTTP}).WithDrive(conn.Drive)
	rp := newReplayRunner(sources, secret, st)
	return st, emu, rp, func() { _ = stop(); stopReceivers() }, nil
}
