package tui

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/triage-dev/triage/model"
)

// fakeReplayer plans every waiting row of source crm and refuses the others; Replay reports
// the given events, then waits for the test (release) or a cancel.
type fakeReplayer struct {
	mu      sync.Mutex
	planned [][]string // IDs of each Plan call
	events  []model.ReplayEvent
	report  model.ReplaySummary
	release chan struct{}
	ctx     context.Context
	started chan struct{}
	recs    []*model.Record
	// fromUpdate counts Replay calls made from inside Update (invariant 10: there must be
	// none; Replay blocks, so one would also hang Update).
	fromUpdate atomic.Int32
}

func newFakeReplayer() *fakeReplayer {
	return &fakeReplayer{release: make(chan struct{}), started: make(chan struct{}, 1)}
}

func (f *fakeReplayer) Plan(t *model.Table, recs []*model.Record) model.ReplayPlan {
	var p model.ReplayPlan
	var ids []string
	for _, r := range recs {
		ids = append(ids, r.ID)
		switch {
		case r.Status != model.StatusDead:
			p.Refused = append(p.Refused, model.Refusal{ID: r.ID, Row: r.Row, Reason: "row " + itoa(r.Row) + " is " + r.Status, Skipped: true})
		case t.Get(r, model.FSource) != "crm":
			p.Refused = append(p.Refused, model.Refusal{ID: r.ID, Row: r.Row, Reason: "row " + itoa(r.Row) + ": source " + t.Get(r, model.FSource) + " has no url_prefixes"})
		default:
			p.Calls = append(p.Calls, model.PlannedCall{ID: r.ID, Method: "POST", URL: t.Get(r, model.FURL), Key: r.ID, Source: "crm", Row: r.Row,
				Headers: []string{"Authorization: env:CRM_TOKEN (set)"}})
		}
	}
	if len(p.Calls) > 0 {
		p.Sources = []string{"crm"}
		p.Destinations = []string{"https://crm.example/api/"}
	}
	f.mu.Lock()
	f.planned = append(f.planned, ids)
	f.mu.Unlock()
	return p
}

func (f *fakeReplayer) Replay(ctx context.Context, t *model.Table, recs []*model.Record, progress func(model.ReplayEvent)) model.ReplaySummary {
	countIfInsideUpdate(&f.fromUpdate)
	f.mu.Lock()
	f.ctx, f.recs = ctx, recs
	f.mu.Unlock()
	f.started <- struct{}{}
	for _, e := range f.events {
		progress(e)
	}
	select {
	case <-f.release:
	case <-ctx.Done():
		rep := f.report
		rep.Cancelled = true
		return rep
	}
	return f.report
}

func (f *fakeReplayer) callsFromUpdate() int32 { return f.fromUpdate.Load() }

// waitStarted waits for Replay to be called.
func (f *fakeReplayer) waitStarted(t *testing.T) {
	t.Helper()
	select {
	case <-f.started:
	case <-time.After(hangAfter):
		t.Fatal("Replay was not called")
	}
}

// pump runs Cmds the way bubbletea does (in goroutines, their messages back into Update on
// this goroutine) until done reports true.
type pump struct {
	t   *testing.T
	m   *Model
	out chan tea.Msg
}

func newPump(t *testing.T, m *Model) *pump { return &pump{t: t, m: m, out: make(chan tea.Msg, 256)} }

func (p *pump) send(msg tea.Msg) { runCmds(checkedUpdate(p.t, p.m, msg), p.out) }

func (p *pump) keys(ks ...string) {
	for _, k := range ks {
		p.send(press(k))
	}
}

func (p *pump) until(what string, done func() bool) {
	p.t.Helper()
	deadline := time.After(hangAfter)
	for !done() {
		select {
		case msg := <-p.out:
			if _, ok := msg.(tea.QuitMsg); ok {
				continue
			}
			p.send(msg)
		case <-deadline:
			p.t.Fatalf("timed out waiting for %s:\n%s", what, plainScreen(p.m))
		}
	}
}

// memStore serves a workbook from memory and applies edits to it (conflict-free). It counts
// the calls made from inside Update, which invariant 10 forbids (checkedUpdate checks).
type memStore struct {
	mu         sync.Mutex
	wb         func() *model.Workbook
	loads      int
	applied    []model.Edit
	ro         bool
	fromUpdate atomic.Int32
}

func (s *memStore) Load(context.Context) (*model.Workbook, error) {
	countIfInsideUpdate(&s.fromUpdate)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loads++
	return s.wb(), nil
}

func (s *memStore) Apply(_ context.Context, edits []model.Edit) (model.ApplyResult, error) {
	countIfInsideUpdate(&s.fromUpdate)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.applied = append(s.applied, edits...)
	var res model.ApplyResult
	for _, e := range edits {
		res.Applied = append(res.Applied, model.Applied{Edit: e})
	}
	return res, nil
}

func (s *memStore) ReadOnly() bool { return s.ro }

func (s *memStore) callsFromUpdate() int32 { return s.fromUpdate.Load() }

