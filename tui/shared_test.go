package tui

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/triage-dev/triage/model"
)

// pushed is what the listener hands Update for a workbook pushed on ch.
func pushed(t *testing.T, ch chan *Prepared, p *Prepared) pushedMsg {
	t.Helper()
	ch <- p
	msg, ok := listenCmd(ch)().(pushedMsg)
	if !ok {
		t.Fatal("listenCmd did not answer a pushedMsg")
	}
	return msg
}

// markedIDs are the IDs of the active tab's marked rows.
func markedIDs(m *Model) []string {
	ts := m.tabs.current()
	var ids []string
	for ri, on := range ts.marked {
		if on {
			ids = append(ids, ts.data.table.Records[ri].ID)
		}
	}
	return ids
}

// A hub's push moves the view like a load of the TUI's own: each tab keeps its cursor (by ID,
// though the rows moved), its filter and its marks, and shows the new values.
func TestPushedWorkbookKeepsViewState(t *testing.T) {
	ch := make(chan *Prepared, 1)
	m := New(Options{Store: nopStore{t: t}, Now: fixedNow, Updates: ch})
	m.Init()
	if !m.hub.waitPush {
		t.Fatal("with Updates and no Initial, Init loads instead of waiting for the push")
	}
	send(m, tea.WindowSizeMsg{Width: 80, Height: 24})
	send(m, pushed(t, ch, Prepare(testWorkbook(t), nil)))
	if !m.load.hasData || m.load.loading {
		t.Fatalf("the first push did not end the first load: hasData %v loading %v", m.load.hasData, m.load.loading)
	}
	keys(m, "/")
	typeText(m, "example.com")
	keys(m, "enter", "j", "j", "space", "j", "space", "j")
	wantCur, wantMarks := cursorID(m), markedIDs(m)
	if wantCur == "" || len(wantMarks) != 2 {
		t.Fatalf("setup: cursor %q marks %v", wantCur, wantMarks)
	}

	// Someone else sets the cursor row's status, and a new message arrives on top.
	wb := testWorkbook(t)
	rows := inboxRows()
	for _, r := range rows[1:] {
		if r[5] == wantCur {
			r[4] = "spam"
		}
	}
	rows = append(rows, []any{testNow.Format("2006-01-02T15:04:05Z07:00"), "New Person", "new@example.com", "brand new", "new", "msg-new", ""})
	wb.Tabs[0] = mustDecode(t, model.RoleInbox, rows)
	send(m, pushed(t, ch, Prepare(wb, nil)))

	if got := cursorID(m); got != wantCur {
		t.Errorf("cursor on %q after the push, want %q", got, wantCur)
	}
	if got := markedIDs(m); strings.Join(got, ",") != strings.Join(wantMarks, ",") {
		t.Errorf("marks %v after the push, want %v", got, wantMarks)
	}
	if q := m.tabs.current().filter.query; q != "example.com" {
		t.Errorf("filter %q after the push", q)
	}
	if r, _ := m.tabs.current().current(); r == nil || r.Status != "spam" {
		t.Errorf("the cursor row doesn't show the pushed status: %+v", r)
	}
	if ts := m.tabs.current(); len(ts.visible) != 31 || ts.data.table.Index("msg-new") < 0 {
		t.Errorf("the new row isn't in the filtered view: %d rows shown", len(ts.visible))
	}

	// A closed channel ends the listening.
	close(ch)
	if cmd := send(m, listenCmd(ch)()); cmd != nil {
		t.Error("the TUI listens again after the channel closed")
	}
}

