package tui

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/triage-dev/triage/model"
)

// blockingStore is a test double whose Load and Apply block until the test lets one call
// through. It exists only to prove invariant 10: Update never calls the store, and the Cmds
// it returns are where the blocking happens.
type blockingStore struct {
	gate    chan struct{}
	wb      func() *model.Workbook
	loads   atomic.Int32
	applies atomic.Int32
}

func (s *blockingStore) Load(ctx context.Context) (*model.Workbook, error) {
	s.loads.Add(1)
	select {
	case <-s.gate:
		return s.wb(), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (s *blockingStore) Apply(ctx context.Context, edits []model.Edit) (model.ApplyResult, error) {
	s.applies.Add(1)
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

// timedUpdate sends a message and fails if Update takes long: it must never wait on I/O.
func timedUpdate(t *testing.T, m *Model, msg tea.Msg) tea.Cmd {
	t.Helper()
	start := time.Now()
	_, cmd := m.Update(msg)
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Errorf("Update(%T) took %v: it must not block", msg, d)
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

func TestInvariant10UpdateNeverBlocks(t *testing.T) {
	s := &blockingStore{gate: make(chan struct{}), wb: func() *model.Workbook { return testWorkbook(t) }}
	m := New(Options{Store: s, Now: fixedNow})
	defer m.cancel()
	init := m.Init()
	timedUpdate(t, m, tea.WindowSizeMsg{Width: 80, Height: 24})
	if n := s.loads.Load(); n != 0 {
		t.Fatalf("Init/Update called Store.Load %d times; only the returned Cmd may", n)
	}
	out := make(chan tea.Msg, 64)
	runCmds(init, out)
	deadline := time.Now().Add(2 * time.Second)
	for s.loads.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if s.loads.Load() != 1 {
		t.Fatal("the Cmd returned by Init should call Store.Load")
	}
	// The load is blocked in the store; the UI keeps answering.
	for _, k := range []string{"j", "r", "?", "esc"} {
		timedUpdate(t, m, press(k))
	}
	if _, early := waitFor[loadedMsg](t, out, 50*time.Millisecond); early {
		t.Fatal("the load finished while the store was blocked")
	}
	s.gate <- struct{}{}
	msg, ok := waitFor[loadedMsg](t, out, 2*time.Second)
	if !ok {
		t.Fatal("no loadedMsg after the store answered")
	}
	timedUpdate(t, m, msg)
	if !m.hasData {
		t.Fatal("workbook not installed")
	}

	// A write: Update returns a Cmd and doesn't touch the store.
	timedUpdate(t, m, press("s"))
	cmd := timedUpdate(t, m, press("4"))
	if s.applies.Load() != 0 {
		t.Fatal("Update called Store.Apply")
	}
	runCmds(cmd, out)
	for s.applies.Load() == 0 && time.Now().Before(deadline.Add(2*time.Second)) {
		time.Sleep(time.Millisecond)
	}
	if s.applies.Load() != 1 {
		t.Fatal("the returned Cmd should call Store.Apply")
	}
	for _, k := range []string{"j", "k", "p", "enter", "esc", "r"} {
		timedUpdate(t, m, press(k))
	}
	if !m.writing {
		t.Error("the write should still be in flight")
	}
	s.gate <- struct{}{}
	applied, ok := waitFor[appliedMsg](t, out, 2*time.Second)
	if !ok {
		t.Fatal("no appliedMsg after the store answered")
	}
	cmd = timedUpdate(t, m, applied)
	if m.writing || len(m.undo) != 1 {
		t.Errorf("write result not applied: writing=%v undo=%d", m.writing, len(m.undo))
	}
	// The refresh asked for during the write starts now, again only as a Cmd.
	if !m.loading || s.loads.Load() != 1 {
		t.Errorf("queued refresh: loading=%v loads=%d", m.loading, s.loads.Load())
	}
	runCmds(cmd, out)
	s.gate <- struct{}{}
	if msg, ok := waitFor[loadedMsg](t, out, 2*time.Second); !ok || msg.err != nil {
		t.Errorf("refresh after the write: %v %v", ok, msg.err)
	}
}
