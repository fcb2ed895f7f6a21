package tui

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/replay"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
)

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

// A write that fails to reach the sheet turns the header's connection state to an error, as a
// failed load does (it used to keep "● ok" until a refresh); a good load turns it back.
func TestFailedWriteTurnsHeaderToError(t *testing.T) {
	emu := emulator.New()
	emu.AddWorkbook(e2eWorkbook())
	var down atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			// The network dies under the request: the client sees a dropped connection.
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		emu.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	store := e2eStore(t, srv.URL, "e2e-sheet", func(o *sheets.Options) { o.Retry = sheets.RetryPolicy{MaxAttempts: 2, Base: time.Millisecond} })
	tm := teatest.NewTestModel(t, probed{New(Options{Store: store, SpreadsheetID: "e2e-sheet"})}, testbed.TermOptions(80, 24)...)
	waitScreen(t, tm, "Acme Support", "● ok")
	down.Store(true)
	tm.Send(press("s"))
	waitScreen(t, tm, "Set status of")
	tm.Send(press("4"))
	waitScreen(t, tm, "write failed", "✗ error")
	down.Store(false)
	tm.Send(press("r"))
	waitModel(t, tm, "the header back to ok after a good load", func(m *Model) bool {
		return !m.load.loading && strings.Contains(headerRight(m), "● ok")
	})
	tm.Send(press("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(hangAfter))
}

// u on another tab never undoes unseen: it asks, naming the tab, the row and what it goes back
// to; confirmed, the sheet holds the old value again and the toast names the tab.
func TestUndoAcrossTabsNamesTabAndRows(t *testing.T) {
	emu := emulator.New()
	emu.AddWorkbook(e2eWorkbook())
	tm := startE2E(t, emu)
	// The cursor row is the newest: id-7 (new). Set it to done.
	tm.Send(press("s"))
	waitScreen(t, tm, "Set status of")
	tm.Send(press("4"))
	waitStatuses(t, emu, map[string]string{"id-7": "done"}, false)
	// The sheet holds it; the change is undoable once its result is in the TUI.
	waitModel(t, tm, "the write's result", func(m *Model) bool { return !m.writes.writing && len(m.writes.undo) == 1 })
	tm.Send(press("3")) // Jobs
	waitScreen(t, tm, "job-1")
	tm.Send(press("u"))
	waitScreen(t, tm, "Undo the last change, made on the Inbox tab (1 row)?", "Person 7: status back to new", "[y/N]")
	if got := statusOf(t, emu, "id-7"); got != "done" {
		t.Fatalf("asking must not undo: id-7 is %q", got)
	}
	tm.Send(press("y"))
	waitStatuses(t, emu, map[string]string{"id-7": "new"}, false)
	waitScreen(t, tm, "undone on Inbox: 1 row restored (status back to new)")
	tm.Send(press("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(hangAfter))
}

// statusOf is the Inbox status cell of the row with id, in the emulator.
func statusOf(t *testing.T, emu *emulator.Emulator, id string) string {
	t.Helper()
	for _, row := range emu.Cells("e2e-sheet", "Inbox") {
		if len(row) > 5 && model.CellString(row[5]) == id {
			return model.CellString(row[4])
		}
	}
	t.Fatalf("no row %s", id)
	return ""
}