// Two TUIs over one Prepared: a write landing in one changes its rows only; the shared data
// (and so the other TUI) stays as pushed.
func TestSharedWorkbookIsCopiedOnWrite(t *testing.T) {
	p := Prepare(testWorkbook(t), nil)
	var ms []*Model
	for range 2 {
		m, _ := newPushedModelOf(t, p)
		ms = append(ms, m)
	}
	a, b := ms[0], ms[1]
	id := cursorID(a)
	ts := a.tabs.current()
	r, _ := ts.current()
	op := writeOp{kind: writeSetStatus, tab: ts.name(), status: "spam",
		edits: []model.Edit{{Tab: ts.name(), ID: id, Expect: map[model.Field]string{model.FStatus: r.Status}, Set: map[model.Field]string{model.FStatus: "spam"}}}}
	a.writes.start(op)
	send(a, appliedMsg{op: op, res: model.ApplyResult{Applied: []model.Applied{{Edit: op.edits[0], Row: r.Row}}}})
	if got, _, _ := a.tabs.current().data.record(id); got == nil || got.Status != "spam" {
		t.Fatalf("the writer's row: %+v", got)
	}
	if got, _, _ := b.tabs.current().data.record(id); got.Status == "spam" {
		t.Error("a write in one session changed another session's rows")
	}
	sharedTab := p.Workbook().Tabs[0]
	if got := sharedTab.Records[sharedTab.Index(id)]; got.Status == "spam" {
		t.Error("a write in one session changed the shared workbook")
	}
	if p.tabs[0].counts["spam"] != b.tabs.current().data.counts["spam"] || a.tabs.current().data.counts["spam"] != p.tabs[0].counts["spam"]+1 {
		t.Errorf("counts: shared %d, writer %d, other %d", p.tabs[0].counts["spam"], a.tabs.current().data.counts["spam"], b.tabs.current().data.counts["spam"])
	}
}

// A push while a replay holds the rows waits until the replay is over (the clock puts it in
// place), as a refresh does.
func TestPushHeldDuringReplayPlan(t *testing.T) {
	m, ch := newPushedModel(t)
	wb := testWorkbook(t)
	wb.Title = "Renamed"
	m.replay.planning = true
	send(m, pushed(t, ch, Prepare(wb, nil)))
	if m.book.title == "Renamed" {
		t.Fatal("a push was put in place while a replay plan held the rows")
	}
	m.replay.planning = false
	send(m, clockMsg{})
	if m.book.title != "Renamed" {
		t.Errorf("the held push wasn't put in place after the plan: title %q", m.book.title)
	}
}

// Who you are, in the header before RW/RO: whole at 80 columns and wider, the name alone or
// nothing when narrow; sanitised.
func TestGoldenMatrixIdentity(t *testing.T) {
	goldenMatrix(t, "identity", nil, nil, func(o *Options) { o.Identity = "alice · operator" })
}

func TestIdentitySanitisedAndGivesWay(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24, func(o *Options) { o.Identity = "ev\x1b[2Jil · viewer" })
	if s := screen(m); strings.Contains(s, "\x1b[2J") || !strings.Contains(plainScreen(m), "viewer") {
		t.Errorf("identity not sanitised or not shown:\n%q", strings.SplitN(plainScreen(m), "\n", 2)[0])
	}
	for _, w := range []int{60, 80, 120} {
		m := newLoaded(t, testWorkbook(t), w, 24, func(o *Options) { o.Identity = "alice · operator" })
		head := strings.SplitN(plainScreen(m), "\n", 2)[0]
		if !strings.Contains(head, "RW") || !strings.Contains(head, "triage") {
			t.Errorf("at %d columns the identity pushed RW or the title out: %q", w, head)
		}
		if w >= 80 && !strings.Contains(head, "alice · operator · RW") {
			t.Errorf("at %d columns the identity isn't whole before RW: %q", w, head)
		}
	}
}

