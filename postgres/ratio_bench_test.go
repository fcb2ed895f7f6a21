package postgres_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/triage-dev/triage/internal/netshape"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/postgres"
	"github.com/triage-dev/triage/postgres/pgtest"
	"github.com/triage-dev/triage/sheets"
	"github.com/triage-dev/triage/sheets/emulator"
)

// BenchmarkWriteBackSheetVsPostgres is a replay's write-back of 1,000 outcomes in one Apply,
// on the same 10,000 dead letters, side by side in one run, alternately, over a network
// shaped by a proxy (internal/netshape: 0, 2 and 20 ms round trips): the postgres store; its
// reference, a pgx.Batch of the same 1,000 conditional UPDATEs in one transaction (BEGIN, the
// batch, COMMIT), on its own copy of the rows; and the sheet store on the emulator over HTTP
// as triage talks to Google (streaming reads, the journal). It also loads the tab on both
// stores. It reports each side's ms per op and the ratios, the claims: x-batch (postgres ÷
// the batch) and x-write (postgres ÷ sheet); the absolute times are this machine's.
func BenchmarkWriteBackSheetVsPostgres(b *testing.B) {
	for _, rtt := range []time.Duration{0, 2 * time.Millisecond, 20 * time.Millisecond} {
		b.Run(fmt.Sprintf("rtt=%v", rtt), func(b *testing.B) { benchWriteBack(b, rtt) })
	}
}

func benchWriteBack(b *testing.B, rtt time.Duration) {
	ctx := context.Background()
	url, _ := bigDB(b, 10_000, 10_000)
	refURL, _ := bigDB(b, 10_000, 10_000)
	pg, err := postgres.Open(ctx, pgtest.Through(b, url, &netshape.Shaper{RTT: rtt}), postgres.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer pg.Close()
	ref, err := pgx.Connect(ctx, pgtest.Through(b, refURL, &netshape.Shaper{RTT: rtt}))
	if err != nil {
		b.Fatal(err)
	}
	defer ref.Close(ctx)
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
	srv := httptest.NewServer(emu)
	defer srv.Close()
	addr, stop, err := netshape.Start(&netshape.Shaper{RTT: rtt}, srv.Listener.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer stop()
	conn, err := sheets.ConnectWithDrive(ctx, sheets.AuthOptions{Endpoint: "http://" + addr})
	if err != nil {
		b.Fatal(err)
	}
	sh := sheets.New(ctx, conn.Sheets, sheets.Options{SpreadsheetID: "ratio", Tabs: []model.TabConfig{tab.Config}, HTTPClient: conn.HTTP})
	defer sh.Close(ctx)

	type store interface {
		Load(context.Context) (*model.Workbook, error)
		Apply(context.Context, []model.Edit) (model.ApplyResult, error)
	}
	// Each side keeps its own attempts count, so every edit expects what that side holds.
	attempts := map[string]map[string]int{"sheet": {}, "postgres": {}, "batch": {}}
	outcomes := func(name string, i int) []model.Edit {
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
		return edits
	}
	writeBack := func(name string, st store, i int) time.Duration {
		edits := outcomes(name, i)
		start := time.Now()
		res, err := st.Apply(ctx, edits)
		d := time.Since(start)
		if err != nil || len(res.Applied) != 1000 {
			b.Fatalf("%s: %d applied, %d conflicts: %v", name, len(res.Applied), len(res.Conflicts), err)
		}
		return d
	}
	// The reference: what a hand-written client that knows the rows' keys would send, the
	// same conditional UPDATEs pipelined in one batch, in one transaction.
	batch := func(i int) time.Duration {
		edits := outcomes("batch", i)
		start := time.Now()
		tx, err := ref.Begin(ctx)
		if err != nil {
			b.Fatal(err)
		}
		bt := &pgx.Batch{}
		for _, e := range edits {
			bt.Queue(`UPDATE failed_calls SET attempts = $1, error = $2, status = $3, replayed_at = $4, triaged_by = $5, triaged_at = $6
WHERE "key" = $7 AND attempts = $8`, e.Set[model.FAttempts], e.Set[model.FError], e.Set[model.FStatus], e.Set[model.FReplayedAt],
				"bench", "2026-03-01T12:00:00Z", e.ID, e.Expect[model.FAttempts])
		}
		br := tx.SendBatch(ctx, bt)
		for range edits {
			tag, err := br.Exec()
			if err != nil || tag.RowsAffected() != 1 {
				b.Fatalf("batch: %v (%d rows)", err, tag.RowsAffected())
			}
		}
		if err := br.Close(); err != nil {
			b.Fatal(err)
		}
		if err := tx.Commit(ctx); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
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
	var pgWrite, shWrite, batchWrite, pgLoad, shLoad time.Duration
	for i := 0; b.Loop(); i++ {
		pgWrite += writeBack("postgres", pg, i)
		batchWrite += batch(i)
		shWrite += writeBack("sheet", sh, i)
		pgLoad += load(pg)
		shLoad += load(sh)
	}
	n := float64(b.N)
	b.ReportMetric(float64(shWrite.Milliseconds())/n, "ms-sheet-write/op")
	b.ReportMetric(float64(pgWrite.Milliseconds())/n, "ms-pg-write/op")
	b.ReportMetric(float64(batchWrite.Milliseconds())/n, "ms-batch-write/op")
	b.ReportMetric(float64(pgWrite)/float64(batchWrite), "x-batch")
	b.ReportMetric(float64(pgWrite)/float64(shWrite), "x-write")
	b.ReportMetric(float64(shLoad.Milliseconds())/n, "ms-sheet-load/op")
	b.ReportMetric(float64(pgLoad.Milliseconds())/n, "ms-pg-load/op")
	b.ReportMetric(float64(pgLoad)/float64(shLoad), "x-load")
}
