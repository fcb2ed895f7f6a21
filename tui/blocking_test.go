package tui

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/model"
)

// blockingStore is a test double whose Load and Apply block until the test lets one call
// through. It exists only to prove invariant 10: Update never calls the store, and the Cmds
// it returns are where the blocking happens. Called from Update, it would hang there: the
// watchdog of checkedUpdate turns that into a failure, and fromUpdate says why.
type blockingStore struct {
	gate       chan struct{}
	wb         func() *model.Workbook
	loads      atomic.Int32
	applies    atomic.Int32
	fromUpdate atomic.Int32
}

func (s *blockingStore) Load(ctx context.Context) (*model.Workbook, error) {
	s.loads.Add(1)
	countIfInsideUpdate(&s.fromUpdate)
	select {
	case <-s.gate:
		return s.wb(), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (s *blockingStore) Apply(ctx context.Context, edits []model.Edit) (model.ApplyResult, error) {
	s.applies.Add(1)
	countIfInsideUpdate(&s.fromUpdate)
	select {
	case <-s.gate:
	case <-ctx.Done():
		return model.ApplyResult{}, ctx.Err()
	}
	var res model.ApplyResult
	for _, e := range edits {
		res.Applied = append(res.Applied, model.Applied{Edit: e})
	}
	return res, nil
}

func (s *blockingStore) ReadOnly() bool { return false }

func (s *blockingStore) callsFromUpdate() int32 { return s.fromUpdate.Load() }

// updateCaller is a store or replayer double that counts the calls made to it from inside
// Model.Update (see insideUpdate). Any such call breaks invariant 10.
type updateCaller interface{ callsFromUpdate() int32 }

// insideUpdate reports whether its caller runs, at any depth, inside Model.Update on the
// same goroutine. A Cmd runs on a goroutine of its own (runCmds, bubbletea), so a store
// call from a Cmd never has Update on its stack; a call made by Update itself always does.
// This is exact, with no timing involved.
func insideUpdate() bool {
	pcs := make([]uintptr, 256)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	for {
		f, more := frames.Next()
		if strings.HasSuffix(f.Function, "/tui.(*Model).Update") {
			return true
		}
		if !more {
			return false
		}
	}
}

func countIfInsideUpdate(n *atomic.Int32) {
	if insideUpdate() {
		n.Add(1)
	}
}

// ioFromUpdate describes the calls the model's store and replayer got from inside Update,
// or is "" when there were none.
func ioFromUpdate(m *Model) string {
	var parts []string
	if c, ok := m.store.(updateCaller); ok {
		if n := c.callsFromUpdate(); n > 0 {
			parts = append(parts, fmt.Sprintf("called the Store %d times", n))
		}
	}
	if c, ok := m.opts.Replayer.(updateCaller); ok {
		if n := c.callsFromUpdate(); n > 0 {
			parts = append(parts, fmt.Sprintf("called Replayer.Replay %d times", n))
		}
	}
	return strings.Join(parts, " and ")
}

// runCmds runs a Cmd tree in goroutines, as bubbletea does, delivering messages to out.
func runCmds(cmd tea.Cmd, out chan<- tea.Msg) {
	if cmd == nil {
		return
	}
	go func() {
		msg := cmd()
		if b, ok := msg.(tea.BatchMsg); ok {
			for _, c := range b {
				runCmds(c, out)
			}
			return
		}
		out <- msg
	}()
}

// hangAfter is how long a test waits for something that must happen before it calls it a
// hang. It bounds waits for progress, never asserts speed: a loaded CI machine (2 cores,
// -race, GC) must not be able to reach it.
const hangAfter = 10 * time.Second

// checkedUpdate sends a message as bubbletea would and fails if Update did I/O (invariant
// 10). The proof is the doubles' counts of calls made from inside Update (exact, whatever
// the load); a blocking double called there would hang, which the watchdog reports after
// hangAfter instead of waiting for the test binary's timeout. Update's duration is not
// measured: how long it takes on a busy machine proves nothing.
func checkedUpdate(t *testing.T, m *Model, msg tea.Msg) tea.Cmd {
	t.Helper()
	done := make(chan tea.Cmd, 1)
	go func() {
		_, cmd := m.Update(msg)
		done <- cmd
	}()
	var cmd tea.Cmd
	select {
	case cmd = <-done:
	case <-time.After(hangAfter):
		t.Fatalf("Update(%T) has not returned after %v: it waits on something; from inside Update it %s",
			msg, hangAfter, cmp.Or(ioFromUpdate(m), "called no store or replayer double"))
	}
	if s := ioFromUpdate(m); s != "" {
		t.Fatalf("Update(%T) %s: it must only return Cmds that do", msg, s)
	}
	return cmd
}

// waitFor waits for a message of type T from out, skipping others.
func waitFor[T any](t *testing.T, out <-chan tea.Msg, d time.Duration) (T, bool) {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case msg := <-out:
			if v, ok := msg.(T); ok {
				return v, true
			}
		case <-deadline:
			var zero T
			return zero, false
		}
	}
}

