package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/triage-dev/triage/config"
	"github.com/triage-dev/triage/internal/keytable"
	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
	"github.com/triage-dev/triage/tui"
)

// TestKeyTable holds tui/keytable.go to keymap.go's table (go generate ./... rewrites it
// through internal/keytable/keytablegen; this test builds the same source in memory and never
// writes it), and the table to tui.KeyMap: every field is in it once, every action name once.
func TestKeyTable(t *testing.T) {
	rows, err := keytable.Parse(keyTable)
	if err != nil {
		t.Fatal(err)
	}
	fields := map[string]int{}
	actions := map[string]int{}
	for _, r := range rows {
		fields[r.Field]++
		actions[r.Action]++
	}
	typ := reflect.TypeFor[tui.KeyMap]()
	for i := range typ.NumField() {
		if f := typ.Field(i); f.IsExported() && fields[f.Name] != 1 {
			t.Errorf("tui.KeyMap.%s is in keymap.go's table %d times, want once", f.Name, fields[f.Name])
		}
	}
	if len(fields) != typ.NumField() {
		t.Errorf("keymap.go's table has %d fields, tui.KeyMap %d", len(fields), typ.NumField())
	}
	for a, n := range actions {
		if n != 1 || a != strings.ToLower(a) {
			t.Errorf("action %q: %d times (want once, lower case)", a, n)
		}
	}

	// The generator reads the table from keymap.go's syntax: the same table as compiled here.
	read, err := keytable.Read("keymap.go")
	if err != nil {
		t.Fatal(err)
	}
	if read != keyTable {
		t.Error("keytable.Read(keymap.go) is not the keyTable constant")
	}
	want, err := keytable.Source(rows)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("tui", "keytable.go")
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale: run go generate ./...", path)
	}

	// And the generated code says what the table says.
	km := tui.DefaultKeyMap()
	if got, want := km.Actions(), len(rows); len(got) != want {
		t.Fatalf("tui has %d actions, the table %d", len(got), want)
	}
	for i, a := range km.Actions() {
		if a != rows[i].Action {
			t.Errorf("action %d: tui says %q, the table %q", i, a, rows[i].Action)
		}
	}
}

// keysConfig moves "set status" from s to t and "quit" from q to Z.
const keysConfig = `spreadsheet = "keys-sheet"

[keys]
set_status = ["t"]
quit = ["Z"]
`

// TestKeyOverridesReachTheRunningProgram reads a config file with a [keys] table, applies it
// with tui.ApplyKeys (as internal/cli does), and runs the TUI built from it, the KeyMap in
// tui.Options, against the Sheets emulator, as `triage` does: the footer and the help name
// the new keys, the new keys do the actions and the old ones no longer do.
func TestKeyOverridesReachTheRunningProgram(t *testing.T) {
	cfg := loadConfig(t, keysConfig)
	km, probs := tui.ApplyKeys(cfg.Keys)
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	tm := startTUI(t, cfg, km)
	tm.WaitScreen(t, "Keys Inc", "Message number 2")

	// The footer names the new key, never the old one.
	footer := lastLine(tm.Screen(t))
	if !strings.Contains(footer, "t status") || strings.Contains(footer, "s status") {
		t.Errorf("footer should offer t (not s) for set status:\n%s", footer)
	}

	// The old key does nothing (the probe runs after the key press has been handled).
	tm.Keys("s")
	if s := tm.Screen(t); strings.Contains(s, "Set status") {
		t.Fatalf("s still opens the status picker after set_status = [\"t\"]:\n%s", s)
	}
	// The new key does it.
	tm.Keys("t")
	tm.WaitScreen(t, "Set status")
	tm.Keys("esc")
	tm.WaitGone(t, "Set status")

	// The old quit key doesn't quit: the program still answers and shows the table.
	tm.Keys("q")
	tm.WaitScreen(t, "Message number 2")

	// The full help lists the new keys.
	tm.Keys("?")
	tm.WaitScreen(t, "set status", "quit")
	help := tm.Screen(t)
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
	tm.Keys("esc")
	tm.WaitGone(t, "close help")

	// The new quit key ends the program.
	tm.Keys("Z")
	tm.Finished(t)
}

// TestBadKeyOverridesAreReportedTogether: every unknown action in [keys] is a problem of its
// own, naming the valid actions, so a typo is reported rather than silently ignored; a
// rebinding that collides with another action is a problem of the same list, about the table.
func TestBadKeyOverridesAreReportedTogether(t *testing.T) {
	km, probs := tui.ApplyKeys(map[string][]string{"qiut": {"x"}, "set_stauts": {"t"}, "help": {"H"}, "set_status": {"r"}})
	var keys []string
	for _, p := range probs {
		keys = append(keys, p.Key)
	}
	if want := []string{"keys.qiut", "keys.set_stauts", "keys"}; !reflect.DeepEqual(keys, want) {
		t.Fatalf("problems about %q, want %q: %v", keys, want, probs)
	}
	for _, want := range []string{`"qiut"`, "set_status", "quit"} {
		if !strings.Contains(probs[0].Msg, want) {
			t.Errorf("problem lacks %q: %v", want, probs[0].Msg)
		}
	}
	if !strings.Contains(probs[2].Msg, `"r"`) || !strings.Contains(probs[2].Msg, "refresh") {
		t.Errorf("set_status = [\"r\"] shadows refresh; got %v", probs[2].Msg)
	}
	if got := km.Help.Keys(); len(got) != 1 || got[0] != "H" {
		t.Errorf("the valid entry (help = H) is still applied, got %v", got)
	}
}

func loadConfig(t *testing.T, text string) *config.Config {
	t.Helper()
	path := testbed.WriteFile(t, "config.toml", text)
	cfg, err := config.Load(path, true)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// startTUI runs the TUI with km against an emulated spreadsheet holding an Inbox.
func startTUI(t *testing.T, cfg *config.Config, km tui.KeyMap) *testbed.Program {
	t.Helper()
	rows := [][]any{{"Timestamp", "Name", "Email", "Message", "Status", "ID"}}
	for i := range 3 {
		rows = append(rows, []any{fmt.Sprintf("2025-05-%02dT09:00:00Z", 10+i), fmt.Sprintf("Person %d", i),
			fmt.Sprintf("p%d@example.com", i), fmt.Sprintf("Message number %d", i), "new", fmt.Sprintf("id-%d", i)})
	}
	sh := testbed.NewSheets(t, &emulator.Workbook{SpreadsheetID: cfg.Spreadsheet, Title: "Keys Inc", Sheets: []*emulator.Sheet{{Title: "Inbox", Rows: rows}}})
	store := sh.Store(sheets.Options{SpreadsheetID: cfg.Spreadsheet, Tabs: cfg.TabConfigs()})
	m := tui.New(tui.Options{Store: store, SpreadsheetID: cfg.Spreadsheet, KeyMap: km})
	return testbed.StartProgram(t, m, 120, 30)
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}
