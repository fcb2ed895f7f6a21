package tui

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/triage-dev/triage/model"
)

// countingStore counts its loads; as a checkingStore it also has a change check.
type countingStore struct {
	mu    sync.Mutex
	t     *testing.T
	loads int
}

func (s *countingStore) Load(context.Context) (*model.Workbook, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loads++
	return testWorkbook(s.t), nil
}

func (s *countingStore) Apply(context.Context, []model.Edit) (model.ApplyResult, error) {
	return model.ApplyResult{}, nil
}

func (s *countingStore) ReadOnly() bool { return false }

func (s *countingStore) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.loads
}

type checkingStore struct {
	countingStore
	checks  int
	changed bool
	err     error
}

func (s *checkingStore) Changed(context.Context) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.checks++
	return s.changed, s.err
}

// idleClock is a test's clock and the auto refresh's schedule as the program would keep it.
type idleClock struct {
	now time.Time
}

// idleModel is a loaded model over store with an auto refresh every minute, on a clock the
// test moves.
func idleModel(t *testing.T, store Store) (*Model, *idleClock) {
	clk := &idleClock{now: testNow}
	m := New(Options{Store: store, SpreadsheetID: "sheet-1", Refresh: time.Minute, Now: func() time.Time { return clk.now }})
	send(m, tea.WindowSizeMsg{Width: 80, Height: 24})
	send(m, loaded(m, testWorkbook(t)))
	return m, clk
}

// deliver runs what a Cmd does (ticks aside) and hands the model the loads' and the change
// checks' answers, as the program would.
func deliver(t *testing.T, m *Model, cmd tea.Cmd) {
	t.Helper()
	for _, msg := range cmdMsgs(t, cmd) {
		switch msg.(type) {
		case loadedMsg, changedMsg:
			deliver(t, m, send(m, msg))
		}
	}
}

// runFor lets d pass on the clock, firing the auto refresh's ticks when they fall due (each
// after the interval the model chose when it scheduled it).
func runFor(t *testing.T, m *Model, clk *idleClock, d time.Duration) {
	t.Helper()
	end := clk.now.Add(d)
	for {
		due := m.load.auto.last.Add(m.load.auto.interval)
		if due.After(end) {
			clk.now = end
			return
		}
		clk.now = due
		deliver(t, m, send(m, refreshTickMsg{gen: m.load.auto.gen}))
	}
}

// Without a change check, an idle TUI reads less and less often: every minute for the first
// five, then each interval doubles up to 15 minutes. An hour untouched costs 10 reads, not
// 60; a key brings the minute back and reads at once when one is overdue.
func TestIdleBacksOff(t *testing.T) {
	st := &countingStore{t: t}
	m, clk := idleModel(t, st)
	runFor(t, m, clk, 5*time.Minute)
	if n := st.count(); n != 5 {
		t.Fatalf("5 minutes with a key pressed at the start: %d reads, want 5", n)
	}
	runFor(t, m, clk, 55*time.Minute)
	// reads at 1-5 minutes, then 7, 11, 19, 34, 49.
	if n := st.count(); n != 10 {
		t.Errorf("an idle hour: %d reads, want 10", n)
	}
	if got := m.load.auto.interval; got != idleCap {
		t.Errorf("the interval after an idle hour is %v, want %v", got, idleCap)
	}
	if mode := m.load.auto.mode(); mode != "refresh 15m (idle): full reads" {
		t.Errorf("the help doesn't say the refresh backed off: %q", mode)
	}
	stale := m.load.auto.gen

	// 60 minutes in, 11 after the last read: a key reads at once and the minute is back.
	deliver(t, m, send(m, press("j")))
	if n := st.count(); n != 11 {
		t.Errorf("a key after an overdue refresh: %d reads, want 11", n)
	}
	if m.load.auto.interval != time.Minute {
		t.Errorf("a key leaves the interval at %v", m.load.auto.interval)
	}
	// The tick of the idle schedule falls due later: dropped.
	deliver(t, m, send(m, refreshTickMsg{gen: stale}))
	if n := st.count(); n != 11 {
		t.Errorf("a tick of the replaced schedule read: %d reads", n)
	}
	// A key when nothing is overdue doesn't read.
	deliver(t, m, send(m, press("k")))
	if n := st.count(); n != 11 {
		t.Errorf("a key with a read just done read again: %d reads", n)
	}
	runFor(t, m, clk, 3*time.Minute)
	if n := st.count(); n != 14 {
		t.Errorf("3 minutes after a key: %d reads, want 14", n)
	}
}

// r reads at once, idle or not.
func TestRefreshKeyReadsWhileBackedOff(t *testing.T) {
	st := &countingStore{t: t}
	m, clk := idleModel(t, st)
	runFor(t, m, clk, 20*time.Minute)
	n := st.count()
	clk.now = clk.now.Add(10 * time.Second) // just after a read: nothing overdue
	deliver(t, m, send(m, press("r")))
	if got := st.count(); got != n+1 {
		t.Errorf("r while backed off: %d reads, want %d", got, n+1)
	}
}

