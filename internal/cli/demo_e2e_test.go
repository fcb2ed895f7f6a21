package cli

import (
	"sort"
	"testing"

	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/tui"
)

// TestDemoEndToEnd opens `triage demo` as a person would (the embedded workbook, served by
// the in-process emulator, through the real store over HTTP), filters to new messages,
// marks three, sets them to read, and checks the emulator's cells.
func TestDemoEndToEnd(t *testing.T) {
	ctx := t.Context()
	st, emu, stop, err := startDemo(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()

	// The three newest new messages with an ID are the ones the marks will land on.
	wb, err := st.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	inbox := wb.Tab(model.RoleInbox)
	var fresh []model.Record
	for _, r := range inbox.Records {
		if r.Status == "new" {
			fresh = append(fresh, r)
		}
	}
	sort.SliceStable(fresh, func(i, j int) bool { return fresh[i].Time.After(fresh[j].Time) })
	want := map[string]bool{}
	for _, r := range fresh[:3] {
		if r.ID == "" {
			t.Fatal("demo's newest new messages should have IDs")
		}
		want[r.ID] = true
	}

	m := tui.New(tui.Options{Store: st, SpreadsheetID: "demo", KeyMap: tui.DefaultKeyMap()})
	tm := testbed.StartProgram(t, m, 80, 24)
	tm.WaitScreen(t, "Acme Studio")
	tm.Type("/status:new")
	tm.Keys("enter")
	for i := 0; i < 3; i++ {
		tm.Keys("space")
	}
	// The picker and the confirm open inside Update, so the keys need no waits between them;
	// only the write is asynchronous, and its result is read from the emulator below.
	tm.Keys("s", "2", "y") // set status, read, confirm

	if !testbed.Until(t, func() bool {
		got := map[string]string{}
		for _, row := range emu.Cells("demo", "Inbox")[1:] {
			if len(row) > 5 {
				got[model.CellString(row[5])] = model.CellString(row[4])
			}
		}
		for id := range want {
			if got[id] != "read" {
				return false
			}
		}
		return true
	}) {
		t.Fatalf("emulator does not hold the new statuses for %v", want)
	}
	// Nothing else changed: exactly the three marked rows moved from new to read.
	after, err := st.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	before, now := inbox.Counts(), after.Tab(model.RoleInbox).Counts()
	if now["new"] != before["new"]-3 || now["read"] != before["read"]+3 {
		t.Errorf("counts before %v after %v", before, now)
	}
	tm.Type("q")
	tm.Finished(t)
}

// TestDemoReplayEndToEnd replays three marked contact-form rows of the demo through the
// whole production wiring (the TUI, replay.Runner, replay.Run, the apps-script receiver over
// loopback HTTP, write-back through the store to the emulator): the three rows end
// delivered, and the receiver appended exactly three messages to the Inbox.
func TestDemoReplayEndToEnd(t *testing.T) {
	ctx := t.Context()
	st, emu, rp, stop, err := startDemoReplay(ctx, false, func(string) string { return "" }, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	count := func() (inbox, delivered int) {
		wb, err := st.Load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range wb.Tab(model.RoleDeadLetter).Records {
			if r.Status == model.StatusDelivered && wb.Tab(model.RoleDeadLetter).Get(&r, model.FSource) == "contact-form" {
				delivered++
			}
		}
		return len(wb.Tab(model.RoleInbox).Records), delivered
	}
	inbox0, delivered0 := count()

	m := tui.New(tui.Options{Store: st, SpreadsheetID: "demo", KeyMap: tui.DefaultKeyMap(), Replayer: rp})
	tm := testbed.StartProgram(t, m, 100, 30)
	tm.WaitScreen(t, "Acme Studio")
	// Tab switch, filter, marks, replay and confirm all happen inside Update, in order.
	tm.Type("2")
	tm.Type("/source:contact-form !status:delivered !status:discarded")
	tm.Keys("enter")
	for i := 0; i < 3; i++ {
		tm.Keys("space")
	}
	tm.Keys("R", "y") // replay the marked rows, confirm

	var inbox, delivered int
	if !testbed.Until(t, func() bool {
		inbox, delivered = count()
		return delivered == delivered0+3 && inbox == inbox0+3
	}) {
		t.Fatalf("after the replay: %d contact-form rows delivered (was %d), %d inbox messages (was %d); want +3 each",
			delivered, delivered0, inbox, inbox0)
	}
	for _, o := range emu.ValueInputOptions() {
		if o != "RAW" {
			t.Errorf("a write used %s", o)
		}
	}
	tm.Keys("ctrl+c")
	tm.Keys("ctrl+c")
	tm.Finished(t)
}
