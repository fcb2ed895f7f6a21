package tui

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/triage-dev/triage/model"
)

// updating reports whether golden files should be rewritten. teatest imports x/exp/golden,
// which already registers -update; defining it again would panic, so the flag is looked up
// (and only defined when no dependency did).
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "update .golden files")
	}
}

// testNow is the pinned clock of every test.
var testNow = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func fixedNow() time.Time { return testNow }

// rowsOf turns literal rows into what the store hands model.Decode.
func rowsOf(rows ...[]string) [][]any {
	out := make([][]any, len(rows))
	for i, r := range rows {
		out[i] = make([]any, len(r))
		for j, c := range r {
			out[i][j] = c
		}
	}
	return out
}

func mustDecode(t testing.TB, role model.Role, rows [][]any) *model.Table {
	t.Helper()
	tab, err := model.Decode(model.DefaultTabConfig(role), rows, time.UTC)
	if err != nil {
		t.Fatalf("decode %s: %v", role, err)
	}
	return tab
}

// evilMessage is a message body trying every terminal trick invariant 9 is about.
const evilMessage = "hi\x1b[2J\x1b]0;pwned\x07 clip\x1b]52;c;ZXZpbA==\x07 " +
	"\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\ dcs\x1bP+q544e\x1b\\ c1\u009b31m " +
	"rtl\u202Eevil\u202C end"

func inboxRows() [][]any {
	rows := [][]string{{"Timestamp", "Name", "Email", "Message", "Status", "ID", "Notes"}}
	names := []string{"Ada Lovelace", "Grace Hopper", "Alan Turing", "Edsger Dijkstra", "Barbara Liskov",
		"Donald Knuth", "Margaret Hamilton", "Ken Thompson", "Radia Perlman", "Leslie Lamport"}
	statuses := []string{"", "new", "read", "replied", "done", "spam"}
	for i := 0; i < 30; i++ {
		ts := testNow.Add(-time.Duration(i*i*37) * time.Minute).Format(time.RFC3339)
		n := names[i%len(names)]
		email := strings.ToLower(strings.Fields(n)[0]) + "@example.com"
		msg := fmt.Sprintf("Message %d from %s: could you look at the contact form?\nSecond line of %d.", i, n, i)
		id := fmt.Sprintf("msg-%03d", i)
		st := statuses[i%len(statuses)]
		switch i {
		case 3:
			msg = evilMessage
		case 5:
			id = "" // a row without an ID: shown, flagged, never written
		case 7:
			msg = "مرحبا بالعالم — שלום עולם — 你好世界 🎉👩‍👩‍👧 emoji and right-to-left text"
		}
		rows = append(rows, []string{ts, n, email, msg, st, id, ""})
	}
	return rowsOf(rows...)
}

func deadRows() [][]any {
	return rowsOf(
		[]string{"timestamp", "source", "url", "payload", "error", "attempts", "method", "key", "status", "replayed_at"},
		[]string{"2025-05-31T10:00:00Z", "crm", "https://crm.example/api/leads", `{"id":"k-1","name":"Ada"}`, "503 Service Unavailable", "3", "POST", "k-1", "dead", ""},
		[]string{"2025-05-31T11:00:00Z", "crm", "https://crm.example/api/leads", `{"id":"k-2","name":"Grace"}`, "422 Unprocessable: email invalid", "1", "POST", "k-2", "rejected", ""},
		[]string{"2025-05-30T09:00:00Z", "mailer", "https://mail.example/send", `{"to":"x@example.com"}`, "timeout", "2", "", "k-3", "", ""},
		[]string{"2025-05-29T09:00:00Z", "mailer", "https://mail.example/send", `{"to":"y@example.com"}`, "", "1", "", "k-4", "delivered", "2025-05-29T09:05:00Z"},
	)
}

func queueRows() [][]any {
	return rowsOf(
		[]string{"id", "type", "payload", "status", "claimedBy", "claimedAt", "lastError", "updatedAt", "attempts"},
		[]string{"job-1", "email", `{"to":"a@example.com"}`, "pending", "", "", "", "", "0"},
		[]string{"job-2", "email", `{"to":"b@example.com"}`, "claimed", "worker-7", "2025-06-01T10:00:00Z", "", "", "1"},
		[]string{"job-3", "export", `{"sheet":"x"}`, "error", "worker-2", "2025-06-01T09:00:00Z", "quota exceeded", "", "3"},
		[]string{"job-4", "email", `{"to":"c@example.com"}`, "done", "worker-7", "2025-06-01T11:55:00Z", "", "", "1"},
	)
}

