package cli

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/triage-dev/triage/sheets/emulator"
)

// Two `triage replay --all` at once (a person at a terminal and cron): the one that comes
// second, while the first holds the rows (it has leased them and is about to check and send),
// sends nothing, says whose the rows are, and exits 0; every key reaches the receiver once.
func TestTwoReplaysAtOnceSendEachRowOnce(t *testing.T) {
	const n = 8
	f := newReplayFixture(t, func(f *replayFixture) []dl {
		var rows []dl
		for i := range n {
			rows = append(rows, dl{"crm", f.crmURL, fmt.Sprintf(`{"n":%d}`, i), fmt.Sprintf("k-%d", i), "dead"})
		}
		return rows
	})
	var writes, fired atomic.Int32
	var second replayRun
	var doc replayJSON
	f.emu.SetHook(func(r emulator.Request) {
		if r.Method != "spreadsheets.batchUpdate" || writes.Add(1) != 2 || !fired.CompareAndSwap(0, 1) {
			return
		}
		// The first run's leases have landed (its first write); its check is about to go.
		second, doc = f.runJSON(exitOK, "--all", "--json")
	})
	first := f.runCtx("--all")
	f.emu.SetHook(nil)
	if fired.Load() == 0 {
		t.Fatal("the second run never started")
	}
	if first.code != exitOK {
		t.Fatalf("first run: exit %d\n%s", first.code, first.stderr)
	}
	if !strings.Contains(second.stderr, fmt.Sprintf("%d rows are being replayed by ", n)) {
		t.Errorf("the second run doesn't say whose the rows are:\n%s", second.stderr)
	}
	if len(doc.Held) != 1 || len(doc.Held[0].IDs) != n || doc.Counts["skipped"] != n || doc.Counts["delivered"] != 0 {
		t.Errorf("second run's document: held %+v, counts %v", doc.Held, doc.Counts)
	}
	for key, times := range f.crm.Effects() {
		if times != 1 {
			t.Errorf("%s acted on %d times", key, times)
		}
	}
	if got := len(f.crm.Effects()); got != n {
		t.Errorf("%d keys acted on, want %d", got, n)
	}
}
