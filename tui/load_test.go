package tui

import (
	"errors"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/triage-dev/triage/model"
)

func TestLoadingAndLoadError(t *testing.T) {
	m := New(Options{Store: nopStore{t: t}, SpreadsheetID: "sheet-1", Now: fixedNow})
	send(m, tea.WindowSizeMsg{Width: 80, Height: 24})
	if got := plainScreen(m); !strings.Contains(got, "loading sheet-1") {
		t.Errorf("loading view:\n%s", got)
	}
	send(m, loadedMsg{seq: m.load.seq, err: errors.New("googleapi: Error 403: The caller does not have permission\x1b]0;x\x07")})
	got := plainScreen(m)
	if !strings.Contains(got, "Couldn't load the spreadsheet") || !strings.Contains(got, "403: The caller does not have permission␛]0;x␇") || !strings.Contains(got, "r retry") {
		t.Errorf("load error view shows the sanitised error and what to do:\n%s", got)
	}
	cmd := send(m, press("r"))
	if cmd == nil || !m.load.loading {
		t.Errorf("r retries the load")
	}
	send(m, loaded(m, testWorkbook(t)))
	if !m.load.hasData || !strings.Contains(plainScreen(m), "Acme contact form") {
		t.Errorf("after a good load the table shows")
	}
}

func TestRefreshKeepsCursorMarksAndFilter(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24)
	keys(m, "/")
	typeText(m, "status:new")
	keys(m, "enter", "j", "j", "space", "k") // mark the third new row; cursor on the second
	ts := m.tabs.current()
	before := cursorID(m)
	markedID := ts.data.table.Records[ts.visible[2]].ID
	cmd := send(m, press("r"))
	if cmd == nil || !m.load.loading {
		t.Fatal("r starts a load")
	}
	// The reloaded sheet has two new messages on top, and lost one of the marked rows.
	wb := testWorkbook(t)
	rows := inboxRows()
	extra := rowsOf(
		[]string{testNow.Format(time.RFC3339), "New Person", "np@example.com", "fresh", "", "msg-100", ""},
		[]string{testNow.Format(time.RFC3339), "Other Person", "op@example.com", "fresh too", "new", "msg-101", ""},
	)
	rows = append(rows, extra...)
	wb.Tabs[0] = mustDecode(t, model.RoleInbox, rows)
	send(m, loaded(m, wb))
	ts = m.tabs.current()
	if got := cursorID(m); got != before {
		t.Errorf("cursor moved from %s to %s across a refresh", before, got)
	}
	if ts.filter.query != "status:new" {
		t.Errorf("filter lost: %q", ts.filter.query)
	}
	if ts.nMarked != 1 || !ts.marked[ts.data.byID[markedID]] {
		t.Errorf("mark on %s lost across a refresh", markedID)
	}
	if !strings.Contains(plainScreen(m), "2 new messages") {
		t.Errorf("new inbox IDs are announced:\n%s", plainScreen(m))
	}

	// A failing refresh keeps the data and says so.
	send(m, press("r"))
	send(m, loadedMsg{seq: m.load.seq, err: errors.New("Get \"https://sheets.googleapis.com\": dial tcp: i/o timeout")})
	out := plainScreen(m)
	if !strings.Contains(out, "refresh failed") || !strings.Contains(out, "✗ error") || len(m.tabs.current().visible) == 0 {
		t.Errorf("refresh error: toast + header state, old data kept:\n%s", out)
	}
}

func TestStaleLoadAfterWriteIsDropped(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24)
	send(m, press("r")) // a read is in flight…
	seq := m.load.seq
	m.load.loading = false // …and (in this test) a write lands before it returns
	keys(m, "s", "4")
	op := *m.writes.inflight
	send(m, appliedMsg{op: op, res: model.ApplyResult{Applied: []model.Applied{{Edit: op.edits[0], Row: 2}}}})
	m.load.seq = seq
	cmd := send(m, loaded(m, testWorkbook(t))) // data read before the write
	if r, _ := m.tabs.current().current(); r.Status != "done" {
		t.Errorf("a read that started before the write must not undo it on screen: status %q", r.Status)
	}
	if cmd == nil || !m.load.loading {
		t.Errorf("the stale read is replaced by a fresh one")
	}
}

func TestMissingAndBrokenTabs(t *testing.T) {
	wb := testWorkbook(t)
	wb.Tabs = wb.Tabs[:1] // only an Inbox
	wb.Missing = []model.TabConfig{model.DefaultTabConfig(model.RoleDeadLetter)}
	_, err := model.Decode(model.DefaultTabConfig(model.RoleQueue), rowsOf([]string{"id", "kind"}), time.UTC)
	wb.Broken = []model.TabError{{Config: model.DefaultTabConfig(model.RoleQueue), Err: err}}
	m := newLoaded(t, wb, 80, 24)
	out := plainScreen(m)
	if strings.Contains(out, "failed_calls 0") || strings.Contains(out, "2 failed_calls") {
		t.Errorf("a missing tab is not in the tab bar:\n%s", out)
	}
	if !strings.Contains(out, "`failed_calls` tab not found: run `triage init` to create it") {
		t.Errorf("footer hints at triage init:\n%s", out)
	}
	if !strings.Contains(out, "2 Jobs !") || !strings.Contains(out, `tab "Jobs" (queue) is missing`) {
		t.Errorf("a broken tab is shown with a mark and its error toasted:\n%s", out)
	}
	keys(m, "2")
	out = plainScreen(m)
	if !strings.Contains(out, "This tab can't be used") || !strings.Contains(out, `missing required column "status"`) {
		t.Errorf("selecting a broken tab shows its error:\n%s", out)
	}
	keys(m, "j", "s", "space")
	checkFrame(t, screen(m), 80, 24)
}

func TestOnlyInbox(t *testing.T) {
	wb := testWorkbook(t)
	wb.Tabs = wb.Tabs[:1]
	m := newLoaded(t, wb, 80, 24)
	keys(m, "tab", "2", "3", "j")
	if m.tabs.current().name() != "Inbox" || cursorID(m) != "msg-001" {
		t.Errorf("a sheet with only an Inbox works: tab %s cursor %s", m.tabs.current().name(), cursorID(m))
	}
}

func TestAutoRefresh(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24, func(o *Options) { o.Refresh = time.Minute })
	cmd := send(m, refreshTickMsg{})
	if cmd == nil || !m.load.loading {
		t.Fatal("a refresh tick while idle starts a load")
	}
	send(m, refreshTickMsg{})
	if seq := m.load.seq; seq != 2 {
		t.Errorf("a tick during a load doesn't start another: seq %d", seq)
	}
}

// A workbook the CLI already loaded is shown without a second load.
func TestInitialWorkbookSkipsTheFirstLoad(t *testing.T) {
	wb := testWorkbook(t)
	st := &memStore{wb: func() *model.Workbook { return testWorkbook(t) }}
	m := New(Options{Store: st, Initial: wb, Now: fixedNow})
	send(m, tea.WindowSizeMsg{Width: 80, Height: 24})
	var got bool
	for _, msg := range cmdMsgs(t, m.Init()) {
		if lm, ok := msg.(loadedMsg); ok {
			got = lm.wb == wb && lm.err == nil
			send(m, msg)
		}
	}
	if !got {
		t.Fatal("Init did not hand over the initial workbook")
	}
	if n := st.loadCount(); n != 0 {
		t.Errorf("the store was loaded %d times; the initial workbook should have been used", n)
	}
	if !strings.Contains(plainScreen(m), "Inbox") {
		t.Errorf("initial workbook not shown:\n%s", plainScreen(m))
	}
}
