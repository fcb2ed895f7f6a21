package cli

import (
	"context"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/sheets/emulator"
	"github.com/triage-dev/triage/tui"
)

// TestDemoReplayEndToEnd replays three marked contact-form rows of the demo through the
// whole production wiring (the TUI, replay.Runner, replay.Run, the apps-script receiver over
// loopback HTTP, write-back through the store to the emulator): the three rows end
// delivered, and the receiver appended exactly three messages to the Inbox.
func TestDemoReplayEndToEnd(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
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
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	for i := 0; i < 3; i++ {
		tm.Send(tea.KeyPressMsg{Code: tea.KeySpace, Text: " "})
	}
	tm.Keys("R", "y") // replay the marked rows, confirm

	var inbox, delivered int
	if !emulator.Poll(20*time.Second, func() bool {
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
	tm.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	tm.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	tm.WaitFinished(t, teatest.WithFinalTimeout(testbed.Wait))
}
