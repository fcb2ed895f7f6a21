package tui

import (
	"sync"
	"testing"

	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/triage-dev/triage/sheets/emulator"
)

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

	want := map[string]string{"id-0": "new", "id-1": "read", "id-2": "new", "id-3": "done", "id-4": "done", "id-5": "done",
		"id-6": "spam", "id-7": "done", "id-late": "new"}
	waitStatuses(t, emu, want, true)
	if n := emu.Count(emulator.MethodBatchUpdate); n < 2 {
		t.Errorf("%d batchUpdates: the moved write was not repaired (did the rows move?)", n)
	}
	tm.Send(press("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(hangAfter))
}
