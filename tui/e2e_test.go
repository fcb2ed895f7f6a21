package tui

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
	"google.golang.org/api/option"
	sheetsapi "google.golang.org/api/sheets/v4"
)

// e2eWorkbook is the emulator's spreadsheet: an Inbox with a hidden ID column and a Status
// dropdown, and the two other tabs.
func e2eWorkbook() *emulator.Workbook {
	rows := [][]any{{"Timestamp", "Name", "Email", "Message", "Status", "ID"}}
	statuses := []string{"new", "read", "new", "", "done", "new", "spam", "new"}
	for i, st := range statuses {
		rows = append(rows, []any{
			fmt.Sprintf("2025-05-%02dT09:00:00Z", 10+i),
			fmt.Sprintf("Person %d", i),
			fmt.Sprintf("p%d@example.com", i),
			fmt.Sprintf("Message number %d", i),
			st,
			fmt.Sprintf("id-%d", i),
		})
	}
	return &emulator.Workbook{
		SpreadsheetID: "e2e-sheet",
		Title:         "Acme Support",
		Sheets: []*emulator.Sheet{
			{Title: "Inbox", Hidden: []int{5}, Validations: map[string][]string{"E": {"new", "read", "replied", "done", "spam"}}, Rows: rows},
			{Title: "failed_calls", Rows: [][]any{
				{"timestamp", "source", "url", "payload", "error", "attempts", "method", "key", "status", "replayed_at"},
				{"2025-05-31T10:00:00Z", "crm", "https://crm.example/api", `{"id":"k-1"}`, "503", "3", "POST", "k-1", "dead", ""},
			}},
			{Title: "Jobs", Rows: [][]any{
				{"id", "type", "payload", "status", "claimedBy", "claimedAt", "lastError", "updatedAt", "attempts"},
				{"job-1", "email", `{}`, "pending", "", "", "", "", "0"},
			}},
		},
	}
}

// TestEndToEndSetStatusOverTheWire drives the real program against the real store talking
// HTTP to the Sheets emulator: open, filter, mark three rows, set status, confirm, and the
// emulator's cells hold the new values.
func TestEndToEndSetStatusOverTheWire(t *testing.T) {
	emu := emulator.New()
	emu.AddWorkbook(e2eWorkbook())
	tm := startE2E(t, emu)

	// Filter to the new ones (newest first: id-7, id-5, id-3 (blank = new), id-2, id-0) and
	// mark the first three.
	setFirstThreeNewToDone(t, tm)

	want := map[string]string{"id-0": "new", "id-1": "read", "id-2": "new", "id-3": "done", "id-4": "done", "id-5": "done", "id-6": "spam", "id-7": "done"}
	waitStatuses(t, emu, want, false)
	if n := emu.Count("spreadsheets.batchUpdate"); n != 1 {
		t.Errorf("three rows should be one write (one Apply → one batchUpdate), got %d batchUpdates", n)
	}

	// Undo puts them back, again over the wire.
	tm.Send(press("u"))
	waitScreen(t, tm, "[y/N]")
	tm.Type("y")
	waitScreen(t, tm, "undone on Inbox: 3 rows restored (status back to new or (empty))")
	cells := emu.Cells("e2e-sheet", "Inbox")
	if got := model.CellString(cells[4][4]); got != "" {
		t.Errorf("undo restores id-3's blank status, got %q", got)
	}
	if got := model.CellString(cells[6][4]); got != "new" {
		t.Errorf("undo restores id-5's status, got %q", got)
	}

	tm.Send(press("q"))
	fm := finalModel(t, tm)
	if ts := fm.tabs.current(); ts == nil || ts.filter.query != "status:new" || len(ts.visible) != 5 {
		t.Errorf("final model: filter %q with %d rows", ts.filter.query, len(ts.visible))
	}
}

// waitStatuses waits until the emulator's Inbox holds want (ID → status), failing with what
// it holds if the test ends first; exact also requires no other row.
func waitStatuses(t *testing.T, emu *emulator.Emulator, want map[string]string, exact bool) {
	t.Helper()
	var got map[string]string
	ok := testbed.Until(t, func() bool {
		got = map[string]string{}
		for _, row := range emu.Cells("e2e-sheet", "Inbox")[1:] {
			got[model.CellString(row[5])] = model.CellString(row[4])
		}
		for id, st := range want {
			if got[id] != st {
				return false
			}
		}
		return !exact || len(got) == len(want)
	})
	if !ok {
		t.Fatalf("emulator statuses = %v, want %v", got, want)
	}
}