// testWorkbook is a small, complete workbook: all three tabs.
func testWorkbook(t testing.TB) *model.Workbook {
	return &model.Workbook{
		SpreadsheetID: "sheet-1",
		Title:         "Acme contact form",
		Location:      time.UTC,
		Tabs: []*model.Table{
			mustDecode(t, model.RoleInbox, inboxRows()),
			mustDecode(t, model.RoleDeadLetter, deadRows()),
			mustDecode(t, model.RoleQueue, queueRows()),
		},
		Loaded: testNow.Add(-12 * time.Second),
	}
}

// nopStore fails the test if anything calls it: unit tests of Update must never reach the
// store (its calls live in Cmds, which these tests don't run).
type nopStore struct {
	t        testing.TB
	readOnly bool
}

func (s nopStore) Load(context.Context) (*model.Workbook, error) {
	s.t.Error("Store.Load called from a unit test")
	return nil, errors.New("unexpected")
}

func (s nopStore) Apply(context.Context, []model.Edit) (model.ApplyResult, error) {
	s.t.Error("Store.Apply called from a unit test")
	return model.ApplyResult{}, errors.New("unexpected")
}

func (s nopStore) ReadOnly() bool { return s.readOnly }

// loaded is the message the load Cmd would produce for wb.
func loaded(m *Model, wb *model.Workbook) loadedMsg {
	tabs := make([]*tabData, len(wb.Tabs))
	for i, t := range wb.Tabs {
		tabs[i] = prepare(t)
	}
	return loadedMsg{seq: m.loadSeq, wb: wb, tabs: tabs}
}

type modelOpt func(*Options)

// newLoaded is a model at w x h with wb loaded, built through Update only.
func newLoaded(t testing.TB, wb *model.Workbook, w, h int, opts ...modelOpt) *Model {
	t.Helper()
	o := Options{Store: nopStore{t: t}, SpreadsheetID: "sheet-1", Now: fixedNow}
	for _, f := range opts {
		f(&o)
	}
	m := New(o)
	send(m, tea.WindowSizeMsg{Width: w, Height: h})
	send(m, loaded(m, wb))
	return m
}

func send(m *Model, msg tea.Msg) tea.Cmd {
	_, cmd := m.Update(msg)
	return cmd
}

// press builds the key message a terminal sends for a bubbletea key name.
func press(k string) tea.KeyPressMsg {
	switch k {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "space":
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "shift+tab":
		return tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "pgdown":
		return tea.KeyPressMsg{Code: tea.KeyPgDown}
	case "pgup":
		return tea.KeyPressMsg{Code: tea.KeyPgUp}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	}
	if strings.HasPrefix(k, "ctrl+") {
		return tea.KeyPressMsg{Code: rune(k[5]), Mod: tea.ModCtrl}
	}
	r := []rune(k)[0]
	return tea.KeyPressMsg{Code: r, Text: k}
}

// keys presses each key in turn.
func keys(m *Model, ks ...string) {
	for _, k := range ks {
		send(m, press(k))
	}
}

// typeText types text into whatever has focus.
func typeText(m *Model, s string) {
	for _, r := range s {
		if r == ' ' {
			send(m, press("space"))
			continue
		}
		send(m, tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

func screen(m *Model) string { return m.View().Content }

// plainScreen is the screen with styling removed, for content assertions.
func plainScreen(m *Model) string { return ansi.Strip(screen(m)) }

// checkGolden compares got with testdata/name.golden (rewritten with -update).
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if updating() {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run: go test ./tui/ -run %s -update)", err, t.Name())
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file (go test ./tui/ -run %s -update rewrites it)\n--- got:\n%s\n--- want:\n%s", path, t.Name(), got, want)
	}
}

// checkFrame asserts a screen is exactly w x h cells.
func checkFrame(t *testing.T, s string, w, h int) {
	t.Helper()
	lines := strings.Split(s, "\n")
	if len(lines) != h {
		t.Errorf("screen has %d lines, want %d", len(lines), h)
	}
	for i, l := range lines {
		if got := ansi.StringWidth(l); got != w {
			t.Errorf("line %d is %d cells wide, want %d: %q", i, got, w, ansi.Strip(l))
		}
	}
}
