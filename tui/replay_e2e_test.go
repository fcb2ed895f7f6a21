package tui

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/replay"
	"github.com/triage-dev/triage/replay/receiver"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
)

// replayFixture is a dead-letter tab on the Sheets emulator behind a real sheets.Store, and a
// receiver.Receiver behind a real HTTP server as the destination of its rows.
type replayFixture struct {
	emu   *emulator.Emulator
	store *sheets.Store
	rcv   *receiver.Receiver
	url   string
	// gate holds the calls on their way to the receiver while a test wants them in flight.
	gate *testbed.Gate
}

const replaySheet = "replay-sheet"

var dlHeader = []any{"timestamp", "source", "url", "payload", "error", "attempts", "method", "key", "status", "replayed_at"}

func newReplayFixture(t *testing.T, source string, n int) *replayFixture {
	t.Helper()
	rcv := receiver.New()
	gate := testbed.NewGate()
	dst := testbed.Serve(t, gate.Wrap(rcv))
	rows := [][]any{dlHeader}
	for i := 1; i <= n; i++ {
		rows = append(rows, []any{
			fmt.Sprintf("2025-05-%02dT09:00:00Z", 10+i), source, dst.URL + "/hook",
			fmt.Sprintf(`{"id":"k-%d","n":%d}`, i, i), "503", "1", "POST", fmt.Sprintf("k-%d", i), "dead", nil,
		})
	}
	sh := testbed.NewSheets(t, &emulator.Workbook{SpreadsheetID: replaySheet, Title: "Replay desk", Sheets: []*emulator.Sheet{
		{Title: "failed_calls", SheetID: 77, Rows: rows},
	}})
	st := sh.Store(sheets.Options{SpreadsheetID: replaySheet})
	return &replayFixture{emu: sh.Emu, store: st, rcv: rcv, url: dst.URL, gate: gate}
}

// cells returns each row's cells by key.
func (f *replayFixture) cells() map[string][]string {
	out := map[string][]string{}
	for _, row := range f.emu.Cells(replaySheet, "failed_calls")[1:] {
		cells := make([]string, len(dlHeader))
		for i := range cells {
			if i < len(row) {
				cells[i] = model.CellString(row[i])
			}
		}
		out[cells[7]] = cells
	}
	return out
}

// startReplayTUI runs the TUI over the production wiring: replay.Runner (replay.Run) is its
// Replayer as it is, with a fast backoff.
func startReplayTUI(t *testing.T, f *replayFixture, src *replay.Source, env map[string]string) *teatest.TestModel {
	t.Helper()
	client := &replay.Client{Sources: map[string]*replay.Source{src.Name: src}, Getenv: func(k string) string { return env[k] },
		Base: time.Millisecond, Cap: 10 * time.Millisecond}
	m := New(Options{Store: f.store, SpreadsheetID: replaySheet, Replayer: &replay.Runner{Client: client, Store: f.store}})
	return teatest.NewTestModel(t, probed{m}, testbed.TermOptions(100, 30)...)
}

// probed wraps the model under a teatest program so a test can look at it from inside
// Update, on the program's goroutine (no data race), instead of matching the output stream,
// which the cell-diffing renderer sends as fragments: waitScreen and waitModel read the
// whole screen (m.View().Content) or any state, whatever bytes were actually sent.
//
// It also keeps toasts from expiring. Their expiry is a wall-clock tick (4 s for an info
// toast), so a test waiting for a toast on a loaded machine could otherwise miss it;
// expiry itself is unit-tested with the message (TestToastsExpire).
type probed struct{ *Model }

type probeMsg struct {
	f    func(*Model)
	done chan struct{}
}

func (p probed) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case probeMsg:
		msg.f(p.Model)
		close(msg.done)
		return p, nil
	case toastExpiredMsg:
		return p, nil
	}
	_, cmd := p.Model.Update(msg)
	return p, cmd
}

// probe runs f inside the program and reports whether it ran within hangAfter. Until done is
// closed f may still run, so the caller must not read what f writes unless it returns true.
func probe(tm *teatest.TestModel, f func(*Model)) bool {
	done := make(chan struct{})
	tm.Send(probeMsg{f: f, done: done})
	select {
	case <-done:
		return true
	case <-time.After(hangAfter):
		return false
	}
}

// waitModel polls cond inside the program until it holds (or hangAfter passes: the program
// is stuck or has quit).
func waitModel(t *testing.T, tm *teatest.TestModel, what string, cond func(*Model) bool) {
	t.Helper()
	deadline := time.Now().Add(hangAfter)
	for {
		ok := false
		if !probe(tm, func(m *Model) { ok = cond(m) }) {
			t.Fatalf("timed out waiting for %s: the program doesn't answer (did it quit?)", what)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond) // poll interval, not an ordering assumption
	}
	var screen string
	last := "(the program doesn't answer)"
	if probe(tm, func(m *Model) { screen = ansi.Strip(m.View().Content) }) {
		last = screen
	}
	t.Fatalf("timed out after %v waiting for %s; the screen:\n%s", hangAfter, what, last)
}