// A write the store refuses for the person's role says who, which role and why, and is not a
// connection failure (no "error" in the header, no "r refreshes" hint).
func TestRoleRefusalToast(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24)
	ts := m.tabs.current()
	r, _ := ts.current()
	op := writeOp{kind: writeSetStatus, tab: ts.name(), status: "done",
		edits: []model.Edit{{Tab: ts.name(), ID: r.ID, Expect: map[model.Field]string{model.FStatus: r.Status}, Set: map[model.Field]string{model.FStatus: "done"}}}}
	m.writes.start(op)
	send(m, appliedMsg{op: op, err: fmt.Errorf("write 1 edit: %w", &model.AccessError{Who: "alice", Role: model.AccessViewer, Why: "a viewer can't change rows"})})
	got := toastTexts(m)
	if !strings.Contains(got, "not written: write 1 edit: alice is a viewer: a viewer can't change rows") || strings.Contains(got, "refreshes") {
		t.Errorf("toast %q", got)
	}
	if h := headerRight(m); !strings.Contains(h, "● ok") {
		t.Errorf("header %q after a refusal", h)
	}
}

// A viewer's write key says why the TUI is read-only.
func TestReadOnlyWhy(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24, func(o *Options) {
		o.Store = nopStore{t: t, readOnly: true}
		o.ReadOnlyWhy = "alice is a viewer"
	})
	keys(m, "s")
	if got := toastTexts(m); !strings.Contains(got, "read-only: alice is a viewer") {
		t.Errorf("toast %q", got)
	}
}

// The write's answer after a push that already shows it changes nothing and copies nothing:
// the session keeps sharing the hub's rows.
func TestAppliedAfterPushKeepsSharing(t *testing.T) {
	m, ch := newPushedModel(t)
	ts := m.tabs.current()
	r, _ := ts.current()
	id, from := r.ID, r.Status
	op := writeOp{kind: writeSetStatus, tab: ts.name(), status: "spam",
		edits: []model.Edit{{Tab: ts.name(), ID: id, Expect: map[model.Field]string{model.FStatus: from}, Set: map[model.Field]string{model.FStatus: "spam"}}}}
	m.writes.start(op)
	// The hub pushes the sheet as written before the write's answer arrives.
	rows := inboxRows()
	for _, row := range rows[1:] {
		if row[5] == id {
			row[4] = "spam"
		}
	}
	wb := testWorkbook(t)
	wb.Tabs[0] = mustDecode(t, model.RoleInbox, rows)
	send(m, pushed(t, ch, Prepare(wb, nil)))
	send(m, appliedMsg{op: op, res: model.ApplyResult{Applied: []model.Applied{{Edit: op.edits[0], Row: r.Row}}}})
	if d := m.tabs.current().data; !d.shared {
		t.Error("the session copied the shared rows for a write the push already showed")
	}
	if got, _, _ := m.tabs.current().data.record(id); got.Status != "spam" {
		t.Errorf("status %q", got.Status)
	}
}

// A replay refused for every row with one reason (another person's run) says it once.
func TestReplayConfirmSaysOneReasonOnce(t *testing.T) {
	why := "alice is replaying failed_calls 37/120; try again when it ends"
	c := newLoaded(t, testWorkbook(t), 80, 24).c
	d := newReplayConfirm(c, replayPlannedMsg{plan: model.ReplayPlan{Refused: []model.Refusal{{ID: "a", Reason: why}, {ID: "b", Reason: why}, {ID: "c", Reason: why}}}})
	notes := strings.Join(d.notes, "\n")
	if strings.Count(notes, "alice is replaying") != 1 || !strings.Contains(notes, "3 refused: "+why) {
		t.Errorf("notes %q", notes)
	}
}

// newPushedModel is a session model whose rows came by the hub's push of testWorkbook, at
// 80x24; ch takes the next push.
func newPushedModel(t *testing.T) (*Model, chan *Prepared) {
	t.Helper()
	return newPushedModelOf(t, Prepare(testWorkbook(t), nil))
}

// newPushedModelOf is newPushedModel with the push p.
func newPushedModelOf(t *testing.T, p *Prepared) (*Model, chan *Prepared) {
	t.Helper()
	ch := make(chan *Prepared, 1)
	m := New(Options{Store: nopStore{t: t}, Now: fixedNow, Updates: ch})
	m.Init()
	send(m, tea.WindowSizeMsg{Width: 80, Height: 24})
	send(m, pushed(t, ch, p))
	return m, ch
}
