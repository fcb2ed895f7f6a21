package cli

import (
	"fmt"
	"strings"
	"testing"

	"github.com/triage-dev/triage/sheets/emulator"
)

// `triage set-status` of 1,000 IDs on a 10,000-row tab with a Status dropdown, the dead-letter
// and queue tabs missing: the tab is read once, and the command sends its metadata and
// dropdown, that read, the write, and (as it exits) the deletion of the write's journal sheet:
// four requests, none for a missing tab (it was 6 before the journal's deletion).
func TestSetStatusReadsOnce(t *testing.T) {
	rows := [][]any{{"Timestamp", "Name", "Email", "Message", "Status", "ID"}}
	for i := 1; i <= 10_000; i++ {
		rows = append(rows, []any{45000 + float64(i)/24, fmt.Sprint("Person ", i), "p@x", "hi", "new", fmt.Sprint("m", i)})
	}
	emu, url := startEmu(t, &emulator.Workbook{SpreadsheetID: "s1", Title: "Test", Sheets: []*emulator.Sheet{
		{Title: "Inbox", Rows: rows, Validations: map[string][]string{"E": {"new", "read", "done"}}},
	}})
	c := newCLI(t, url)
	c.env["TRIAGE_SPREADSHEET"] = "s1"
	args := []string{"set-status", "--tab", "Inbox", "--status", "done"}
	for i := range 1000 {
		args = append(args, fmt.Sprint("m", 1+i*10))
	}
	emu.ResetCounts()
	if r := c.run(args...); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	counts := emu.Counts()
	if counts[emulator.MethodValuesBatchGet] != 1 || counts[emulator.MethodGet] != 1 || counts[emulator.MethodBatchUpdate] != 2 || len(counts) != 3 {
		t.Errorf("set-status sent %v; want one spreadsheets.get (the tab's metadata and dropdown), one values.batchGet, "+
			"two spreadsheets.batchUpdate (the write, then the journal's deletion)", counts)
	}
	for _, r := range emu.Requests() {
		for _, tab := range []string{"failed_calls", "Jobs"} {
			if strings.Contains(r.RawQuery, tab) || strings.Contains(r.Path, tab) {
				t.Errorf("a request for the missing tab %s: %s?%s", tab, r.Path, r.RawQuery)
			}
		}
	}
	if got := cell(t, emu, "Inbox", 9992, 4); got != "done" {
		t.Errorf("m9991 (row 9992) status %q, want done", got)
	}
}
