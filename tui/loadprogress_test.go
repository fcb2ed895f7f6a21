package tui

import (
	"context"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/triage-dev/triage/model"
)

// progressStore's Load reports its progress as a streaming store does, then waits for the
// test to let it finish.
type progressStore struct {
	wb       func() *model.Workbook
	rows     []int // the reports, in order
	total    int
	reported chan struct{} // closed after the reports
	release  chan struct{} // closed by the test: Load returns
}

func (s *progressStore) Load(ctx context.Context) (*model.Workbook, error) {
	for _, n := range s.rows {
		model.ReportLoadProgress(ctx, "Inbox", n, s.total)
	}
	close(s.reported)
	<-s.release
	return s.wb(), nil
}

func (s *progressStore) Apply(context.Context, []model.Edit) (model.ApplyResult, error) {
	return model.ApplyResult{}, nil
}

func (s *progressStore) ReadOnly() bool { return false }

// runAll runs every Cmd of a tree at once, as the program does (a load and the listener of
// its progress wait on each other), and hands their messages over as they come. Ticks are
// left out (cmdMsgs).
func runAll(t *testing.T, cmd tea.Cmd) <-chan tea.Msg {
	t.Helper()
	out := make(chan tea.Msg, 16)
	var run func(tea.Cmd)
	run = func(c tea.Cmd) {
		if c == nil || isTick(c) {
			return
		}
		go func() {
			msg := c()
			if sub, ok := subCmds(msg); ok {
				for _, c := range sub {
					run(c)
				}
				return
			}
			out <- msg
		}()
	}
	run(cmd)
	return out
}

// next is the first message of type T from msgs (others are dropped).
func next[T tea.Msg](t *testing.T, msgs <-chan tea.Msg) T {
	t.Helper()
	for {
		select {
		case msg := <-msgs:
			if m, ok := msg.(T); ok {
				return m
			}
		case <-t.Context().Done():
			var zero T
			t.Fatalf("no %T before the test ended", zero)
			return zero
		}
	}
}

// The first load's progress is on the start screen, a refresh's on the status line, as a bar
// with rows/total for the tab being read; both go when the load lands.
func TestLoadProgressIsShown(t *testing.T) {
	st := &progressStore{wb: func() *model.Workbook { return testWorkbook(t) }, rows: []int{100, 25000}, total: 100000,
		reported: make(chan struct{}), release: make(chan struct{})}
	m := New(Options{Store: st, SpreadsheetID: "sheet-1", Now: fixedNow})
	send(m, tea.WindowSizeMsg{Width: 80, Height: 24})
	msgs := runAll(t, m.Init())
	<-st.reported
	// 100 is taken over by 25000 before the listener wakes, or passed on before it: both are
	// fine, but the newest must come.
	p := next[loadProgressMsg](t, msgs)
	cmd := send(m, p)
	if p.p.rows != 25000 {
		cmd = send(m, next[loadProgressMsg](t, runAll(t, cmd)))
	}
	scr := plainScreen(m)
	if !strings.Contains(scr, "25000/100000 rows · Inbox") || !strings.Contains(scr, "[████████████░") {
		t.Errorf("the start screen doesn't show the load's progress:\n%s", scr)
	}
	if cmd == nil {
		t.Error("after a report the root doesn't listen for the next")
	}
	close(st.release)
	send(m, next[loadedMsg](t, msgs))
	if !m.load.hasData || m.load.progress.tab != "" {
		t.Fatal("the load landed but its progress stays")
	}

	// A refresh: its progress on the status line.
	st.reported, st.release = make(chan struct{}), make(chan struct{})
	st.rows = []int{60000}
	msgs = runAll(t, send(m, press("r")))
	<-st.reported
	send(m, next[loadProgressMsg](t, msgs))
	if s := statusBar(m, 80); !strings.Contains(s, "reading Inbox [██████░░░░] 60000/100000 rows") {
		t.Errorf("the status line doesn't show the refresh's progress: %q", s)
	}
	close(st.release)
	send(m, next[loadedMsg](t, msgs))
	if s := statusBar(m, 80); strings.Contains(s, "reading") {
		t.Errorf("the refresh landed but the status line still reads: %q", s)
	}
}

// A report of a load that is no longer the one in flight is dropped.
func TestStaleLoadProgressIsDropped(t *testing.T) {
	m := newLoaded(t, testWorkbook(t), 80, 24)
	old := newProgressFeed()
	if cmd := send(m, loadProgressMsg{feed: old, p: loadProgress{tab: "Inbox", rows: 5, total: 10}}); cmd != nil || m.load.progress.tab != "" {
		t.Error("a stale load's progress was taken")
	}
}

// The store's goroutine never waits for the UI: nobody listening, it reports every row of
// 100,000 and goes on; the listener then gets the newest report only, and a hundredth of
// the tab is the smallest step passed on.
func TestLoadProgressNeverBlocksTheLoader(t *testing.T) {
	f := newProgressFeed()
	ctx := model.WithLoadProgress(context.Background(), f.report)
	done := make(chan struct{})
	go func() {
		for n := 1; n <= 100_000; n++ {
			model.ReportLoadProgress(ctx, "Inbox", n, 100_000)
		}
		close(done)
	}()
	select {
	case <-done:
	case <-t.Context().Done():
		t.Fatal("the loader blocked on reporting its progress")
	}
	msg := f.listen()().(loadProgressMsg)
	if msg.p != (loadProgress{tab: "Inbox", rows: 100_000, total: 100_000}) {
		t.Errorf("the listener got %+v, want the newest report", msg.p)
	}
	f2 := newProgressFeed()
	f2.report("Inbox", 1000, 100_000)
	<-f2.wake
	f2.report("Inbox", 1999, 100_000)
	select {
	case <-f2.wake:
		t.Error("a report less than a hundredth of the tab on woke the listener")
	default:
	}
	f2.report("Inbox", 2000, 100_000)
	if len(f2.wake) != 1 {
		t.Error("a report a hundredth of the tab on wasn't passed on")
	}
	close(f2.done)
	<-f2.wake
	if msg := f2.listen()(); msg != nil {
		t.Errorf("the listener of a finished load answered %#v", msg)
	}
}