// loadCount is how many times Load was called (a load Cmd may be running: read it locked).
func (s *memStore) loadCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.loads
}

// deadRowsN is a dead-letter tab of n waiting crm rows (k-1 newest) plus one mailer row.
func replayWorkbook(t testing.TB) *model.Workbook {
	wb := testWorkbook(t)
	rows := [][]string{{"timestamp", "source", "url", "payload", "error", "attempts", "method", "key", "status", "replayed_at"}}
	for i := 1; i <= 6; i++ {
		rows = append(rows, []string{testNow.Add(-time.Duration(i) * time.Hour).Format(time.RFC3339), "crm", "https://crm.example/api/leads",
			`{"id":"k-` + itoa(i) + `"}`, "503", "1", "POST", "k-" + itoa(i), "dead", ""})
	}
	rows = append(rows, []string{testNow.Add(-10 * time.Hour).Format(time.RFC3339), "mailer", "https://mail.example/send", `{}`, "timeout", "1", "", "m-1", "dead", ""},
		[]string{testNow.Add(-11 * time.Hour).Format(time.RFC3339), "crm", "https://crm.example/api/leads", `{"id":"r-1"}`, "422 invalid", "1", "", "r-1", "rejected", ""})
	wb.Tabs[1] = mustDecode(t, model.RoleDeadLetter, rowsOf(rows...))
	return wb
}

func newReplayModel(t *testing.T, fr *fakeReplayer, w, h int, opts ...modelOpt) (*Model, *memStore) {
	st := &memStore{wb: func() *model.Workbook { return replayWorkbook(t) }}
	all := append([]modelOpt{func(o *Options) { o.Store = st; o.Replayer = fr }}, opts...)
	m := newLoaded(t, replayWorkbook(t), w, h, all...)
	return m, st
}

func TestReplayConfirmStatesCountSourcesDestinations(t *testing.T) {
	fr := newFakeReplayer()
	m, _ := newReplayModel(t, fr, 100, 30)
	keys(m, "2", "space", "space", "j", "j", "j", "j", "space") // k-1, k-2, m-1 marked
	keys(m, "R")
	if _, ok := m.dialog.(confirm); !ok {
		t.Fatalf("R opens a confirm, got %T", m.dialog)
	}
	if got := fr.planned[0]; strings.Join(got, ",") != "k-1,k-2,m-1" {
		t.Errorf("planned %v, want the marked rows", got)
	}
	replayConfirmLayout(t, m)
	replayDryRun(t, m)
	replayAllAndNothing(t, m)
}

// replayConfirmLayout: the question, its destination, then [y/N]; the refused rows; no filter note.
func replayConfirmLayout(t *testing.T, m *Model) {
	out := plainScreen(m)
	if strings.Contains(out, "/? [y/N]") || strings.Contains(out, "→") {
		t.Errorf("the destination is not glued to the question (it reads like a URL ending in ?):\n%s", out)
	}
	question, yn := -1, -1
	for i, l := range strings.Split(out, "\n") {
		switch {
		case strings.Contains(l, "Replay 2 calls to 1 source (crm)?"):
			question = i
			if strings.Contains(l, "http") || strings.Contains(l, "[y/N]") {
				t.Errorf("the question has a line of its own: %q", l)
			}
		case question >= 0 && i == question+1 && !strings.Contains(l, "  to https://crm.example/api/"):
			t.Errorf("the destination follows the question: %q", l)
		case strings.Contains(l, "[y/N]"):
			yn = i
		}
	}
	if question < 0 || yn != question+2 {
		t.Errorf("question on line %d, [y/N] on line %d: want the question, its destination, then [y/N]:\n%s", question, yn, out)
	}
	if strings.Contains(out, "current filter") || strings.Contains(out, "filter shows") {
		t.Errorf("without a filter the confirm says nothing about one:\n%s", out)
	}
	for _, want := range []string{
		"1 refused: row 8: source mailer has no url_prefixes", "d dry run"} {
		if !strings.Contains(out, want) {
			t.Errorf("confirm lacks %q:\n%s", want, out)
		}
	}
}

// replayDryRun: d shows every call and every refused row; enter is No.
func replayDryRun(t *testing.T, m *Model) {
	if d, _ := m.dialog.(confirm); d.showList {
		t.Error("the dry run is hidden until asked for")
	}
	keys(m, "d")
	out := plainScreen(m)
	for _, want := range []string{"Dry run: nothing is sent", "Would send 2 calls:", "POST https://crm.example/api/leads", "key k-1 · source crm · row 2",
		"Authorization: env:CRM_TOKEN (set)", "Refused 1 row:", "row 8: source mailer has no url_prefixes"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run lacks %q:\n%s", want, out)
		}
	}
	keys(m, "enter") // default No
	if m.dialog != nil || m.replay.run != nil || m.replay.pendingReplay != nil {
		t.Fatalf("enter is No: dialog %T run %v", m.dialog, m.replay.run)
	}
}

