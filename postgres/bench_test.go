package postgres_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/triage-dev/triage/model"
	"github.com/triage-dev/triage/postgres"
)

// bigDB makes a database with total failed_calls rows of which open are dead (the rest
// delivered), inserted by the server itself.
func bigDB(b *testing.B, total, open int) (string, *pgx.Conn) {
	b.Helper()
	url, conn := pgDBB(b)
	step := total / open
	if _, err := conn.Exec(context.Background(), `
INSERT INTO failed_calls ("timestamp", source, url, payload, error, attempts, method, "key", status)
SELECT to_char(timestamp '2026-01-01' + g * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), 'crm',
       'https://example.com/hook', '{"order":' || g || ',"note":"a payload of a usual size, some forty bytes"}',
       CASE WHEN g % $2 = 0 THEN '503 from crm' ELSE '' END, '1', 'POST', 'k-' || g,
       CASE WHEN g % $2 = 0 THEN 'dead' ELSE 'delivered' END
FROM generate_series(1, $1::int) g`, total, step); err != nil {
		b.Fatal(err)
	}
	if _, err := conn.Exec(context.Background(), "VACUUM ANALYZE failed_calls"); err != nil {
		b.Fatal(err)
	}
	return url, conn
}

// benchRows is the size of BenchmarkOf1M's table.
var benchRows = 1_000_000