// waitScreen waits until the model's whole screen shows every string.
func waitScreen(t *testing.T, tm *teatest.TestModel, what ...string) {
	t.Helper()
	waitModel(t, tm, fmt.Sprintf("%q on screen", what), func(m *Model) bool {
		s := ansi.Strip(m.View().Content)
		for _, w := range what {
			if !strings.Contains(s, w) {
				return false
			}
		}
		return true
	})
}

func finalModel(t *testing.T, tm *teatest.TestModel) *Model {
	t.Helper()
	return tm.FinalModel(t, teatest.WithFinalTimeout(hangAfter)).(probed).Model
}

// TestReplayInTheTUI replays three marked rows through real HTTP to a receiver, sees them in
// flight and done in the progress view, and finds the outcomes written back to the emulated
// sheet (and only for those rows) and shown in the reloaded table.
func TestReplayInTheTUI(t *testing.T) {
	f := newReplayFixture(t, "crm", 5)
	f.gate.Hold() // the calls wait at the receiver's door until the test has seen them in flight
	defer f.gate.Release()
	before := f.cells()
	src := &replay.Source{Name: "crm", URLPrefixes: []string{f.url + "/"}, Headers: map[string]string{"Authorization": "env:CRM_TOKEN"}}
	tm := startReplayTUI(t, f, src, map[string]string{"CRM_TOKEN": "s3cret"})
	waitScreen(t, tm, "Replay desk")

	// Newest first: k-5, k-4, k-3 are the first three rows.
	tm.Send(press("space"))
	tm.Send(press("space"))
	tm.Send(press("space"))
	tm.Send(press("R"))
	waitScreen(t, tm, "Replay 3 calls to 1 source (crm)", f.url+"/", "[y/N]")
	tm.Send(press("d"))
	waitScreen(t, tm, "Would send 3 calls", "key k-5", "Authorization: env:CRM_TOKEN")
	tm.Send(press("y"))
	waitScreen(t, tm, "sending")
	waitModel(t, tm, "rows in flight", func(m *Model) bool { return m.replay.run != nil && m.replay.run.prog.Counts["sending"] > 0 })
	if n := len(f.rcv.Attempts()); n != 0 {
		t.Errorf("%d calls reached the receiver while the gate held them", n)
	}
	f.gate.Release()
	waitScreen(t, tm, "Replay finished", "3 delivered")
	tm.Send(press("esc"))
	waitScreen(t, tm, "reloaded: the rows show the statuses the replay wrote back")
	tm.Send(press("q"))
	fm := finalModel(t, tm)

	after := f.cells()
	for _, k := range []string{"k-3", "k-4", "k-5"} {
		c := after[k]
		if c[8] != "delivered" || c[5] != "2" || c[9] == "" {
			t.Errorf("%s written back as status %q attempts %q replayed_at %q, want delivered, 2, a time", k, c[8], c[5], c[9])
		}
		if n := f.rcv.Effects()[k]; n != 1 {
			t.Errorf("%s acted %d times, want once", k, n)
		}
	}
	for _, k := range []string{"k-1", "k-2"} {
		if strings.Join(after[k], "|") != strings.Join(before[k], "|") {
			t.Errorf("unmarked row %s changed: %v → %v", k, before[k], after[k])
		}
		if f.rcv.Effects()[k] != 0 {
			t.Errorf("unmarked row %s was sent", k)
		}
	}
	for _, a := range f.rcv.Attempts() {
		if a.Headers.Get("Idempotency-Key") != a.Key || a.Headers.Get("Authorization") != "s3cret" {
			t.Errorf("attempt %s carries key %q and auth %q", a.Key, a.Headers.Get("Idempotency-Key"), a.Headers.Get("Authorization"))
		}
	}
	// The table reloaded after the run: it shows the written-back statuses, and no marks
	// remain on the delivered rows.
	ts := fm.tabs.named("failed_calls")
	if ts == nil || ts.data == nil {
		t.Fatal("no failed_calls tab")
	}
	if got := ts.data.counts["delivered"]; got != 3 {
		t.Errorf("reloaded table counts %d delivered, want 3", got)
	}
	if ts.nMarked != 0 {
		t.Errorf("%d marks left on delivered rows", ts.nMarked)
	}
	if !strings.Contains(ansi.Strip(fm.View().Content), "delivered") {
		t.Errorf("final view shows the delivered rows:\n%s", ansi.Strip(fm.View().Content))
	}
}

