package cli

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/triage-dev/triage/sheets/emulator"
)

// A set-status whose write fails (refused, or on the network) still prints its one --json
// document: the rows it was to change, each not written or of unknown outcome, the error, and
// the exit code the README gives a connection or access error (2, apart from 1, "rows not
// done"), which the process exits with too.
func TestFailedWriteStillPrintsTheDocument(t *testing.T) {
	for _, c := range []struct {
		name   string
		fault  emulator.Fault
		listed string
	}{
		// An answer: the write was not done.
		{"refused", emulator.Fault{Method: emulator.MethodBatchUpdate, Status: 403, Message: "The caller does not have permission", Times: 20}, "not_written"},
		// No answer: done or not, the store can't tell (its journal shows it).
		{"answer lost", emulator.Fault{Method: emulator.MethodBatchUpdate, Drop: true, Times: 20}, "unknown"},
	} {
		t.Run(c.name, func(t *testing.T) {
			emu, url := startEmu(t, smallWorkbook())
			cl := newCLI(t, url)
			emu.InjectFault(c.fault)
			r := cl.run("--spreadsheet", "s1", "set-status", "--json", "--tab", "Inbox", "--status", "read", "m1", "m4")
			var doc map[string]any
			if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
				t.Fatalf("exit %d, no JSON document on stdout (%v):\n%s\n%s", r.code, err, r.stdout, r.stderr)
			}
			var ids []string
			for _, v := range doc[c.listed].([]any) {
				ids = append(ids, v.(string))
			}
			if r.code != exitUsage || doc["exit_code"] != float64(exitUsage) || !slices.Equal(ids, []string{"m1", "m4"}) || doc["error"] == "" {
				t.Fatalf("exit %d; document %v\n%s", r.code, doc, r.stderr)
			}
		})
	}
}
