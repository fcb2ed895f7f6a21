package replay_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/replay"
	"github.com/triage-dev/triage/replay/receiver"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
)

// A replay of 100 dead letters whose write-back meets Google's quota (5 requests a minute
// here) over and over: every quota answer is waited out within the command's budget, so every
// outcome lands and every call was sent once, with its key; a rerun has nothing to send.
func TestReplayWriteBackRidesOutTheSheetsQuota(t *testing.T) {
	const n = 100
	rcv := receiver.New()
	srv := serve(t, rcv)
	rows := keyRows(n, "crm", srv.URL+"/hook")
	grid := [][]any{anyRow(dlHeader)}
	for _, r := range rows {
		grid = append(grid, gridRow(r.cells()))
	}
	wb := &emulator.Workbook{SpreadsheetID: "replay-quota", Title: "Replay", Sheets: []*emulator.Sheet{{Title: e2eTab, Rows: grid, RowCount: len(grid) + 10}}}
	clk := testbed.NewClock()
	emu := emulator.New()
	emu.AddWorkbook(wb)
	emu.SetClock(clk.Now)
	emu.SetQuotaPerMinute(5)
	api := testbed.Serve(t, emu)
	var answered atomic.Int64
	pacer := &sheets.Pacer{PerMinute: -1, Now: clk.Now, Sleep: clk.Sleep, OnWait: func(w sheets.QuotaWait) {
		if w.Answered {
			answered.Add(1)
		}
	}}
	conn, err := sheets.ConnectWithDrive(t.Context(), sheets.AuthOptions{Endpoint: api.URL, Pacer: pacer})
	if err != nil {
		t.Fatal(err)
	}
	st := sheets.New(t.Context(), conn.Sheets, sheets.Options{SpreadsheetID: wb.SpreadsheetID, Tabs: []model.TabConfig{dlConfig}, HTTPClient: conn.HTTP,
		Retry: sheets.RetryPolicy{Sleep: clk.Sleep}})
	ctx := sheets.WithQuotaBudget(t.Context(), time.Hour)
	load := func() *model.Table {
		t.Helper()
		wb, err := st.Load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return wb.Tab(model.RoleDeadLetter)
	}
	tab := load()
	c := fastClient(&replay.Source{Name: "crm", URLPrefixes: []string{srv.URL}, MaxAttempts: 2})
	sum := replay.Run(ctx, c, st, tab, records(tab), replay.RunOptions{Concurrency: 8, FlushEvery: 10, FlushInterval: time.Hour})
	if sum.Halted != nil || len(sum.WriteErrors) != 0 || len(sum.WriteConflicts) != 0 {
		t.Fatalf("halted %v, write errors %v, conflicts %v", sum.Halted, sum.WriteErrors, sum.WriteConflicts)
	}
	if answered.Load() < 3 {
		t.Fatalf("the quota was reached %d times: the test proves little", answered.Load())
	}
	effects := rcv.Effects()
	for i := range n {
		k := fmt.Sprintf("k-%d", i)
		if got := effects[k]; got != 1 {
			t.Errorf("%s acted on %d times", k, got)
		}
	}
	if a := len(rcv.Attempts()); a != n {
		t.Errorf("%d attempts for %d calls: a call was sent again", a, n)
	}
	tab = load()
	jobs, _ := replay.Plan(tab, records(tab), c.Sources, time.Now(), false)
	if len(jobs) != 0 {
		t.Errorf("%d rows to send again: their outcomes did not land", len(jobs))
	}
	t.Logf("%d quota answers waited out", answered.Load())
}
