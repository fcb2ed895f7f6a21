package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/triage-dev/triage/internal/testbed"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/postgres"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
)

// BenchmarkWriteBackSheetVsPostgres is the two stores side by side in one run, alternately,
// on the same 10,000 dead letters: a replay's write-back of 1,000 outcomes in one Apply, and
// the first load of the tab. The sheet store talks to the emulator over loopback HTTP as
// triage does (streaming reads, the journal); the postgres store to the package's private
// server. It reports each side's ms per op and the ratios (postgres ÷ sheet), the claim;
// the absolute times are this machine's and no network's.
func BenchmarkWriteBackSheetVsPostgres(b *testing.B) {
	ctx := context.Background()
	url, _ := bigDB(b, 10_000, 10_000)
	pg, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer pg.Close()
	wb, err := pg.Load(ctx)
	if err != nil {
		b.Fatal(err)
	}
	tab := wb.Tab(model.RoleDeadLetter)
	rows := [][]any{toAny(tab.Header.Headers)}
	for _, r := range tab.Records {
		rows = append(rows, toAny(r.Cells))
	}
	emu := emulator.New()
	emu.AddWorkbook(&emulator.Workbook{SpreadsheetID: "ratio", Title: "ratio", Sheets: []*emulator.Sheet{{Title: tab.Config.Name, Rows: rows}}})
	srv := testbed.Serve(b, emu)
	conn, err := sheets.ConnectWithDrive(ctx, sheets.AuthOptions{Endpoint: srv.URL})
	if err != nil {
		b.Fatal(err)
	}
	sh := sheets.New(ctx, conn.Sheets, sheets.Options{SpreadsheetID: "ratio", Tabs: []model.TabConfig{tab.Config}, HTTPClient: conn.HTTP})
	defer sh.Close(ctx)

	type store interface {
		Load(context.Context) (*model.Workbook, error)
		Apply(context.Context, []model.Edit) (model.ApplyResult, error)
	}
	// Each side keeps its own attempts count, so every edit expects what that store holds.
	attempts := map[string]map[string]int{"sheet": {}, "postgres": {}}
	writeBack := func(name string, st store, i int) time.Duration {
		edits := make([]model.Edit, 1000)
		for j := range edits {
			r := &tab.Records[(i*1000+j)%len(tab.Records)]
			n := attempts[name][r.ID]
			expect := tab.Get(r, model.FAttempts)
			if n > 0 {
				expect = fmt.Sprint(n)
			}
			edits[j] = model.Edit{Tab: tab.Config.Name, ID: r.ID,
				Expect: map[model.Field]string{model.FAttempts: expect},
				Set: map[model.Field]string{model.FAttempts: fmt.Sprint(n + 100), model.FError: "", model.FStatus: "dead",
					model.FReplayedAt: model.FormatTime(time.Unix(int64(i), 0))}}
			attempts[name][r.ID] = n + 100
		}
		start := time.Now()
		res, err := st.Apply(ctx, edits)
		d := time.Since(start)
		if err != nil || len(res.Applied) != 1000 {
			b.Fatalf("%s: %d applied, %d conflicts: %v", name, len(res.Applied), len(res.Conflicts), err)
		}
		return d
	}
	load := func(st store) time.Duration {
		start := time.Now()
		wb, err := st.Load(ctx)
		d := time.Since(start)
		if err != nil || len(wb.Tab(model.RoleDeadLetter).Records) != 10_000 {
			b.Fatalf("load: %v", err)
		}
		return d
	}
	load(sh)
	load(pg)
	var pgWrite, shWrite, pgLoad, shLoad time.Duration
	for i := 0; b.Loop(); i++ {
		pgWrite += writeBack("postgres", pg, i)
		shWrite += writeBack("sheet", sh, i)
		pgLoad += load(pg)
		shLoad += load(sh)
	}
	n := float64(b.N)
	b.ReportMetric(float64(shWrite.Milliseconds())/n, "ms-sheet-write/op")
	b.ReportMetric(float64(pgWrite.Milliseconds())/n, "ms-pg-write/op")
	b.ReportMetric(float64(pgWrite)/float64(shWrite), "x-write")
	b.ReportMetric(float64(shLoad.Milliseconds())/n, "ms-sheet-load/op")
	b.ReportMetric(float64(pgLoad.Milliseconds())/n, "ms-pg-load/op")
	b.ReportMetric(float64(pgLoad)/float64(shLoad), "x-load")
}
