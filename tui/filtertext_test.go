package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/triage-dev/triage/model"
)

// newScreenLoaded is a model at w x h with wb installed as the load Cmd hands it over:
// prepared for the first screen, without the filter text.
func newScreenLoaded(t testing.TB, wb *model.Workbook, w, h int) *Model {
	t.Helper()
	m := New(Options{Store: nopStore{t: t}, SpreadsheetID: "sheet-1", Now: fixedNow})
	send(m, tea.WindowSizeMsg{Width: w, Height: h})
	send(m, preparedMsg(m.load.seq, wb))
	return m
}

// hayMsgs are the filter-text builds a Cmd tree carries (run: pure computation).
func hayMsgs(t *testing.T, cmd tea.Cmd) []hayMsg {
	t.Helper()
	var out []hayMsg
	for _, msg := range cmdMsgs(t, cmd) {
		if h, ok := msg.(hayMsg); ok {
			out = append(out, h)
		}
	}
	return out
}

// The first screen comes without the filter text; `/` starts building it off the UI
// goroutine; a key typed before it lands waits (every row shown, "filtering…"), and the
// filter applies when it lands.
func TestFilterTextIsBuiltWhenThePromptOpens(t *testing.T) {
	m := newScreenLoaded(t, testWorkbook(t), 80, 24)
	for _, ts := range m.tabs.list {
		if ts.data.hay != nil {
			t.Fatalf("tab %s has its filter text before anyone filtered", ts.name())
		}
	}
	if cmd := send(m, press("j")); len(hayMsgs(t, cmd)) != 0 {
		t.Fatal("a key other than the filter's started a build of the filter text")
	}
	builds := hayMsgs(t, send(m, press("/")))
	if len(builds) != 1 {
		t.Fatalf("/ started %d builds, want 1 (the active tab's)", len(builds))
	}
	ts := m.tabs.current()
	if ts.data.building == nil {
		t.Fatal("the build in flight isn't recorded: the next Update would start another")
	}
	all := len(ts.visible)
	for _, r := range "grace" {
		if cmd := send(m, press(string(r))); len(hayMsgs(t, cmd)) != 0 {
			t.Fatal("a second build started while one is in flight")
		}
	}
	if len(ts.visible) != all || !ts.waiting() {
		t.Fatalf("before the text lands the filter waits: %d of %d rows shown, waiting %v", len(ts.visible), all, ts.waiting())
	}
	if s := statusBar(m, 80); !strings.Contains(s, "filtering…") {
		t.Errorf("the status bar doesn't say the filter is on its way: %q", s)
	}
	send(m, builds[0])
	if ts.data.hay == nil || ts.data.building != nil || ts.waiting() {
		t.Fatal("the build's result wasn't put in place")
	}
	if len(ts.visible) != 3 {
		t.Errorf("grace matches 3 of the 30 messages once the text lands, got %d", len(ts.visible))
	}
	for _, ri := range ts.visible {
		if !strings.Contains(ts.data.table.Records[ri].Cells[1], "Grace") {
			t.Errorf("row %d shown by the filter isn't Grace's", ri)
		}
	}
	if s := statusBar(m, 80); strings.Contains(s, "filtering…") {
		t.Errorf("the status bar still says filtering: %q", s)
	}
}

// A write landing while the filter text is built never writes into the records the build
// reads (they are copied first), and the row it wrote gets its text rebuilt when the build
// lands: the filter finds the new value.
func TestAWriteDuringTheBuildIsFilteredByItsNewValue(t *testing.T) {
	m := newScreenLoaded(t, testWorkbook(t), 80, 24)
	builds := hayMsgs(t, send(m, press("/")))
	if len(builds) != 1 {
		t.Fatalf("/ started %d builds", len(builds))
	}
	ts := m.tabs.current()
	ri := ts.data.byID["msg-002"]
	before := ts.data.table.Records[ri].Cells[3]
	ts.setCells(ri, map[model.Field]string{model.FMessage: "zanzibar"})
	if got := builds[0].b.recs[ri].Cells[3]; got != before {
		t.Fatalf("the write changed the records the build reads: %q", got)
	}
	if &builds[0].b.recs[0] == &ts.data.table.Records[0] {
		t.Fatal("the records weren't copied before the write")
	}
	send(m, builds[0])
	typeText(m, "zanzibar")
	if len(ts.visible) != 1 || ts.data.table.Records[ts.visible[0]].ID != "msg-002" {
		t.Errorf("the filter doesn't find the row written during the build: %d rows", len(ts.visible))
	}
}

