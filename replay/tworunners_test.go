package replay_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/replay"
	"github.com/triage-dev/triage/replay/receiver"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
)

// Two runs of the same rows at once (a person and cron, each with its own store, as two
// processes would be): while the first is sending (its first call held at the receiver),
// the second leases nothing, sends nothing, and says whose the rows are; it ends 0. Each key
// reaches the receiver once. Once the first has ended (and released its rows), a third run
// finds nothing left to send.
func TestTwoRunnersNeverSendARowTwice(t *testing.T) {
	const n = 12
	rcv := receiver.New()
	gate := testbed.NewGate()
	srv := serve(t, gate.Wrap(rcv))
	grid := [][]any{anyRow(dlHeader)}
	for _, r := range keyRows(n, "crm", srv.URL+"/crm/hook") {
		grid = append(grid, anyRow(r.cells()))
	}
	tb := testbed.NewSheets(t, &emulator.Workbook{SpreadsheetID: stormID, Title: "Two", TimeZone: "Etc/UTC",
		Sheets: []*emulator.Sheet{{Title: stormTab, Rows: grid}}})
	storeOf := func(who string) *sheets.Store {
		return tb.Store(sheets.Options{SpreadsheetID: stormID, Tabs: []model.TabConfig{dlConfig}, Actor: who})
	}
	ops, cron := storeOf("ops"), storeOf("cron")
	crm := &replay.Source{Name: "crm", URLPrefixes: []string{srv.URL + "/crm/"}}
	c := fastClient(crm)

	tabOps := loadDeadLetters(t, ops)
	tabCron := loadDeadLetters(t, cron) // both loaded before either leased: both see every row dead
	gate.Hold()
	first := make(chan model.ReplaySummary)
	go func() {
		first <- replay.Run(context.Background(), c, ops, tabOps, records(tabOps), replay.RunOptions{FlushInterval: time.Hour})
	}()
	<-gate.Arrived() // the first run's first call is at the receiver: its rows are leased

	done := make(chan model.ReplaySummary, 1)
	go func() {
		done <- replay.Run(context.Background(), c, cron, tabCron, records(tabCron), replay.RunOptions{FlushInterval: time.Hour})
	}()
	// The first run has one call in flight (its source's probe) and makes no other until it
	// is answered: a call arriving now is the second run's, sending a row the first holds.
	var second model.ReplaySummary
	select {
	case second = <-done:
	case <-gate.Arrived():
		t.Errorf("the second run sent a call while the first held every row")
		gate.Release()
		second = <-done
	}
	gate.Release()
	sum1 := <-first

	if got := sum1.Counts[model.StateDelivered]; got != n || sum1.ExitCode() != 0 {
		t.Errorf("first run: %v, exit %d", sum1.Counts, sum1.ExitCode())
	}
	if got := second.Counts[model.StateSkipped]; got != n {
		t.Errorf("second run: %v, want all %d skipped", second.Counts, n)
	}
	if second.ExitCode() != 0 {
		t.Errorf("second run exits %d: skipping rows another run is sending is not a failure", second.ExitCode())
	}
	if len(second.Held) != 1 || len(second.Held[0].IDs) != n || !strings.Contains(second.Held[0].String(), "rows are being replayed by ops@") {
		t.Errorf("second run's held rows: %v", second.Held)
	}
	for _, rf := range second.Refused {
		if !strings.Contains(rf.Reason, "being replayed by ops@") {
			t.Errorf("row %d skipped because %q", rf.Row, rf.Reason)
		}
	}
	for key, as := range attemptsByKey(rcv) {
		if len(as) != 1 {
			t.Errorf("%s reached the receiver %d times", key, len(as))
		}
	}
	if got := len(attemptsByKey(rcv)); got != n {
		t.Errorf("%d keys reached the receiver, want %d", got, n)
	}

	// The first run released its rows: nothing is held, and nothing is left to send.
	tab := loadDeadLetters(t, cron)
	third := replay.Run(context.Background(), c, cron, tab, records(tab), replay.RunOptions{FlushInterval: time.Hour})
	if len(third.Held) != 0 || len(third.Rows) != 0 {
		t.Errorf("third run: held %v, rows %v", third.Held, third.Rows)
	}
	for _, m := range tb.Emu.DeveloperMetadata(stormID) {
		if m.Key == "triage.l" || m.Key == "triage.run" {
			t.Errorf("a lease left after every run ended: %+v", m)
		}
	}
}
