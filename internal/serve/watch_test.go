package serve

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/tui"
)

// waitFor bounds every wait of these tests.
const waitFor = 10 * time.Second

// screenProbe asks a running TUI for its screen, as text.
type screenProbe struct{ out chan string }

// probedTUI is a session's TUI that answers screenProbe from inside its program.
type probedTUI struct{ m *tui.Model }

func (p probedTUI) Init() tea.Cmd { return p.m.Init() }

func (p probedTUI) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if sp, ok := msg.(screenProbe); ok {
		sp.out <- ansi.Strip(p.m.View().Content)
		return p, nil
	}
	_, cmd := p.m.Update(msg)
	return p, cmd
}

func (p probedTUI) View() tea.View { return p.m.View() }

// person is someone's session on the hub with the real TUI over it, 120x40.
type person struct {
	name string
	tm   *teatest.TestModel
}

func open(t *testing.T, f *fixture, u User) *person {
	t.Helper()
	s := f.hub.Session(u)
	t.Cleanup(s.Close)
	tm := teatest.NewTestModel(t, probedTUI{tui.New(s.Options(tui.Options{SpreadsheetID: sheetID, Remote: true}))},
		teatest.WithInitialTermSize(120, 40),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.TrueColor), tea.WithEnvironment([]string{"TERM=xterm-256color"})))
	p := &person{name: u.Name, tm: tm}
	p.wait(t, "Acme Support")
	return p
}

// screen is the person's screen now.
func (p *person) screen(t *testing.T) string {
	t.Helper()
	out := make(chan string, 1)
	p.tm.Send(screenProbe{out: out})
	select {
	case s := <-out:
		return s
	case <-time.After(waitFor):
		t.Fatalf("%s's program doesn't answer", p.name)
	}
	return ""
}

// wait waits until every one of want is on the person's screen, and returns it.
func (p *person) wait(t *testing.T, want ...string) string {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		s := p.screen(t)
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains(s, w)
		}
		if ok {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s's screen never showed %q:\n%s", p.name, want, s)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (p *person) keys(ks ...string) {
	for _, k := range ks {
		r := []rune(k)
		p.tm.Send(tea.KeyPressMsg{Code: r[0], Text: k})
	}
}

// arrived waits for n calls to reach the gate.
func arrived(t *testing.T, f *fixture, n int) {
	t.Helper()
	for range n {
		select {
		case <-f.gate.in:
		case <-time.After(waitFor):
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
	f.gate.hold()
	defer f.gate.release()

	a.keys("2", "A")
	a.wait(t, "Replay 4 calls")
	a.keys("y")
	arrived(t, f, 1)
	a.wait(t, "Replaying 4 calls to crm", "0/4 0%")

	b.wait(t, "alice started replaying failed_calls (P shows it)")
	b.wait(t, "alice is replaying 0/4 · P shows it")
	b.keys("2", "R")
	b.wait(t, "alice is replaying failed_calls 0/4 · P shows it; try again when it ends")

	b.keys("P")
	b.wait(t, "alice's replay of failed_calls · Replaying 4 calls to crm", "0/4 0%", "1 sending · 3 queued")
	f.gate.let(1) // the first call lands; the second comes to the door
	arrived(t, f, 1)
	a.wait(t, "1/4 25%", "1 delivered · 1 sending · 2 queued")
	b.wait(t, "1/4 25%", "1 delivered · 1 sending · 2 queued")

	c.wait(t, "alice is replaying 1/4")
	c.keys("P")
	scr := c.wait(t, "alice's replay of failed_calls", "1/4 25%", "1 delivered · 1 sending · 2 queued")
	if strings.Contains(scr, "cancel alice's run") {
		t.Errorf("a triager is offered to cancel alice's run:\n%s", scr)
	}
	if scr := b.wait(t, "alice's replay of failed_calls"); !strings.Contains(scr, "x cancel alice's run") {
		t.Errorf("an operator isn't offered to cancel alice's run:\n%s", scr)
	}
	c.keys("x")
	c.wait(t, "carol is a triager: only an operator can cancel alice's replay of failed_calls")
	if strings.Contains(f.log.String(), "replay cancelled") {
		t.Fatalf("carol's cancel reached the run:\n%s", f.log.String())
	}

	b.keys("x")
	b.wait(t, "Cancel alice's replay of failed_calls (1/4)?")
	b.keys("y")
	a.wait(t, "bob cancelled your replay")
	a.wait(t, "Cancelling by bob…")
	f.gate.let(1) // the call in flight finishes and is written back; nothing new starts
	for _, p := range []*person{a, b, c} {
		p.wait(t, "Replay cancelled by bob · 2/4 calls", "Cancelled by bob: rows not sent stay as they were.", "2 delivered · 2 not-attempted")
	}
	b.wait(t, "alice's replay of failed_calls · Replay cancelled by bob")
	time.Sleep(50 * time.Millisecond) // a third call would have reached the door by now
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
	f.gate.hold()
	done := make(chan model.ReplaySummary, 1)
	go func() { done <- a.Replayer.Replay(context.Background(), tb, recs, nil) }()
	arrived(t, f, 1)
	w, ok := d.Replayer.(tui.SharedRuns).Watch("failed_calls")
	if !ok {
		t.Fatal("no run to watch")
	}
	defer w.Close()
	if info := w.Info(); info.Who != "alice" || info.Mine || info.Total != 6 || len(w.Plan().Calls) != 6 {
		t.Errorf("watch of %+v, %d calls", info, len(w.Plan().Calls))
	}
	f.gate.release()
	var sum model.ReplaySummary
	select {
	case sum = <-done:
	case <-time.After(waitFor):
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
