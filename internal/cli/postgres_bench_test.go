package cli

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/postgres"
	"github.com/triage-dev/triage/postgres/pgtest"
	"github.com/triage-dev/triage/tui"
)

// BenchmarkFirstScreenOf1M: the TUI's first screen on a database of 1,000,000 failed_calls
// rows of which 10,000 are open, as `triage` gets there: open the store (its schema check),
// load the open work and prepare it for display (tui.Prepare: the table's rows, sort keys and
// filter text). MB-heap is the live heap holding the prepared workbook.
func BenchmarkFirstScreenOf1M(b *testing.B) {
	ctx := context.Background()
	url := pgtest.DB(b)
	if _, err := postgres.Migrate(ctx, url); err != nil {
		b.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `
INSERT INTO failed_calls ("timestamp", source, url, payload, error, attempts, method, "key", status)
SELECT to_char(timestamp '2026-01-01' + g * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), 'crm',
       'https://example.com/hook', '{"order":' || g || ',"note":"a payload of a usual size, some forty bytes"}',
       CASE WHEN g % 100 = 0 THEN '503 from crm' ELSE '' END, '1', 'POST', 'k-' || g,
       CASE WHEN g % 100 = 0 THEN 'dead' ELSE 'delivered' END
FROM generate_series(1, 1000000) g`); err != nil {
		b.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "VACUUM ANALYZE failed_calls"); err != nil {
		b.Fatal(err)
	}
	var p *tui.Prepared
	var total time.Duration
	for b.Loop() {
		start := time.Now()
		st, err := postgres.Open(ctx, url, postgres.Options{})
		if err != nil {
			b.Fatal(err)
		}
		wb, err := st.Load(ctx)
		p = tui.Prepare(wb, err)
		total += time.Since(start)
		st.Close()
		if p.Workbook() == nil || len(p.Workbook().Tab(model.RoleDeadLetter).Records) != 10_000 {
			b.Fatal("not the open work")
		}
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "MB-heap")
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/first-screen")
	runtime.KeepAlive(p)
}
