package cli

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/triage-dev/triage/postgres"
	"github.com/triage-dev/triage/postgres/pgtest"
	"github.com/triage-dev/triage/sheets/emulator"
)

// BenchmarkMigrate is `triage migrate` of a failed_calls tab of 20,000 dead letters
// (TRIAGE_MIGRATE_ROWS: another number, e.g. 1000000), the whole command: settings, reading
// the tab from the emulator over HTTP as from Google, deciding the keys, the import, and the
// proof (every row read back and compared). Its reference, in the same iteration: a plain
// COPY of the same rows into failed_calls of another empty database, what `psql \copy` does
// (the same indexes, no staging, no conflict check, no sheet to read). It reports both as
// rows/s and x-copy (migrate ÷ the COPY), the claim.
func BenchmarkMigrate(b *testing.B) {
	n := 20_000
	if s := os.Getenv("TRIAGE_MIGRATE_ROWS"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	ctx := context.Background()
	header := []any{"timestamp", "source", "url", "payload", "error", "attempts", "method", "key", "status"}
	sheetRows := [][]any{header}
	copyRows := make([][]any, 0, n)
	for i := range n {
		row := []any{
			fmt.Sprintf("2026-01-%02dT%02d:%02d:%02dZ", 1+i%28, i%24, i%60, i%60), "crm", "https://example.com/hook",
			fmt.Sprintf(`{"order":%d,"note":"a payload of a usual size, some forty bytes"}`, i), "503 from crm", "1", "POST",
			"k-" + strconv.Itoa(i), "dead",
		}
		sheetRows = append(sheetRows, row)
		copyRows = append(copyRows, row)
	}
	emu := emulator.New()
	emu.AddWorkbook(&emulator.Workbook{SpreadsheetID: "mig", Title: "mig", TimeZone: "Etc/UTC", Sheets: []*emulator.Sheet{{Title: "failed_calls", Rows: sheetRows, ColumnCount: len(header)}}})
	srv := httptest.NewServer(emu)
	b.Cleanup(srv.Close)
	dir := b.TempDir()
	vars := map[string]string{"SHEETS_EMULATOR_HOST": strings.TrimPrefix(srv.URL, "http://"), "XDG_CONFIG_HOME": dir, "XDG_STATE_HOME": dir, "HOME": dir}
	var out, errb strings.Builder
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: io.Discard, getenv: func(k string) string { return vars[k] }}
	fresh := func() string {
		url := pgtest.DB(b)
		if _, err := postgres.Migrate(ctx, url); err != nil {
			b.Fatal(err)
		}
		return url
	}
	cols := make([]string, len(header))
	for i, h := range header {
		cols[i] = h.(string)
	}
	var migrate, plain time.Duration
	for b.Loop() {
		db, ref := fresh(), fresh()
		out.Reset()
		errb.Reset()
		start := time.Now()
		if code := run(ctx, []string{"--spreadsheet", "mig", "migrate", "--to", db}, e); code != exitOK {
			b.Fatalf("migrate: exit %d\n%s", code, out.String())
		}
		migrate += time.Since(start)
		if !strings.Contains(out.String(), fmt.Sprintf("verified: %d of %d rows", n, n)) {
			b.Fatalf("migrate: %s", out.String())
		}
		conn, err := pgx.Connect(ctx, ref)
		if err != nil {
			b.Fatal(err)
		}
		start = time.Now()
		if _, err := conn.CopyFrom(ctx, pgx.Identifier{"failed_calls"}, cols, pgx.CopyFromRows(copyRows)); err != nil {
			b.Fatal(err)
		}
		plain += time.Since(start)
		conn.Close(ctx)
	}
	rows := float64(n) * float64(b.N)
	b.ReportMetric(rows/migrate.Seconds(), "rows/s-migrate")
	b.ReportMetric(rows/plain.Seconds(), "rows/s-copy")
	b.ReportMetric(float64(migrate)/float64(plain), "x-copy")
}
