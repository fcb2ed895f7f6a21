package serve

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/tui"
)

// open starts u's session on the hub with the real TUI over it, 120x40, and waits for the
// spreadsheet's title.
func open(t *testing.T, f *fixture, u User) *testbed.Program {
	t.Helper()
	s := f.hub.Session(u)
	t.Cleanup(s.Close)
	p := testbed.StartProgram(t, tui.New(s.Options(tui.Options{SpreadsheetID: sheetID, Remote: true})), 120, 40)
	p.WaitScreen(t, "Acme Support")
	return p
}

// replayHeld starts s's replay of recs with the destination's gate shut and returns once its
// first call is at the gate; the run's summary comes on the channel after the gate opens.
func replayHeld(t *testing.T, f *fixture, s *Session, tb *model.Table, recs []*model.Record) <-chan model.ReplaySummary {
	t.Helper()
	f.gate.Hold()
	done := make(chan model.ReplaySummary, 1)
	go func() { done <- s.Replayer.Replay(context.Background(), tb, recs, nil) }()
	arrived(t, f, 1)
	return done
}

// arrived waits for n calls to reach the gate.
func arrived(t *testing.T, f *fixture, n int) {
	t.Helper()
	for range n {
		select {
		case <-f.gate.Arrived():
		case <-t.Context().Done():
			t.Fatal("the replay's call never reached the destination")
		}
	}
}

// Replays across sessions, through the hub and real TUIs: alice (operator) replays four dead
// letters one at a time, held at the destination's door. bob (operator) is told it started,
// is refused a replay of his own with how to watch, opens the progress and sees alice's
// counts as calls are let through; carol (triager) watches but may not cancel; bob cancels
// after a confirm naming alice: nothing new is sent, the call in flight is written back, and
// every view ends on the same report naming who cancelled.
func TestWatchAndCancelAnotherPersonsReplay(t *testing.T) {
	f := newFixtureDL(t, time.Hour, 2, 4, 1)
	f.run(t)
	bobU := User{Name: "bob", Access: model.AccessOperator, Key: "SHA256:bob"}
	carolU := User{Name: "carol", Access: model.AccessTriager, Key: "SHA256:carol"}
	a, b, c := open(t, f, alice), open(t, f, bobU), open(t, f, carolU)
	f.gate.Hold()
	defer f.gate.Release()

	a.Keys("2", "A")
	a.WaitScreen(t, "Replay 4 calls")
	a.Keys("y")
	arrived(t, f, 1)
	a.WaitScreen(t, "Replaying 4 calls to crm", "0/4 0%")

	b.WaitScreen(t, "alice started replaying failed_calls (P shows it)")
	b.WaitScreen(t, "alice is replaying 0/4 · P shows it")
	b.Keys("2", "R")
	b.WaitScreen(t, "alice is replaying failed_calls 0/4 · P shows it; try again when it ends")

	b.Keys("P")
	b.WaitScreen(t, "alice's replay of failed_calls · Replaying 4 calls to crm", "0/4 0%", "1 sending · 3 queued")
	f.gate.Let(1) // the first call lands; the second comes to the door
	arrived(t, f, 1)
	a.WaitScreen(t, "1/4 25%", "1 delivered · 1 sending · 2 queued")
	b.WaitScreen(t, "1/4 25%", "1 delivered · 1 sending · 2 queued")

	c.WaitScreen(t, "alice is replaying 1/4")
	c.Keys("P")
	scr := c.WaitScreen(t, "alice's replay of failed_calls", "1/4 25%", "1 delivered · 1 sending · 2 queued")
	if strings.Contains(scr, "cancel alice's run") {
		t.Errorf("a triager is offered to cancel alice's run:\n%s", scr)
	}
	if scr := b.WaitScreen(t, "alice's replay of failed_calls"); !strings.Contains(scr, "x cancel alice's run") {
		t.Errorf("an operator isn't offered to cancel alice's run:\n%s", scr)
	}
	c.Keys("x")
	c.WaitScreen(t, "carol is a triager: only an operator can cancel alice's replay of failed_calls")
	if strings.Contains(f.log.String(), "replay cancelled") {
		t.Fatalf("carol's cancel reached the run:\n%s", f.log.String())
	}

	b.Keys("x")
	b.WaitScreen(t, "Cancel alice's replay of failed_calls (1/4)?")
	b.Keys("y")
	a.WaitScreen(t, "bob cancelled your replay")
	a.WaitScreen(t, "Cancelling by bob…")
	f.gate.Let(1) // the call in flight finishes and is written back; nothing new starts
	for _, p := range []*testbed.Program{a, b, c} {
		p.WaitScreen(t, "Replay cancelled by bob · 2/4 calls", "Cancelled by bob: rows not sent stay as they were.", "2 delivered · 2 not-attempted")
	}
	b.WaitScreen(t, "alice's replay of failed_calls · Replay cancelled by bob")
	// The run has ended (every screen shows its summary): Run returned after its last call,
	// so what reached the destination is all that ever will.
	if n := len(f.rcv.Attempts()); n != 2 {
		t.Errorf("%d calls reached the destination, want the 2 started before the cancel", n)
	}
	delivered := 0
	for i := 1; i <= 4; i++ {
		id := "k-" + string(rune('0'+i))
		switch st := f.cell("failed_calls", 7, id, 8); st {
		case "delivered":
			delivered++
			if by := f.cell("failed_calls", 7, id, 10); by != "alice" {
				t.Errorf("%s written back by %q, want alice", id, by)
			}
		case "dead":
		default:
			t.Errorf("%s is %q", id, st)
		}
	}
	if delivered != 2 {
		t.Errorf("%d rows written back delivered, want 2", delivered)
	}
	log := f.log.String()
	if !strings.Contains(log, "replay cancelled") || !strings.Contains(log, "who=bob") || !strings.Contains(log, "whose=alice") || !strings.Contains(log, "cancelled_by=bob") {
		t.Errorf("the cancel isn't logged with who cancelled whose run:\n%s", log)
	}
}