// With a change check a tick asks the store and reads only when the sheet changed; an idle
// hour is 60 checks and no read. A failing check turns itself off, says so once, reads, and
// the refresh goes on with full reads.
func TestChangeCheckBeforeARead(t *testing.T) {
	st := &checkingStore{countingStore: countingStore{t: t}}
	m, clk := idleModel(t, st)
	if mode := m.load.auto.mode(); !strings.Contains(mode, "change check") {
		t.Errorf("the help doesn't say the change check is on: %q", mode)
	}
	send(m, press("?"))
	if title, _, _ := strings.Cut(plainScreen(m), "\n"); !strings.Contains(title, " · refresh 1m: change check") {
		t.Errorf("the help's title at 80x24 doesn't say which refresh mode is on: %q", title)
	}
	send(m, press("?"))
	runFor(t, m, clk, time.Hour)
	if st.checks != 60 || st.count() != 0 {
		t.Errorf("an idle hour with nothing changed: %d checks, %d reads; want 60, 0", st.checks, st.count())
	}
	if !m.load.at.Equal(clk.now) {
		t.Errorf("a check that found nothing new leaves the rows dated %v, want %v", m.load.at, clk.now)
	}
	st.changed = true
	runFor(t, m, clk, time.Minute)
	if st.checks != 61 || st.count() != 1 {
		t.Errorf("a change: %d checks, %d reads; want 61, 1", st.checks, st.count())
	}

	st.err = errors.New("the credential can't read file metadata")
	runFor(t, m, clk, time.Minute)
	if st.count() != 2 {
		t.Errorf("a failed check falls back to a read: %d reads", st.count())
	}
	if toasts := toastTexts(m); !strings.Contains(toasts, "change check off: the credential can't read file metadata") {
		t.Errorf("the failed check isn't said: %q", toasts)
	}
	if mode := m.load.auto.mode(); mode != "refresh 1m: full reads (check off)" {
		t.Errorf("the mode after a failed check: %q", mode)
	}
	checks := st.checks
	deliver(t, m, send(m, press("j"))) // someone is there: no idle backoff
	runFor(t, m, clk, 3*time.Minute)
	if st.checks != checks || st.count() != 5 {
		t.Errorf("after the check turned off: %d more checks, %d reads; want 0, 5", st.checks-checks, st.count())
	}
	if n := strings.Count(toastTexts(m), "change check off"); n > 1 {
		t.Errorf("the check's failure is said %d times", n)
	}
}

// modeStore is a checkingStore that also says its mode, as sheets.Store does; a failing
// check turns the mode to offOnErr when that is set (Drive refused the credential).
type modeStore struct {
	checkingStore
	mode, offOnErr string
}

func (s *modeStore) Changed(ctx context.Context) (bool, error) {
	changed, err := s.checkingStore.Changed(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil && s.offOnErr != "" {
		s.mode = s.offOnErr
	}
	return changed, err
}

func (s *modeStore) ChangeCheckMode() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mode
}

// A store that says it reads in full (no Drive access) is never asked: its refreshes back
// off while idle as a store without a check. One whose check fails once but stays on is
// asked again next time, without a word; one that turns its check off on a failure (Drive
// refused the credential) is said once, and then reads in full and backs off.
func TestChangeCheckModeOfTheStore(t *testing.T) {
	st := &modeStore{checkingStore: checkingStore{countingStore: countingStore{t: t}}, mode: "full reads (no Drive access)"}
	m, clk := idleModel(t, st)
	runFor(t, m, clk, time.Hour)
	if st.checks != 0 || st.count() != 10 {
		t.Errorf("a store without a working check: %d checks and %d reads in an idle hour, want 0 and 10", st.checks, st.count())
	}
	if mode := m.load.auto.mode(); mode != "refresh 1m: full reads (check off)" {
		t.Errorf("mode %q", mode)
	}

	st = &modeStore{checkingStore: checkingStore{countingStore: countingStore{t: t}}, mode: "change check (Drive files.get version)"}
	m, clk = idleModel(t, st)
	st.err = errors.New("connection reset")
	runFor(t, m, clk, time.Minute)
	if st.checks != 1 || st.count() != 1 || strings.Contains(toastTexts(m), "change check off") {
		t.Errorf("a failed check with the store's check on: %d checks, %d reads, toasts %q; want 1, 1, none", st.checks, st.count(), toastTexts(m))
	}
	st.err = nil
	runFor(t, m, clk, time.Minute)
	if st.checks != 2 || st.count() != 1 {
		t.Errorf("after a failure the check goes on: %d checks, %d reads; want 2, 1", st.checks, st.count())
	}

	st.err, st.offOnErr = errors.New("Drive answered 403 to files.get"), "full reads (Drive answered 403 to files.get)"
	runFor(t, m, clk, time.Minute)
	if st.checks != 3 || st.count() != 2 || !strings.Contains(toastTexts(m), "change check off: Drive answered 403 to files.get") {
		t.Errorf("a check turned off: %d checks, %d reads, toasts %q", st.checks, st.count(), toastTexts(m))
	}
	deliver(t, m, send(m, press("j"))) // someone is there: no idle backoff
	runFor(t, m, clk, 4*time.Minute)
	if st.checks != 3 || st.count() != 6 {
		t.Errorf("after the check went off: %d checks, %d reads; want 3, 6", st.checks, st.count())
	}
}
