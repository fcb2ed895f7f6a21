package tui

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/model"
)

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
	return loadedMsg{seq: m.load.seq, wb: wb, tabs: tabs}
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
func press(k string) tea.KeyPressMsg { return testbed.Press(k) }

// reboundKeyMap is the default key map with each action of rebind bound to its keys (and to
// those alone); a refused binding fails the test.
func reboundKeyMap(t testing.TB, rebind map[string][]string) KeyMap {
	t.Helper()
	km := DefaultKeyMap()
	for action, ks := range rebind {
		if err := km.Rebind(action, ks); err != nil {
			t.Fatal(err)
		}
	}
	return km
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

// statusBar is the footer's status bar as drawn at width w (the line after the toasts).
func statusBar(m *Model, w int) string {
	return m.footerLines(w)[len(m.toasts.lines(m.c, w, m.c.height))]
}

// shortHelpLine is the footer's line of key hints as drawn at width w.
func shortHelpLine(m *Model, w int) string { return m.help.shortLine(m.ShortHelp(), w) }

// headerRight is the header's first line (title, then mode, connection and when refreshed),
// without styles.
func headerRight(m *Model) string {
	line, _, _ := strings.Cut(plainScreen(m), "\n")
	return line
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

// demoHalt is the halt the demo shows: long enough to need three lines at 80 columns.
var demoHalt = model.Halt{Cause: "systemic", Source: "billing",
	Detail: "source billing: header Authorization reads the environment variable DEMO_BILLING_TOKEN, which is not set: export it and run again"}

// withHalt puts the halt banner up (and lays the screen out again under it).
func withHalt(m *Model) {
	h := demoHalt
	m.replay.halt = &h
	send(m, tea.WindowSizeMsg{Width: m.c.width, Height: m.c.height})
}

// withErrorToast adds a three-line error toast to the footer.
func withErrorToast(m *Model) {
	m.toasts.sayf(toastError, "%s", strings.Repeat("the write failed because the sheet was busy; ", 8))
	send(m, tea.WindowSizeMsg{Width: m.c.width, Height: m.c.height})
}

// boxRows returns the screen lines inside the dialog's border, from its top to its bottom
// border (both included); ok is false when either border is off screen.
func boxRows(screen string) (rows []string, ok bool) {
	lines := strings.Split(screen, "\n")
	top, bottom := -1, -1
	for i, l := range lines {
		if top < 0 && (strings.Contains(l, "╭") || strings.Contains(l, "+--")) {
			top = i
		}
		if top >= 0 && (strings.Contains(l, "╰") || (i > top && strings.Contains(l, "+--"))) {
			bottom = i
			break
		}
	}
	if top < 0 || bottom < 0 {
		return nil, false
	}
	return lines[top : bottom+1], true
}

// toastTexts is every toast currently held (shown or queued behind an error).
func toastTexts(m *Model) string {
	var out []string
	for _, t := range m.toasts.items {
		out = append(out, t.text)
	}
	return strings.Join(out, "\n")
}

// cursorID is the ID of the record under the cursor of the active tab.
func cursorID(m *Model) string {
	r, _ := m.tabs.current().current()
	if r == nil {
		return ""
	}
	return r.ID
}

func isQuit(t *testing.T, cmd tea.Cmd) bool {
	t.Helper()
	return containsMsg(t, cmd, func(msg tea.Msg) bool { _, ok := msg.(tea.QuitMsg); return ok })
}

// containsMsg reports whether one of the messages of a Cmd tree passes f (see cmdMsgs).
func containsMsg(t *testing.T, cmd tea.Cmd, f func(tea.Msg) bool) bool {
	t.Helper()
	return slices.ContainsFunc(cmdMsgs(t, cmd), f)
}

// cmdMsgs runs a Cmd tree and returns the messages it produces, batches and sequences
// flattened. Tick Cmds (tea.Tick: toast expiry, the clock, auto refresh) are recognised by
// what they are, not by how long they take, and not run: they only sleep, then say so.
// Every other Cmd must return; one that doesn't within hangAfter (a store or replayer
// call, which tests don't hand to this) fails the test rather than being taken for a tick.
// So the answer never depends on how loaded the machine is.
func cmdMsgs(t *testing.T, cmd tea.Cmd) []tea.Msg {
	t.Helper()
	var msgs []tea.Msg
	var run func(tea.Cmd)
	run = func(c tea.Cmd) {
		if c == nil || isTick(c) {
			return
		}
		done := make(chan tea.Msg, 1)
		go func() { done <- c() }()
		var msg tea.Msg
		select {
		case msg = <-done:
		case <-time.After(hangAfter):
			t.Fatalf("a Cmd (%s) has not returned after %v", cmdName(c), hangAfter)
		}
		if sub, ok := subCmds(msg); ok {
			for _, c := range sub {
				run(c)
			}
			return
		}
		msgs = append(msgs, msg)
	}
	run(cmd)
	return msgs
}

// tickFunc matches the function of the Cmd tea.Tick and tea.Every return (a closure of
// theirs, named after them even when inlined into a caller).
var tickFunc = regexp.MustCompile(`\.(Tick|Every)\.func\d+$`)

func isTick(c tea.Cmd) bool { return tickFunc.MatchString(cmdName(c)) }

func cmdName(c tea.Cmd) string {
	if f := runtime.FuncForPC(reflect.ValueOf(c).Pointer()); f != nil {
		return f.Name()
	}
	return "?"
}

// TestCmdMsgs: cmdMsgs tells ticks by what they are (if bubbletea or the compiler ever names
// them differently, this fails instead of the tests that rely on it turning slow), and runs
// everything else, however nested.
func TestCmdMsgs(t *testing.T) {
	var tt toasts
	for name, c := range map[string]tea.Cmd{
		"tea.Tick":  tea.Tick(time.Hour, func(time.Time) tea.Msg { return nil }),
		"tea.Every": tea.Every(time.Hour, func(time.Time) tea.Msg { return nil }),
		"toast":     tt.push(toastError, "x"),
		"clock":     clockTick(),
		"refresh":   refreshTick(time.Hour),
	} {
		if !isTick(c) {
			t.Errorf("%s is not recognised as a tick: its function is %s", name, cmdName(c))
		}
	}
	if isTick(tea.Quit) || isTick(tea.SetClipboard("x")) {
		t.Error("tea.Quit and tea.SetClipboard are not ticks")
	}
	cmd := tea.Batch(tea.Tick(time.Hour, nil), tea.Sequence(tea.SetClipboard("x"), tea.Batch(tea.Quit)))
	msgs := cmdMsgs(t, cmd)
	if len(msgs) != 2 || !isQuit(t, cmd) || typeName(msgs[0]) == typeName(msgs[1]) {
		t.Errorf("cmdMsgs = %#v, want the clipboard and the quit messages", msgs)
	}
}

// subCmds returns the Cmds of a tea.BatchMsg or of a sequence (bubbletea's sequenceMsg is
// unexported, hence the reflection: any slice of Cmds).
func subCmds(msg tea.Msg) ([]tea.Cmd, bool) {
	v := reflect.ValueOf(msg)
	if !v.IsValid() || v.Kind() != reflect.Slice || v.Type().Elem() != reflect.TypeFor[tea.Cmd]() {
		return nil, false
	}
	out := make([]tea.Cmd, v.Len())
	for i := range out {
		out[i], _ = v.Index(i).Interface().(tea.Cmd)
	}
	return out, true
}

func typeName(v any) string { return fmt.Sprintf("%T", v) }

func mapKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