// e2eStore is a real sheets.Store on the spreadsheet id that the Sheets API at url serves
// (an emulator behind httptest), with the default tabs; set adjusts its options.
func e2eStore(t *testing.T, url, id string, set ...func(*sheets.Options)) *sheets.Store {
	t.Helper()
	svc, err := sheetsapi.NewService(context.Background(), option.WithEndpoint(url+"/"), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	var tabs []model.TabConfig
	for _, r := range model.Roles {
		tabs = append(tabs, model.DefaultTabConfig(r))
	}
	o := sheets.Options{SpreadsheetID: id, Tabs: tabs}
	for _, f := range set {
		f(&o)
	}
	return sheets.New(context.Background(), svc, o)
}

// startE2E runs the real program, 80x24, against the real store talking HTTP to emu (which
// holds e2eWorkbook), and waits for its first screen.
func startE2E(t *testing.T, emu *emulator.Emulator) *teatest.TestModel {
	t.Helper()
	srv := httptest.NewServer(emu)
	t.Cleanup(srv.Close)
	store := e2eStore(t, srv.URL, "e2e-sheet")
	tm := teatest.NewTestModel(t, probed{New(Options{Store: store, SpreadsheetID: "e2e-sheet"})},
		teatest.WithInitialTermSize(80, 24),
		teatest.WithProgramOptions(
			tea.WithColorProfile(colorprofile.TrueColor),
			tea.WithEnvironment([]string{"TERM=xterm-256color"}),
		),
	)
	waitScreen(t, tm, "Acme Support")
	return tm
}

// The toast tells what the sheet holds, even when another editor sorts the Inbox and inserts
// a row in the instant between the store's check and its write: the write lands on other
// rows, is put back and written again, and the toast says "3 set to done" only once the
// three rows with those IDs hold it; no other row changed.
func TestEndToEndSetStatusWhileRowsMove(t *testing.T) {
	emu := emulator.New()
	emu.AddWorkbook(e2eWorkbook())
	var once sync.Once
	emu.SetHook(func(r emulator.Request) {
		if r.Method != emulator.MethodBatchUpdate {
			return
		}
		once.Do(func() {
			if err := emu.SortRows("e2e-sheet", "Inbox", 3, true); err != nil { // by Message, descending
				t.Error(err)
			}
			if err := emu.InsertRows("e2e-sheet", "Inbox", 2, [][]any{{"2025-06-01T09:00:00Z", "Late", "l@example.com", "Hi", "new", "id-late"}}); err != nil {
				t.Error(err)
			}
		})
	})
	defer emu.SetHook(nil)

	tm := startE2E(t, emu)
	setFirstThreeNewToDone(t, tm)

	want := map[string]string{"id-0": "new", "id-1": "read", "id-2": "new", "id-3": "done", "id-4": "done", "id-5": "done",
		"id-6": "spam", "id-7": "done", "id-late": "new"}
	waitStatuses(t, emu, want, true)
	if n := emu.Count(emulator.MethodBatchUpdate); n < 2 {
		t.Errorf("%d batchUpdates: the moved write was not repaired (did the rows move?)", n)
	}
	tm.Send(press("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(hangAfter))
}

// setFirstThreeNewToDone filters to the new rows, marks the first three, sets their status to
// done, confirms, and waits for the toast that says the three are written.
func setFirstThreeNewToDone(t *testing.T, tm *teatest.TestModel) {
	t.Helper()
	tm.Type("/status:new")
	tm.Send(press("enter"))
	tm.Send(press("space"))
	tm.Send(press("space"))
	tm.Send(press("space"))
	tm.Send(press("s"))
	waitScreen(t, tm, "Set status of 3 rows")
	tm.Type("4") // done
	waitScreen(t, tm, "[y/N]")
	tm.Type("y")
	waitScreen(t, tm, "3 set to done")
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