// A build for data a refresh replaced is dropped; a refresh of a tab with a filter set
// builds its text in the load Cmd, so the filter holds from the new data's first frame.
func TestFilterTextAcrossARefresh(t *testing.T) {
	wb := testWorkbook(t)
	m := newScreenLoaded(t, wb, 80, 24)
	old := hayMsgs(t, send(m, press("/")))
	// The prompt is still open over the new data: it gets a build of its own.
	fresh := hayMsgs(t, send(m, preparedMsg(m.load.seq, testWorkbook(t))))
	ts := m.tabs.current()
	if len(old) != 1 {
		t.Fatalf("/ started %d builds", len(old))
	}
	send(m, old[0])
	if ts.data.hay != nil {
		t.Fatal("a build of the replaced data was put in place")
	}
	if len(fresh) != 1 {
		t.Fatalf("the new data's build: %d", len(fresh))
	}
	send(m, fresh[0])
	typeText(m, "grace")
	shown := len(ts.visible)
	if shown != 3 {
		t.Fatalf("grace matches 3 rows, got %d", shown)
	}
	send(m, press("enter"))

	// A refresh through the load Cmd: the filtered tab comes with its text.
	st := &memStore{wb: func() *model.Workbook { return testWorkbook(t) }}
	msgs := cmdMsgs(t, loadCmd(t.Context(), st, m.load.seq, m.tabs.filtering(), nil))
	if len(msgs) != 1 {
		t.Fatalf("the load Cmd answered %d messages", len(msgs))
	}
	lm := msgs[0].(loadedMsg)
	for i, tab := range lm.wb.Tabs {
		if got, want := lm.tabs[i].hay != nil, tab.Config.Name == ts.name(); got != want {
			t.Errorf("tab %s has its text from the load: %v, want %v", tab.Config.Name, got, want)
		}
	}
	send(m, lm)
	ts = m.tabs.current()
	if len(ts.visible) != shown || ts.waiting() {
		t.Errorf("after the refresh the filter shows %d rows (waiting %v), want %d at once", len(ts.visible), ts.waiting(), shown)
	}
}

// A workbook shared by many sessions (Prepare) is prepared with its filter text: built once
// for all of them, never per session.
func TestPreparedWorkbookHasItsFilterText(t *testing.T) {
	p := Prepare(testWorkbook(t), nil)
	for _, d := range p.tabs {
		if d.hay == nil {
			t.Errorf("tab %s was prepared without its filter text", d.table.Config.Name)
		}
	}
}

// Keys typed at speed after a filter (`/grace⏎ space space s`) act on the rows the filter
// shows, though its text was still on its way when they came: the table's keys are held
// while the filter waits and carried out, in order, once it applies. Quit is never held.
func TestKeysTypedWhileTheFilterWaitsActOnTheFilteredRows(t *testing.T) {
	m := newScreenLoaded(t, testWorkbook(t), 80, 24)
	builds := hayMsgs(t, send(m, press("/")))
	typeText(m, "grace")
	send(m, press("enter"))
	ts := m.tabs.current()
	if !ts.waiting() || len(builds) != 1 {
		t.Fatalf("the filter should wait for its text (waiting %v, %d builds)", ts.waiting(), len(builds))
	}
	markedRows := func() []int {
		var out []int
		for ri, on := range ts.marked {
			if on {
				out = append(out, ri)
			}
		}
		return out
	}
	keys(m, "space", "j", "space", "s")
	if n := len(markedRows()); n != 0 || m.dialog != nil {
		t.Fatalf("keys acted on the unfiltered rows before the filter applied: %d marked, dialog %v", n, m.dialog != nil)
	}
	send(m, builds[0])
	if len(ts.visible) != 3 {
		t.Fatalf("grace shows %d rows, want 3", len(ts.visible))
	}
	if got := markedRows(); len(got) != 2 {
		t.Fatalf("rows %v marked, want the filter's first two", got)
	}
	for _, ri := range markedRows() {
		if r := ts.data.table.Records[ri]; !strings.Contains(r.Cells[1], "Grace") {
			t.Errorf("marked row %d (%s), not one of Grace's", ri, r.Cells[1])
		}
	}
	if m.dialog == nil {
		t.Error("s (held) did not open the status picker once the filter applied")
	}
	// Quit goes through at once, filter or not.
	m2 := newScreenLoaded(t, testWorkbook(t), 80, 24)
	send(m2, press("/"))
	typeText(m2, "grace")
	send(m2, press("enter"))
	if !m2.tabs.current().waiting() {
		t.Fatal("the second model's filter should wait")
	}
	if !isQuit(t, send(m2, press("q"))) {
		t.Error("q was held while the filter waited")
	}
}
