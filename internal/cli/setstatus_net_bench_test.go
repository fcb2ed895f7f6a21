package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/triage-dev/triage/internal/netshape"
	"github.com/triage-dev/triage/postgres"
	"github.com/triage-dev/triage/postgres/pgtest"
	"github.com/triage-dev/triage/sheets/emulator"
)

// BenchmarkSetStatus1000SheetVsDatabase is `triage set-status` of 1,000 IDs of a 10,000-row
// inbox, the whole command (settings, connecting, reading, the write), on the sheet (the
// emulator over HTTP) and on a database holding the same rows, alternately in one run, each
// through the same shaped network (internal/netshape: 0, 2 and 20 ms round trips). It
// reports each side's ms and round trips per command and x-db (database ÷ sheet), the claim.
func BenchmarkSetStatus1000SheetVsDatabase(b *testing.B) {
	for _, rtt := range []time.Duration{0, 2 * time.Millisecond, 20 * time.Millisecond} {
		b.Run(fmt.Sprintf("rtt=%v", rtt), func(b *testing.B) { benchSetStatus(b, rtt) })
	}
}

func benchSetStatus(b *testing.B, rtt time.Duration) {
	ctx := context.Background()
	rows := benchInboxRows(10_000)
	emu := emulator.New()
	emu.AddWorkbook(&emulator.Workbook{SpreadsheetID: "set10k", Title: "set10k", TimeZone: "Etc/UTC", Sheets: []*emulator.Sheet{{Title: "Inbox", Rows: rows}}})
	srv := httptest.NewServer(emu)
	b.Cleanup(srv.Close)
	sheetWire := &netshape.Shaper{RTT: rtt}
	emuAddr, stop, err := netshape.Start(sheetWire, srv.Listener.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(stop)

	db := pgtest.DB(b)
	if _, err := postgres.Migrate(ctx, db); err != nil {
		b.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	var ids []string
	copyRows := make([][]any, 0, len(rows)-1)
	for _, r := range rows[1:] {
		cells := make([]any, 6)
		for i, v := range r[:6] {
			cells[i] = fmt.Sprint(v)
		}
		copyRows = append(copyRows, cells)
		if len(ids) < 1000 {
			ids = append(ids, fmt.Sprint(r[5]))
		}
	}
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"inbox"}, []string{"timestamp", "name", "email", "message", "status", "id"}, pgx.CopyFromRows(copyRows)); err != nil {
		b.Fatal(err)
	}
	dbWire := &netshape.Shaper{RTT: rtt}
	dbURL := pgtest.Through(b, db, dbWire)

	dir := b.TempDir()
	vars := map[string]string{"SHEETS_EMULATOR_HOST": emuAddr, "XDG_CONFIG_HOME": dir, "XDG_STATE_HOME": dir, "HOME": dir}
	var errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: &errb, getenv: func(k string) string { return vars[k] }}
	statuses := []string{"read", "done"}
	setStatus := func(where []string, wire *netshape.Shaper, i int) (time.Duration, int64) {
		args := append(append(append([]string{}, where...), "set-status", "--tab", "Inbox", "--status", statuses[i%2]), ids...)
		errb.Reset()
		trips := wire.RoundTrips()
		start := time.Now()
		if code := run(ctx, args, e); code != exitOK {
			b.Fatalf("%v: exit %d\n%s", where, code, errb.String())
		}
		return time.Since(start), wire.RoundTrips() - trips
	}
	sheet := []string{"--spreadsheet", "set10k"}
	database := []string{"--database-url", dbURL}
	var sheetTime, dbTime time.Duration
	var sheetTrips, dbTrips int64
	for i := 0; b.Loop(); i++ {
		d, n := setStatus(sheet, sheetWire, i)
		sheetTime, sheetTrips = sheetTime+d, sheetTrips+n
		d, n = setStatus(database, dbWire, i)
		dbTime, dbTrips = dbTime+d, dbTrips+n
	}
	n := float64(b.N)
	b.ReportMetric(float64(sheetTime.Milliseconds())/n, "ms-sheet/op")
	b.ReportMetric(float64(dbTime.Milliseconds())/n, "ms-db/op")
	b.ReportMetric(float64(sheetTrips)/n, "trips-sheet/op")
	b.ReportMetric(float64(dbTrips)/n, "trips-db/op")
	b.ReportMetric(float64(dbTime)/float64(sheetTime), "x-db")
}