// TestReplayHaltBanner: the receiver answers 401, the run halts, and the final view carries a
// loud banner naming the cause and the fix, even after the progress view is closed.
func TestReplayHaltBanner(t *testing.T) {
	f := newReplayFixture(t, "billing", 3)
	f.rcv.Default = receiver.Fault{Mode: receiver.Unauthorized}
	src := &replay.Source{Name: "billing", URLPrefixes: []string{f.url + "/"}, Headers: map[string]string{"Authorization": "env:DEMO_BILLING_TOKEN"}}
	tm := startReplayTUI(t, f, src, map[string]string{"DEMO_BILLING_TOKEN": "wrong"})
	waitScreen(t, tm, "Replay desk")
	tm.Send(press("A"))
	waitScreen(t, tm, "Replay 3 calls to 1 source (billing)", "All 3 rows of the tab.")
	tm.Send(press("y"))
	waitScreen(t, tm, "Replay halted")
	tm.Send(press("esc")) // back to the table: the banner stays
	tm.Send(press("q"))
	fm := finalModel(t, tm)
	out := ansi.Strip(fm.View().Content)
	want := "!! HALTED: systemic — 401 from billing: check the DEMO_BILLING_TOKEN secret"
	if !strings.Contains(out, want) {
		t.Errorf("final view lacks the halt banner %q:\n%s", want, out)
	}
	if fm.replay.showRun {
		t.Error("esc closed the progress view")
	}
	// Loud: it has its own colors (and the NO_COLOR golden shows it readable without).
	for _, l := range strings.Split(fm.View().Content, "\n") {
		if strings.Contains(l, "HALTED") && !strings.Contains(l, "\x1b[") {
			t.Errorf("the banner line is not styled: %q", l)
		}
	}
	for k, c := range f.cells() {
		if c[8] != "dead" {
			t.Errorf("%s: a 401 is systemic, not about the row: status must stay dead, got %q", k, c[8])
		}
	}
	if n := len(f.rcv.Effects()); n != 0 {
		t.Errorf("a 401 acts on nothing, got %d effects", n)
	}
	if !bytes.Contains([]byte(out), []byte("esc dismisses")) {
		t.Error("the banner says how to dismiss it")
	}
}

// expiring is probed with toasts that do expire (probed keeps them so a slow machine can't
// miss one): for the tests about a toast going away.
type expiring struct{ probed }

func (e expiring) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if _, ok := msg.(toastExpiredMsg); ok {
		_, cmd := e.Model.Update(msg)
		return e, cmd
	}
	_, cmd := e.probed.Update(msg)
	return e, cmd
}

// Cancelling a replay with ctrl+c says so in a toast, and that toast goes away in its time
// like any other: it used to stay in the footer for good, on every view, because the command
// that expires it was dropped.
func TestCtrlCCancelToastExpires(t *testing.T) {
	f := newReplayFixture(t, "crm", 4)
	f.gate.Hold()
	defer f.gate.Release()
	client := &replay.Client{Sources: map[string]*replay.Source{"crm": {Name: "crm", URLPrefixes: []string{f.url + "/"}}},
		Base: time.Millisecond, Cap: 10 * time.Millisecond}
	m := New(Options{Store: f.store, SpreadsheetID: replaySheet, Replayer: &replay.Runner{Client: client, Store: f.store, Concurrency: 1}})
	m.toasts.scale = 0.02 // info 80 ms, error 300 ms
	tm := teatest.NewTestModel(t, expiring{probed{m}}, testbed.TermOptions(100, 30)...)
	waitScreen(t, tm, "Replay desk")
	tm.Send(press("A"))
	waitScreen(t, tm, "Replay 4 calls")
	tm.Send(press("y"))
	waitModel(t, tm, "a call in flight", func(m *Model) bool { return m.replay.running() && m.replay.run.prog.Counts[model.StateSending] > 0 })
	tm.Send(press("ctrl+c"))
	waitModel(t, tm, "the cancel toast", func(m *Model) bool {
		return m.replay.run.cancelling && strings.Contains(toastTexts(m), "cancelling")
	})
	// The call in flight is still held: the run is still cancelling, and the toast is gone.
	waitModel(t, tm, "the footer clear of the cancel toast while the run still cancels", func(m *Model) bool {
		return m.replay.running() && len(m.toasts.items) == 0
	})
	f.gate.Release()
	waitScreen(t, tm, "Replay cancelled")
	waitModel(t, tm, "the footer clear after the run", func(m *Model) bool {
		return !strings.Contains(toastTexts(m), "cancelling") && !strings.Contains(m.footerLines(m.c.width)[0], "cancelling")
	})
	tm.Send(press("q"))
	tm.Send(press("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(hangAfter))
}
