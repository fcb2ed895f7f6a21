package serve

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/triage-dev/triage/model"
)

// deadLetters are the fixture's failed_calls table and its records, as the TUI hands them.
func deadLetters(t *testing.T, f *fixture) (*model.Table, []*model.Record) {
	t.Helper()
	tb := f.hub.Cached().Workbook().TabNamed("failed_calls")
	recs := make([]*model.Record, len(tb.Records))
	for i := range tb.Records {
		recs[i] = &tb.Records[i]
	}
	return tb, recs
}

// Replays are an operator's to make: a triager's plan and run are refused with who and why, and
// nothing reaches the destination.
func TestReplayRefusesTriager(t *testing.T) {
	f := newFixture(t, time.Hour, 2)
	f.run(t)
	s := f.hub.Session(tom)
	defer s.Close()
	tb, recs := deadLetters(t, f)
	p := s.Replayer.Plan(tb, recs)
	if len(p.Calls) != 0 || len(p.Refused) != 2 || !strings.Contains(p.Refused[0].Reason, "tom is a triager: only an operator can replay dead letters") {
		t.Errorf("plan = %+v", p)
	}
	sum := s.Replayer.Replay(context.Background(), tb, recs, nil)
	if len(sum.Refused) != 2 || sum.Counts[model.StateRefused] != 2 || len(sum.Rows) != 0 {
		t.Errorf("summary = %+v", sum)
	}
	if n := len(f.rcv.Attempts()); n != 0 {
		t.Errorf("%d calls reached the destination", n)
	}
}

// One run per tab across sessions: while alice replays failed_calls, another operator's plan
// and run are refused naming alice and her progress; after it ends they may. The write-back
// records alice.
func TestReplayOneRunPerTab(t *testing.T) {
	f := newFixture(t, time.Hour, 2)
	f.run(t)
	a, b := f.hub.Session(alice), f.hub.Session(User{Name: "bob", Access: model.AccessOperator})
	defer a.Close()
	defer b.Close()
	tb, recs := deadLetters(t, f)
	done := replayHeld(t, f, a, tb, recs[:1]) // alice's call is in flight
	want := "alice is replaying failed_calls 0/1"
	if p := b.Replayer.Plan(tb, recs); len(p.Calls) != 0 || len(p.Refused) != 2 || !strings.Contains(p.Refused[0].Reason, want) {
		t.Errorf("bob's plan during alice's run = %+v", p)
	}
	sum := b.Replayer.Replay(context.Background(), tb, recs[1:], nil)
	if len(sum.Refused) != 1 || !strings.Contains(sum.Refused[0].Reason, want) {
		t.Errorf("bob's run during alice's = %+v", sum)
	}
	f.gate.Release()
	if sum := <-done; sum.Counts[model.StateDelivered] != 1 {
		t.Fatalf("alice's run: %+v", sum)
	}
	if got := f.cell("failed_calls", 7, "k-1", 10); got != "alice" {
		t.Errorf("the write-back's triaged_by = %q, want alice", got)
	}
	if n := len(f.rcv.Attempts()); n != 1 {
		t.Errorf("%d calls reached the destination, want alice's 1", n)
	}
	if p := b.Replayer.Plan(tb, recs[1:]); len(p.Calls) != 1 {
		t.Errorf("bob's plan after alice's run = %+v", p)
	}
	// Everyone was pushed the outcome alice's run wrote back.
	var got *model.Table
	for got == nil || got.Records[got.Index("k-1")].Status != "delivered" {
		got = next(t, b.Updates).Workbook().TabNamed("failed_calls")
	}
}
