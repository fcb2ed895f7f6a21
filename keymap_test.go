package main

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"google.golang.org/api/option"
	sheetsapi "google.golang.org/api/sheets/v4"

	"github.com/triage-dev/triage/config"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/sheetstest"
	"github.com/triage-dev/triage/tui"
)

// hangAfter bounds every wait: a program that hasn't answered by then is stuck or has quit.
const hangAfter = 10 * time.Second

// keysConfig moves "set status" from s to t and "quit" from q to Z.
const keysConfig = `spreadsheet = "keys-sheet"

[keys]
set_status = ["t"]
quit = ["Z"]
`

// TestKeyOverridesReachTheRunningProgram reads a config file with a [keys] table, applies it
// with applyKeyOverrides (the function main hands to the CLI), and runs the TUI built from it
// against the Sheets emulator, as `triage` does: the footer and the help name the new keys,
// the new keys do the actions and the old ones no longer do.
func TestKeyOverridesReachTheRunningProgram(t *testing.T) {
	cfg := loadConfig(t, keysConfig)
	km := tui.DefaultKeyMap()
	if err := applyKeyOverrides(&km, cfg.Keys); err != nil {
		t.Fatal(err)
	}
	if err := km.Validate(); err != nil {
		t.Fatal(err)
	}
	tm := startTUI(t, cfg, km)
	waitScreen(t, tm, "Keys Inc", "Message number 2")

	// The footer names the new key, never the old one.
	footer := lastLine(screen(t, tm))
	if !strings.Contains(footer, "t status") || strings.Contains(footer, "s status") {
		t.Errorf("footer should offer t (not s) for set status:\n%s", footer)
	}

	// The old key does nothing (the probe runs after the key press has been handled).
	tm.Send(press("s"))
	if s := screen(t, tm); strings.Contains(s, "Set status") {
		t.Fatalf("s still opens the status picker after set_status = [\"t\"]:\n%s", s)
	}
	// The new key does it.
	tm.Send(press("t"))
	waitScreen(t, tm, "Set status")
	tm.Send(press("esc"))
	waitGone(t, tm, "Set status")

	// The old quit key doesn't quit: the program still answers and shows the table.
	tm.Send(press("q"))
	waitScreen(t, tm, "Message number 2")

	// The full help lists the new keys.
	tm.Send(press("?"))
	waitScreen(t, tm, "set status", "quit")
	help := screen(t, tm)
	for _, want := range []*regexp.Regexp{regexp.MustCompile(`\bt\s+set status`), regexp.MustCompile(`\bZ\s+quit`)} {
		if !want.MatchString(help) {
			t.Errorf("help lacks %v:\n%s", want, help)
		}
	}
	for _, stale := range []*regexp.Regexp{regexp.MustCompile(`\bs\s+set status`), regexp.MustCompile(`\bq\s+quit`)} {
		if stale.MatchString(help) {
			t.Errorf("help still shows %v:\n%s", stale, help)
		}
	}
	tm.Send(press("esc"))
	waitGone(t, tm, "close help")

	// The new quit key ends the program.
	tm.Send(press("Z"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(hangAfter))
}

// TestBadKeyOverridesAreReportedTogether: every unknown action in [keys] is named in one error,
// with the valid names, so a typo is reported rather than silently ignored; a rebinding that
// collides with another action is caught by Validate, as the CLI calls it before starting.
func TestBadKeyOverridesAreReportedTogether(t *testing.T) {
	km := tui.DefaultKeyMap()
	err := applyKeyOverrides(&km, map[string][]string{"qiut": {"x"}, "set_stauts": {"t"}, "help": {"H"}})
	if err == nil {
		t.Fatal("unknown actions accepted")
	}
	for _, want := range []string{"config [keys]:", `"qiut"`, `"set_stauts"`, "set_status", "quit"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if got := km.Help.Keys(); len(got) != 1 || got[0] != "H" {
		t.Errorf("the valid entry (help = H) is still applied, got %v", got)
	}

	km = tui.DefaultKeyMap()
	if err := applyKeyOverrides(&km, map[string][]string{"set_status": {"r"}}); err != nil {
		t.Fatal(err)
	}
	if err := km.Validate(); err == nil || !strings.Contains(err.Error(), `"r"`) {
		t.Errorf("set_status = [\"r\"] shadows refresh; Validate = %v", err)
	}
}

func loadConfig(t *testing.T, text string) *config.Config {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path, true)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// startTUI runs the TUI with km against an emulated spreadsheet holding an Inbox.
func startTUI(t *testing.T, cfg *config.Config, km tui.KeyMap) *teatest.TestModel {
	t.Helper()
	rows := [][]any{{"Timestamp", "Name", "Email", "Message", "Status", "ID"}}
	for i := range 3 {
		rows = append(rows, []any{fmt.Sprintf("2025-05-%02dT09:00:00Z", 10+i), fmt.Sprintf("Person %d", i),
			fmt.Sprintf("p%d@example.com", i), fmt.Sprintf("Message number %d", i), "new", fmt.Sprintf("id-%d", i)})
	}
	emu := sheetstest.New()
	emu.AddWorkbook(&sheetstest.Workbook{SpreadsheetID: cfg.Spreadsheet, Title: "Keys Inc", Sheets: []*sheetstest.Sheet{{Title: "Inbox", Rows: rows}}})
	srv := httptest.NewServer(emu)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	svc, err := sheetsapi.NewService(ctx, option.WithEndpoint(srv.URL+"/"), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	store := sheets.New(ctx, svc, sheets.Options{SpreadsheetID: cfg.Spreadsheet, Tabs: cfg.TabConfigs()})
	m := tui.New(tui.Options{Store: store, SpreadsheetID: cfg.Spreadsheet, KeyMap: km})
	return teatest.NewTestModel(t, probed{m},
		teatest.WithInitialTermSize(120, 30),
		teatest.WithProgramOptions(
			tea.WithColorProfile(colorprofile.TrueColor),
			tea.WithEnvironment([]string{"TERM=xterm-256color"}),
		),
	)
}

// probed wraps the program's model so a test can read its whole screen from inside Update,
// on the program's goroutine (the cell-diffing renderer sends only fragments to the output).
type probed struct{ m tea.Model }

type probeMsg struct {
	f    func(tea.Model)
	done chan struct{}
}

func (p probed) Init() tea.Cmd { return p.m.Init() }

func (p probed) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if pm, ok := msg.(probeMsg); ok {
		pm.f(p.m)
		close(pm.done)
		return p, nil
	}
	var cmd tea.Cmd
	p.m, cmd = p.m.Update(msg)
	return p, cmd
}

func (p probed) View() tea.View { return p.m.View() }

// screen returns the program's current screen, without styling. Messages sent before it are
// handled before it reads.
func screen(t *testing.T, tm *teatest.TestModel) string {
	t.Helper()
	var s string
	done := make(chan struct{})
	tm.Send(probeMsg{f: func(m tea.Model) { s = ansi.Strip(m.View().Content) }, done: done})
	select {
	case <-done:
		return s
	case <-time.After(hangAfter):
		t.Fatal("the program doesn't answer (did it quit?)")
		return ""
	}
}

// waitScreen waits until the screen shows every string.
func waitScreen(t *testing.T, tm *teatest.TestModel, what ...string) {
	t.Helper()
	var last string
	if !sheetstest.Poll(hangAfter, func() bool {
		last = screen(t, tm)
		for _, w := range what {
			if !strings.Contains(last, w) {
				return false
			}
		}
		return true
	}) {
		t.Fatalf("timed out waiting for %q; the screen:\n%s", what, last)
	}
}

// waitGone waits until the screen no longer shows s.
func waitGone(t *testing.T, tm *teatest.TestModel, s string) {
	t.Helper()
	var last string
	if !sheetstest.Poll(hangAfter, func() bool { last = screen(t, tm); return !strings.Contains(last, s) }) {
		t.Fatalf("timed out waiting for %q to go; the screen:\n%s", s, last)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// press builds the key message a terminal sends for a key name.
func press(k string) tea.KeyPressMsg {
	if k == "esc" {
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	}
	return tea.KeyPressMsg{Code: []rune(k)[0], Text: k}
}