// noPending reports whether out holds no message of type T now (it doesn't wait).
func noPending[T any](out chan tea.Msg) bool {
	for {
		select {
		case msg := <-out:
			if _, ok := msg.(T); ok {
				return false
			}
		default:
			return true
		}
	}
}

func TestInvariant10UpdateNeverBlocks(t *testing.T) {
	s := &blockingStore{gate: make(chan struct{}), wb: func() *model.Workbook { return testWorkbook(t) }}
	m := New(Options{Store: s, Now: fixedNow})
	defer m.life.cancel()
	// release lets one blocked store call answer.
	release := func() {
		t.Helper()
		select {
		case s.gate <- struct{}{}:
		case <-time.After(hangAfter):
			t.Fatal("no store call is waiting to be released")
		}
	}
	init := m.Init()
	checkedUpdate(t, m, tea.WindowSizeMsg{Width: 80, Height: 24})
	if n := s.loads.Load(); n != 0 {
		t.Fatalf("Init/Update called Store.Load %d times; only the returned Cmd may", n)
	}
	out := make(chan tea.Msg, 64)
	runCmds(init, out)
	if !testbed.Until(t, func() bool { return s.loads.Load() > 0 }) || s.loads.Load() != 1 {
		t.Fatalf("the Cmd returned by Init should call Store.Load once, got %d calls", s.loads.Load())
	}
	// The load is blocked in the store; the UI keeps answering.
	for _, k := range []string{"j", "r", "?", "esc"} {
		checkedUpdate(t, m, press(k))
	}
	if !noPending[loadedMsg](out) {
		t.Fatal("the load finished while the store was blocked")
	}
	release()
	msg, ok := waitFor[loadedMsg](t, out, hangAfter)
	if !ok {
		t.Fatal("no loadedMsg after the store answered")
	}
	checkedUpdate(t, m, msg)
	if !m.load.hasData {
		t.Fatal("workbook not installed")
	}

	writeNeverBlocks(t, m, s, out, release)
}

// writeNeverBlocks: a write, and a refresh asked for during it, reach the store only through
// returned Cmds.
func writeNeverBlocks(t *testing.T, m *Model, s *blockingStore, out chan tea.Msg, release func()) {
	// A write: Update returns a Cmd and doesn't touch the store.
	checkedUpdate(t, m, press("s"))
	cmd := checkedUpdate(t, m, press("4"))
	if s.applies.Load() != 0 {
		t.Fatal("Update called Store.Apply")
	}
	runCmds(cmd, out)
	if !testbed.Until(t, func() bool { return s.applies.Load() > 0 }) || s.applies.Load() != 1 {
		t.Fatalf("the returned Cmd should call Store.Apply once, got %d calls", s.applies.Load())
	}
	for _, k := range []string{"j", "k", "p", "enter", "esc", "r"} {
		checkedUpdate(t, m, press(k))
	}
	if !m.writes.writing {
		t.Error("the write should still be in flight")
	}
	if s.loads.Load() != 1 {
		t.Errorf("r during a write must only queue a refresh: %d loads", s.loads.Load())
	}
	release()
	applied, ok := waitFor[appliedMsg](t, out, hangAfter)
	if !ok {
		t.Fatal("no appliedMsg after the store answered")
	}
	cmd = checkedUpdate(t, m, applied)
	if m.writes.writing || len(m.writes.undo) != 1 {
		t.Errorf("write result not applied: writing=%v undo=%d", m.writes.writing, len(m.writes.undo))
	}
	// The refresh asked for during the write starts now, again only as a Cmd.
	if !m.load.loading || s.loads.Load() != 1 {
		t.Errorf("queued refresh: loading=%v loads=%d", m.load.loading, s.loads.Load())
	}
	runCmds(cmd, out)
	release()
	if msg, ok := waitFor[loadedMsg](t, out, hangAfter); !ok || msg.err != nil {
		t.Errorf("refresh after the write: %v %v", ok, msg.err)
	}
	if n := s.fromUpdate.Load(); n != 0 {
		t.Errorf("the store got %d calls from inside Update", n)
	}
}

// TestInsideUpdate: the check invariant 10 rests on can fail. A call made while Update runs
// (here the clock, which Update reads on a clockMsg) is counted; the same call from another
// goroutine, as a Cmd's would be, is not.
func TestInsideUpdate(t *testing.T) {
	var n atomic.Int32
	clock := func() time.Time { countIfInsideUpdate(&n); return testNow }
	m := newLoaded(t, testWorkbook(t), 80, 24, func(o *Options) { o.Now = clock })
	n.Store(0)
	countIfInsideUpdate(&n)
	if n.Load() != 0 {
		t.Fatal("the test goroutine is not inside Update")
	}
	send(m, clockMsg{})
	if n.Load() == 0 {
		t.Fatal("a call from inside Update was not counted")
	}
	n.Store(0)
	done := make(chan struct{})
	go func() { clock(); close(done) }()
	<-done
	if n.Load() != 0 {
		t.Fatal("a call from another goroutine was counted")
	}
}