// replayAllAndNothing: A replays every shown row; a plan without calls offers no yes.
func replayAllAndNothing(t *testing.T, m *Model) {
	// A: every row the filter shows, even unmarked ones; skipped rows are counted by rule.
	keys(m, "A")
	out := plainScreen(m)
	if !strings.Contains(out, "Replay 6 calls") || !strings.Contains(out, "All 8 rows of the tab.") || strings.Contains(out, "filter shows") ||
		!strings.Contains(out, "1 row skipped: delivered, rejected and discarded rows are not replayed") {
		t.Errorf("A replays every shown row:\n%s", out)
	}
	keys(m, "esc")

	// Nothing to replay: a rejected row alone.
	keys(m, "V", "G", "R")
	out = plainScreen(m)
	// One row: its own reason, said as a skip (nothing is wrong with it), not "refused", and
	// no word about bulk.
	if !strings.Contains(out, "Nothing to replay: row 9 is rejected.") || strings.Contains(out, "[y/N]") ||
		strings.Contains(out, "refused") || strings.Contains(out, "bulk") {
		t.Errorf("a plan with no calls says so and offers no yes:\n%s", out)
	}
	keys(m, "y")
	if m.replay.run != nil {
		t.Error("y on a plan without calls must not start a run")
	}
}

func TestReplayWithoutReplayerHints(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 100, 30)
	keys(m, "2", "R")
	if out := plainScreen(m); !strings.Contains(out, "run: triage replay --tab failed_calls k-2") {
		t.Errorf("no Replayer: R names the command:\n%s", out)
	}
	keys(m, "1", "R")
	if out := plainScreen(m); !strings.Contains(out, "replay is for dead letters") {
		t.Errorf("R outside the dead-letter tab explains:\n%s", out)
	}
}

func TestReplayReadOnlyPreviewsOnly(t *testing.T) {
	fr := newFakeReplayer()
	m, _ := newReplayModel(t, fr, 100, 30, func(o *Options) {
		o.Store = &memStore{wb: func() *model.Workbook { return replayWorkbook(t) }, ro: true}
	})
	keys(m, "2", "R")
	out := plainScreen(m)
	if !strings.Contains(out, "Read-only: nothing will be sent") || !strings.Contains(out, "Would send 1 call") || strings.Contains(out, "[y/N]") {
		t.Errorf("read-only shows the dry run only:\n%s", out)
	}
	keys(m, "y")
	if m.replay.run != nil {
		t.Error("read-only must not replay")
	}
}

func TestReplayPlansBigSelectionsOffTheUIGoroutine(t *testing.T) {
	fr := newFakeReplayer()
	rows := [][]string{{"timestamp", "source", "url", "payload", "error", "attempts", "method", "key", "status", "replayed_at"}}
	for i := 0; i < syncPlanMax+10; i++ {
		rows = append(rows, []string{"2025-05-01T00:00:00Z", "crm", "https://crm.example/api/x", `{}`, "", "", "", "b-" + itoa(i), "dead", ""})
	}
	wb := testWorkbook(t)
	wb.Tabs[1] = mustDecode(t, model.RoleDeadLetter, rowsOf(rows...))
	m := newLoaded(t, wb, 100, 30, func(o *Options) { o.Replayer = fr })
	keys(m, "2")
	cmd := checkedUpdate(t, m, press("A"))
	if m.dialog != nil || !m.replay.planning || len(fr.planned) != 0 {
		t.Fatalf("a big plan runs in a Cmd: dialog %T planning %v", m.dialog, m.replay.planning)
	}
	p := newPump(t, m)
	runCmds(cmd, p.out)
	p.until("the plan", func() bool { return m.dialog != nil })
	if !strings.Contains(plainScreen(m), "Replay 2010 calls") {
		t.Errorf("plan dialog:\n%s", plainScreen(m))
	}
}

func TestReplayFromTheDetailView(t *testing.T) {
	fr := newFakeReplayer()
	m, _ := newReplayModel(t, fr, 100, 30)
	keys(m, "2", "space", "enter") // k-1 marked; the detail shows k-2
	if m.detail == nil || m.detail.rec.ID != "k-2" {
		t.Fatalf("detail on %+v", m.detail)
	}
	keys(m, "R")
	if _, ok := m.dialog.(confirm); !ok {
		t.Fatalf("R in the detail view asks first, got %T:\n%s", m.dialog, plainScreen(m))
	}
	if len(fr.planned) != 1 || !slices.Equal(fr.planned[0], []string{"k-2"}) {
		t.Errorf("R plans the record shown, not the marks: %v", fr.planned)
	}
	if !strings.Contains(plainScreen(m), "Replay 1 call to 1 source (crm)?") {
		t.Errorf("the same confirm as in the table:\n%s", plainScreen(m))
	}
	keys(m, "y")
	if !m.replay.running() {
		t.Error("y starts the run")
	}

	// Without a Replayer, the hint names the record shown.
	m = newLoaded(t, testWorkbook(t), 100, 30)
	keys(m, "2", "j", "j", "enter", "R")
	if !strings.Contains(plainScreen(m), "run: triage replay --tab failed_calls k-3") {
		t.Errorf("R in the detail view names the command for its record:\n%s", plainScreen(m))
	}
}
