package replay_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/replay"
	"github.com/triage-dev/triage/replay/receiver"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
)

// A sheet that never stops moving under the write-back: once the rows are checked and the
// first calls sent, a blank row is inserted at the top of the tab before every write, so every
// write of every round lands one row off. No write-back can be proven, and restores can't
// settle. The run must still end soon, say what it could not decide, and leave nothing
// unreported:
//   - it stops sending after the first write-back the store could not finish (every row not
//     yet sent is "not attempted", saying why), and the whole run costs a bounded number of
//     Sheets writes;
//   - no key cell changed, no row reads delivered unless the receiver accepted its key, none
//     reads rejected unless the receiver rejected it;
//   - a value of ours left on a row it was not meant for (an inserted blank row, or another
//     fixture row) is reported as damage under its column and value, and a damage sheet
//     lists it;
//   - the exit code is 1, and a run right after, with the sheet quiet, sends nothing while
//     the damage sheet stands.
func TestWriteBackUnderAnInsertStormEndsAndReportsWhatItLeft(t *testing.T) {
	const n = 150
	rcv := receiver.New()
	rejected := map[string]bool{}
	for i := 0; i < n; i += 3 {
		rejected[fmt.Sprintf("k-%d", i)] = true
	}
	rcv.Rule = func(key string, _ int) (receiver.Fault, bool) {
		if rejected[key] {
			return receiver.Fault{Mode: receiver.Status, Status: http.StatusGone}, true
		}
		return receiver.Fault{}, false
	}
	srv := serve(t, rcv)
	grid := [][]any{anyRow(dlHeader)}
	byPayload := map[string]string{} // payload → key
	for _, r := range keyRows(n, "crm", srv.URL+"/crm/hook") {
		grid = append(grid, anyRow(r.cells()))
		byPayload[r.payload] = r.key
	}
	tb := testbed.NewSheets(t, &emulator.Workbook{SpreadsheetID: stormID, Title: "Storm", TimeZone: "Etc/UTC",
		Sheets: []*emulator.Sheet{{Title: stormTab, Rows: grid, RowCount: len(grid) + 20}}})
	// The pause between restore rounds is the store's retry sleep: a no-op here, so only
	// the rounds count.
	sh := &stormSheet{emu: tb.Emu, tc: dlConfig, store: tb.Store(sheets.Options{SpreadsheetID: stormID, Tabs: []model.TabConfig{dlConfig},
		Retry: sheets.RetryPolicy{Sleep: func(context.Context, time.Duration) error { return nil }}})}
	tab := sh.load(t)

	var mu sync.Mutex
	writes, inserted := 0, 0
	sh.emu.SetHook(func(r emulator.Request) {
		if r.Method != "spreadsheets.batchUpdate" {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		writes++
		if writes == 1 {
			return // the check before the first send: the storm starts after it
		}
		inserted++
		if err := sh.emu.InsertRows(stormID, stormTab, 2, [][]any{{}}); err != nil {
			t.Error(err)
		}
	})
	crm := &replay.Source{Name: "crm", URLPrefixes: []string{srv.URL + "/crm/"}, Concurrency: 1}
	c := fastClient(crm)
	sum := replay.Run(context.Background(), c, sh.store, tab, records(tab), replay.RunOptions{FlushEvery: 10, FlushInterval: time.Hour})
	sh.emu.SetHook(nil)
	t.Logf("run: %v; %d not attempted; %d Sheets writes, %d rows inserted; %d write errors", sum.Counts, len(sum.NotAttempted), writes, inserted, len(sum.WriteErrors))

	if got := sum.ExitCode(); got != 1 {
		t.Errorf("exit code %d, want 1", got)
	}
	if len(sum.NotAttempted) == 0 {
		t.Errorf("every row was sent although no write-back could be recorded")
	}
	for _, rr := range sum.Rows {
		if rr.State == model.StateNotAttempted && !strings.Contains(rr.Detail, "kept moving under triage's write-back") {
			t.Errorf("row %s not sent, saying %q: want the reason", rr.ID, rr.Detail)
			break
		}
	}
	// The check, one write-back the store gave up on, and the flush of the calls in flight
	// when it did (the writer is one goroutine: at most one more): each at most its rounds
	// (6 that write, 40 that only restore) and its damage sheet.
	if bound := 1 + 2*(6+40+1); writes > bound {
		t.Errorf("%d Sheets writes, want at most %d: the run did not stop", writes, bound)
	}

	effects := rcv.Effects()
	cells := sh.emu.Cells(stormID, stormTab)
	header := cells[0]
	col := func(name string) int {
		for i, h := range header {
			if model.CellString(h) == name {
				return i
			}
		}
		t.Fatalf("no column %s", name)
		return -1
	}
	at := func(row []any, c int) string {
		if c < len(row) {
			return model.CellString(row[c])
		}
		return ""
	}
	cPayload, cKey, cStatus := col("payload"), col("key"), col("status")
	reported := strings.Join(sum.WriteErrors, "\n")
	damaged := func(column, value string) bool {
		return strings.Contains(reported, fmt.Sprintf("%q may still hold %q", column, value))
	}
	seen := 0
	for r, row := range cells[1:] {
		p := at(row, cPayload)
		key, ours := byPayload[p]
		if !ours {
			for c := range row {
				if v := at(row, c); v != "" && !damaged(model.CellString(header[c]), v) {
					t.Errorf("inserted row %d holds %q in %s, and no damage names it", r+2, v, header[c])
				}
			}
			continue
		}
		seen++
		if got := at(row, cKey); got != key {
			t.Errorf("row %d (%s): key cell reads %q", r+2, key, got)
		}
		switch st := at(row, cStatus); {
		case st == "delivered" && (effects[key] == 0 || rejected[key]) && !damaged("status", st):
			t.Errorf("row %d (%s) reads delivered, but the receiver never accepted it, and no damage names it", r+2, key)
		case st == "rejected" && !rejected[key] && !damaged("status", st):
			t.Errorf("row %d (%s) reads rejected, but the receiver accepted it, and no damage names it", r+2, key)
		}
	}
	if seen != n {
		t.Errorf("%d fixture rows on the sheet, want %d", seen, n)
	}
	var damageSheets int
	for _, sheet := range sh.emu.Workbook(stormID).Sheets {
		if strings.HasPrefix(sheet.Title, "triage: check "+stormTab) {
			damageSheets++
		}
	}
	if len(sum.WriteErrors) > 0 && damageSheets == 0 {
		t.Errorf("damage reported, but no damage sheet lists it")
	}

	// The sheet is quiet now, but cells of ours may still be where they were not meant: until
	// a person has looked (the damage sheet deleted), nothing is sent from this tab.
	if damageSheets > 0 {
		before := len(rcv.Attempts())
		tab = sh.load(t)
		sum2 := replay.Run(context.Background(), c, sh.store, tab, records(tab), replay.RunOptions{FlushInterval: time.Hour})
		if got := len(rcv.Attempts()); got != before {
			t.Errorf("the run after the storm sent %d calls while the damage sheet stands", got-before)
		}
		if sum2.ExitCode() != 1 {
			t.Errorf("the run after the storm exits %d, want 1", sum2.ExitCode())
		}
	}
}