// BenchmarkOf1M: 1,000,000 failed_calls rows of which 10,000 are open.
//   - LoadOpen: the TUI's first load (the open work); heap-MB is the live heap holding the
//     loaded workbook.
//   - HistoryDelivered: the newest 1,000 delivered calls (`status:delivered`), in SQL.
//   - HistoryDay: the calls of one day (86,400 rows, every status), in SQL, capped at 10,000.
func BenchmarkOf1M(b *testing.B) {
	url, _ := bigDB(b, benchRows, 10_000)
	st, err := postgres.Open(context.Background(), url, postgres.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	b.Run("LoadOpen", func(b *testing.B) {
		var wb *model.Workbook
		for b.Loop() {
			if wb, err = st.Load(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
		if n := len(wb.Tab(model.RoleDeadLetter).Records); n != 10_000 {
			b.Fatalf("%d open rows", n)
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b.ReportMetric(float64(ms.HeapAlloc)/1e6, "heap-MB")
		runtime.KeepAlive(wb)
	})
	history := func(q postgres.HistoryQuery, want int) func(b *testing.B) {
		return func(b *testing.B) {
			for b.Loop() {
				tab, err := st.History(context.Background(), q)
				if err != nil {
					b.Fatal(err)
				}
				if len(tab.Records) != want {
					b.Fatalf("%d rows, want %d", len(tab.Records), want)
				}
			}
		}
	}
	b.Run("HistoryDelivered", history(postgres.HistoryQuery{Role: model.RoleDeadLetter, Statuses: []string{"delivered"}, Limit: 1000}, 1000))
	b.Run("HistoryDay", history(postgres.HistoryQuery{Role: model.RoleDeadLetter,
		From: time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 1, 4, 0, 0, 0, 0, time.UTC)}, 10_000))
}

// BenchmarkNotifyLatency: from another connection's UPDATE (its commit) to the watcher's
// notice.
func BenchmarkNotifyLatency(b *testing.B) {
	url, conn := pgDBB(b)
	insert(b, conn, model.RoleInbox, seed()[model.RoleInbox])
	st, err := postgres.Open(context.Background(), url, postgres.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	changes, err := st.Watch(ctx)
	if err != nil {
		b.Fatal(err)
	}
	var total time.Duration
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		if _, err := conn.Exec(ctx, "UPDATE inbox SET status = $1 WHERE id = 'm1'", fmt.Sprint("s", i)); err != nil {
			b.Fatal(err)
		}
		<-changes
		total += time.Since(start)
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N), "µs/notice")
}

// BenchmarkWriteBack1000: a replay's write-back of 1,000 outcomes (status, attempts, error,
// replayed_at) in one Apply; statements/1000 counts every statement sent, BEGIN and COMMIT
// included.
func BenchmarkWriteBack1000(b *testing.B) {
	url, _ := bigDB(b, 100_000, 10_000)
	c := &counter{}
	st := openTracedStore(b, url, postgres.Options{}, c)
	wb, err := st.Load(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	tab := wb.Tab(model.RoleDeadLetter)
	var statements int64
	for i := 0; b.Loop(); i++ {
		edits := make([]model.Edit, 1000)
		for j := range edits {
			r := &tab.Records[(i*1000+j)%len(tab.Records)]
			edits[j] = model.Edit{Tab: tab.Config.Name, ID: r.ID,
				Expect: map[model.Field]string{model.FAttempts: tab.Get(r, model.FAttempts)},
				Set: map[model.Field]string{model.FAttempts: fmt.Sprint(i + 2), model.FError: "", model.FStatus: "dead",
					model.FReplayedAt: model.FormatTime(time.Unix(int64(i), 0))}}
			r.Cells[tab.Header.Col(model.FAttempts)] = fmt.Sprint(i + 2)
		}
		before := c.n.Load()
		res, err := st.Apply(context.Background(), edits)
		if err != nil || len(res.Applied) != 1000 {
			b.Fatalf("%d applied, %d conflicts: %v", len(res.Applied), len(res.Conflicts), err)
		}
		statements += c.n.Load() - before
	}
	b.ReportMetric(float64(statements)/float64(b.N), "statements/1000")
}

// BenchmarkImport100k: `triage migrate`'s copy of a 100,000-row failed_calls tab (decoded as
// the sheet store decodes it) into an empty table and, in the same iteration, the reference: a
// plain COPY of the same 100,000 rows straight into failed_calls of another empty database
// (what `psql \copy` does: the same indexes and trigger, no staging, no conflict check).
// Metrics: rows/s of each and their ratio (x-copy).
func BenchmarkImport100k(b *testing.B) {
	rows := [][]any{toAny(schemaHeaders(model.RoleDeadLetter))}
	for i := range 100_000 {
		rows = append(rows, []any{"2026-02-02T09:00:00Z", "crm", "https://example.com/hook", fmt.Sprintf(`{"order":%d}`, i), "503", "1", "POST", fmt.Sprint("k-", i), "dead", "", "", ""})
	}
	tab, err := model.Decode(model.DefaultTabConfig(model.RoleDeadLetter), rows, time.UTC)
	if err != nil {
		b.Fatal(err)
	}
	cols := []string{"timestamp", "source", "url", "payload", "error", "attempts", "method", "key", "status"}
	plain := make([][]any, 0, 100_000)
	for _, r := range rows[1:] {
		plain = append(plain, r[:len(cols)])
	}
	var elapsed, copyElapsed time.Duration
	for b.Loop() {
		b.StopTimer()
		url, _ := pgDBB(b)
		st, err := postgres.Open(context.Background(), url, postgres.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		rep, err := st.Import(context.Background(), tab, nil)
		elapsed += time.Since(start)
		b.StopTimer()
		st.Close()
		if err != nil || rep.Added != 100_000 {
			b.Fatal(rep, err)
		}
		_, conn := pgDBB(b)
		start = time.Now()
		n, err := conn.CopyFrom(context.Background(), pgx.Identifier{"failed_calls"}, cols, pgx.CopyFromRows(plain))
		copyElapsed += time.Since(start)
		if err != nil || n != 100_000 {
			b.Fatal(n, err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(100_000*b.N)/elapsed.Seconds(), "rows/s")
	b.ReportMetric(float64(100_000*b.N)/copyElapsed.Seconds(), "copy-rows/s")
	b.ReportMetric(elapsed.Seconds()/copyElapsed.Seconds(), "x-copy")
}