// A watcher who never reads, and a session that never takes its notices, don't hold the run
// up; the watcher's backlog is one entry per row, and it still gets the final report.
func TestSlowWatcherDoesntBlockTheRun(t *testing.T) {
	f := newFixtureDL(t, time.Hour, 2, 6, 0)
	f.run(t)
	a, d := f.hub.Session(alice), f.hub.Session(User{Name: "dave", Access: model.AccessViewer})
	defer a.Close()
	defer d.Close()
	tb, recs := deadLetters(t, f)
	done := replayHeld(t, f, a, tb, recs)
	w, ok := d.Replayer.(tui.SharedRuns).Watch("failed_calls")
	if !ok {
		t.Fatal("no run to watch")
	}
	defer w.Close()
	if info := w.Info(); info.Who != "alice" || info.Mine || info.Total != 6 || len(w.Plan().Calls) != 6 {
		t.Errorf("watch of %+v, %d calls", info, len(w.Plan().Calls))
	}
	f.gate.Release()
	var sum model.ReplaySummary
	select {
	case sum = <-done:
	case <-t.Context().Done():
		t.Fatal("a watcher who never reads held the run up")
	}
	if sum.Counts[model.StateDelivered] != 6 {
		t.Fatalf("run: %+v", sum)
	}
	events, end := w.Next()
	if end == nil || end.Counts[model.StateDelivered] != 6 {
		t.Fatalf("the watcher's report = %+v", end)
	}
	rows := 0
	for _, ev := range events {
		if ev.Row.ID != "" {
			rows++
			if ev.Row.State != model.StateDelivered {
				t.Errorf("row %s's newest state = %s", ev.Row.ID, ev.Row.State)
			}
		}
	}
	if rows != 6 {
		t.Errorf("the backlog held %d row entries, want one per row (6)", rows)
	}
	if why := w.CancelRefusal(); why != "dave is a viewer: only an operator can cancel another person's replay" {
		t.Errorf("a viewer's cancel refusal = %q", why)
	}
	if err := w.Cancel(); err == nil {
		t.Error("a viewer's cancel was accepted")
	}
}
